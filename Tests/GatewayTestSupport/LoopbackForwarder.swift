import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP forwarder from a free loopback port to another loopback port, that a test can stop like a server
/// that went down: from ``stop()`` on, its port refuses connections and the connections it carried are
/// closed. Blocking sockets on threads of their own, off the cooperative pool.
public final class LoopbackForwarder: Sendable {
    /// The port it listens on.
    public let port: Int
    private let listener: Int32
    /// Whether it stopped, the sockets of the connections it carries, and whether the listener is still open:
    /// every shutdown and close of a descriptor happens under this lock, once, so none reaches a descriptor
    /// number that was closed and then reused by someone else in the process.
    private let carried = Mutex<(stopped: Bool, sockets: [Int32], listening: Bool)>((false, [], true))

    /// Listens on a free loopback port and forwards each connection to `targetPort` on loopback, until ``stop()``.
    /// Throws when no port can be had.
    public init(to targetPort: Int) throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw Failure("socket() failed") }
        var address = Self.loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && listen(listener, 64) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        guard bound else {
            Glibc.close(listener)
            throw Failure("cannot listen on a loopback port")
        }
        self.listener = listener
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in accept(forwardingTo: targetPort) }
    }

    /// Stops listening and closes every connection it carried, both ends.
    public func stop() {
        // shutdown wakes the threads blocked in accept and read; each connection's threads close its sockets
        // (under the same lock, so no socket is shut here after it was closed and its number reused).
        carried.withLock { carried in
            guard !carried.stopped else { return }
            carried.stopped = true
            for socket in carried.sockets { shutdown(socket, Int32(SHUT_RDWR)) }
            if carried.listening { shutdown(listener, Int32(SHUT_RDWR)) }
        }
    }

    /// Closes a finished connection's sockets.
    fileprivate func close(_ sockets: (Int32, Int32)) {
        carried.withLock { carried in
            carried.sockets.removeAll { $0 == sockets.0 || $0 == sockets.1 }
            Glibc.close(sockets.0)
            Glibc.close(sockets.1)
        }
    }

    private func accept(forwardingTo targetPort: Int) {
        defer {
            carried.withLock { carried in
                carried.listening = false
                Glibc.close(listener)
            }
        }
        while true {
            let client = Glibc.accept(listener, nil, nil)
            guard client >= 0 else { return }
            let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var target = Self.loopback(port: targetPort)
            let connected = withUnsafePointer(to: &target) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                }
            }
            let kept =
                connected
                && carried.withLock { carried in
                    guard !carried.stopped else { return false }
                    carried.sockets += [client, upstream]
                    return true
                }
            guard kept else {
                Glibc.close(client)
                Glibc.close(upstream)
                continue
            }
            let pair = Pair(client, upstream, forwarder: self)
            Thread.detachNewThread { pair.pump(from: client, to: upstream) }
            Thread.detachNewThread { pair.pump(from: upstream, to: client) }
        }
    }

    /// One forwarded connection: its two sockets are closed when both directions have ended.
    private final class Pair: Sendable {
        let sockets: (Int32, Int32)
        let forwarder: LoopbackForwarder
        private let running = Mutex(2)

        init(_ first: Int32, _ second: Int32, forwarder: LoopbackForwarder) {
            sockets = (first, second)
            self.forwarder = forwarder
        }

        func pump(from source: Int32, to destination: Int32) {
            var buffer = [UInt8](repeating: 0, count: 16_384)
            copying: while true {
                let count = read(source, &buffer, buffer.count)
                guard count > 0 else { break }
                var written = 0
                while written < count {
                    let step = buffer[written..<count].withUnsafeBytes { write(destination, $0.baseAddress, $0.count) }
                    guard step > 0 else { break copying }
                    written += step
                }
            }
            // The other direction ends too: the peer of a closed connection sees it closed.
            shutdown(destination, Int32(SHUT_RDWR))
            shutdown(source, Int32(SHUT_RDWR))
            let last = running.withLock { running in
                running -= 1
                return running == 0
            }
            if last { forwarder.close(sockets) }
        }
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}
