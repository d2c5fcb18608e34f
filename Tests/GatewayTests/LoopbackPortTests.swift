import Foundation
import GatewayTestSupport
import Testing

@Suite("Loopback ports for live servers")
struct LoopbackPortTests {
    @Test("ports come from below the ephemeral range, are distinct and can be bound")
    func outsideTheEphemeralRange() throws {
        let text = try String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)
        let bounds = text.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        let ephemeral = try #require(bounds.first)...(try #require(bounds.last))
        let ports = try (0..<50).map { _ in try LoopbackPort.next() }
        #expect(Set(ports).count == ports.count)
        for port in ports {
            #expect(!ephemeral.contains(port), "\(port) is in \(ephemeral)")
        }
        // Still free: nothing holds a port after handing it out.
        #expect(ports.allSatisfy { LoopbackPort.bindable($0) })
    }
}
