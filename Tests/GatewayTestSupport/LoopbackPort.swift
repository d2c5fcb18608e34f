import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Loopback ports for servers a test starts on a port it must know before the server binds (a live gateway whose
/// sandbox URLs name its own port, a PostgreSQL cluster).
///
/// A port the kernel hands out for `bind(0)` comes from the ephemeral range, which is also where every outbound
/// connection takes its local port: between releasing such a port and the server binding it, any connection the
/// suite opens (to PostgreSQL, to an emulator) could take it, and the server's bind fails with `EADDRINUSE`. CI saw
/// that. So the ports here come from below the ephemeral range, which the kernel never hands out on its own; a
/// port is tried with a real bind before it is returned, and none is returned twice in one process.
public enum LoopbackPort {
    private static let handedOut = Mutex<Set<Int>>([])

    /// A loopback port nothing was bound to a moment ago, outside the kernel's ephemeral range.
    public static func next() throws -> Int {
        let range = candidates()
        for _ in 0..<2_000 {
            let port = Int.random(in: range)
            let fresh = handedOut.withLock { $0.insert(port).inserted }
            if fresh, bindable(port) { return port }
        }
        throw NoFreePort(range: range)
    }

    /// 10000 up to the ephemeral range's start (`/proc/sys/net/ipv4/ip_local_port_range`, 32768–60999 by
    /// default); above its end instead on a machine whose range starts low.
    static func candidates() -> ClosedRange<Int> {
        let text = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)) ?? ""
        let bounds = text.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        let (low, high) = bounds.count == 2 ? (bounds[0], bounds[1]) : (32_768, 60_999)
        if low > 12_000 { return 10_000...(low - 1) }
        return high < 63_000 ? (high + 1)...65_535 : 1_024...65_535
    }

    /// Whether a listening socket can take `port` now (no `SO_REUSEADDR`: a port in `TIME_WAIT` is skipped too).
    public static func bindable(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    /// Every port tried in `range` was taken or handed out already.
    public struct NoFreePort: Error, CustomStringConvertible {
        /// The ports tried.
        public let range: ClosedRange<Int>
        /// What the failure says in a test's output.
        public var description: String { "no free loopback port in \(range)" }
    }
}
