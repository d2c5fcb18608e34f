import Foundation
import Testing

@testable import gateway

#if canImport(Glibc)
    import Glibc
#endif

/// Requests the HTTP decoder refuses before routing still get the one error shape.
extension LiveServerTests {
    static let oversized: [String: String] = [
        "a 100 KB path": "GET /v1/phone-numbers/\(String(repeating: "1", count: 100_000)) HTTP/1.1\r\nHost: x\r\n\r\n",
        "a 100 KB header":
            "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "a", count: 100_000))\r\n\r\n",
        "40 headers of 1 KB": "GET /healthz HTTP/1.1\r\nHost: x\r\n"
            + (0..<40).map { "X-H\($0): \(String(repeating: "b", count: 1000))\r\n" }.joined() + "\r\n",
        "not HTTP": "NOT HTTP AT ALL\r\n\r\n",
    ]

    @Test(
        "an oversized URI or header answers 414 or 431 in the error shape",
        arguments: [("a 100 KB path", 414), ("a 100 KB header", 431), ("40 headers of 1 KB", 431), ("not HTTP", 400)])
    func decoderLimits(_ name: String, _ status: Int) async throws {
        let raw = try #require(Self.oversized[name])
        let (options, _) = try liveOptions()
        let (app, _) = try await buildApplication(options)
        try await withLiveServer(app, port: options.port) { _ in
            // A blocking socket, off the cooperative pool the server's handlers run on.
            let answer = try await withCheckedThrowingContinuation { continuation in
                Thread.detachNewThread {
                    continuation.resume(with: Result { try Self.exchange(raw, port: options.port) })
                }
            }
            let head = answer.prefix { $0 != "\r" }
            #expect(head.hasPrefix("HTTP/1.1 \(status) "), "\(head)")
            let body = try #require(answer.range(of: "\r\n\r\n").map { answer[$0.upperBound...] })
            let object = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]
            #expect(object?.errorCode == "invalid_request")
            #expect(object?.error?["request_id"] as? String != nil)
        }
    }

    /// Writes `raw` on a fresh connection and reads until the server closes it.
    static func exchange(_ raw: String, port: Int) throws -> String {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw PortError() }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw PortError() }
        // The server may answer and close before it has read everything: a failed send is fine.
        let bytes = Array(raw.utf8)
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count <= 0 { break }
            sent += count
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            received.append(contentsOf: buffer[..<count])
        }
        return String(decoding: received, as: UTF8.self)
    }
}
