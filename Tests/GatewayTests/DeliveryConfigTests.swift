import Foundation
import GatewayCore
import Testing

@testable import gateway

/// A route's `delivery: {deliver_within, failover}` (docs/routing.md, "Delivery failover"), read from the
/// configuration with every mistake at its line.
@Suite("Configuration: a route's delivery failover")
struct DeliveryConfigTests {
    @Test("a route of messaging providers reads its delivery settings; both default")
    func reads() throws {
        let (check, _) = try ConfigReaderTests.check(
            """
            sandbox: true
            routing:
              routes:
                - name: otp
                  match: {channels: [sms]}
                  providers: [twilio_messaging, vonage_sms, telnyx_messaging]
                  delivery: {deliver_within: 15s, failover: true}
                - name: otp-default
                  match: {countries: [GB]}
                  providers: [twilio_messaging, sinch_sms]
                  delivery: {}
            """)
        #expect(check.problems.byPosition().isEmpty, "\(check.problems.byPosition())")
        let rules = try #require(check.reading.configuration.routing?.rules)
        #expect(rules.first?.delivery == DeliveryPolicy(deliverWithin: 15, failover: true))
        #expect(rules.last?.delivery == DeliveryPolicy(deliverWithin: 20, failover: true))
    }

    @Test("every mistake of a route's delivery settings is a problem at its line")
    func problems() throws {
        let (check, _) = try ConfigReaderTests.check(
            """
            sandbox: true
            routing:
              routes:
                - name: a
                  match: {channels: [sms]}
                  providers: [twilio_messaging, vonage_sms]
                  delivery: {deliver_within: soon, failover: maybe, extra: 1}
                - name: b
                  match: {channels: [voice]}
                  providers: [twilio, twilio_messaging]
                  delivery: {deliver_within: 2h}
                - name: c
                  match: {channels: [whatsapp]}
                  providers: [twilio]
                  delivery: fast
            """)
        let problems = check.problems.byPosition()
        let messages = problems.map(\.message).joined(separator: "\n")
        for expected in [
            "route `a`: `delivery.deliver_within` must be a duration from 1s to 1h", "unknown key `extra`",
            "route `a`: `delivery.failover` must be true or false",
            "route `b`: `delivery.deliver_within` must be a duration from 1s to 1h",
            "route `b`: `delivery.failover` needs at least two providers that send the gateway's own codes",
            "route `c`: `delivery` must be a mapping",
        ] {
            #expect(messages.contains(expected), "\(expected) in:\n\(messages)")
        }
    }
}
