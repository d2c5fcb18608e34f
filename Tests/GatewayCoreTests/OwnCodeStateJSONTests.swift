import Foundation
import Testing

@testable import GatewayCore

/// ``OwnCodeState``'s direct JSON is its `Codable` form: states stored before either way read back the same.
@Suite struct OwnCodeStateJSONTests {
    static let send = OwnCodeSend(
        provider: "twilio_messaging", messageID: "SM0123", sender: "+14155550100", locale: "en", encoding: .gsm7,
        segments: 1, status: .sent, sentAt: Date(timeIntervalSince1970: 1_800_000_123.456))

    static let states: [OwnCodeState] = [
        OwnCodeState(
            seed: "jkJR4QwIDho+8h6M/wr1DQ==", digest: "kYy0KcJMuGNJTA91kCz9tkjSms+1vGnWDMnQdrPs99M=",
            keyID: "wI6g2R4SV4s=", format: .standard, expiresAt: Date(timeIntervalSince1970: 1_800_000_723.5),
            sends: [send]),
        OwnCodeState(
            seed: "AAAA", digest: "BBBB", keyID: "CCCC", format: OwnCodeFormat(length: 8, alphabet: .alphanumeric),
            expiresAt: nil,
            sends: [
                send,
                OwnCodeSend(
                    provider: "vonage_sms", messageID: "m2", sender: "Acme", locale: "de", encoding: .ucs2,
                    segments: 2, status: .delivered, sentAt: nil),
            ],
            sealedCode: "c2VhbGVk"),
        OwnCodeState(seed: "", digest: "", keyID: "", format: .standard, expiresAt: nil, sends: []),
    ]

    @Test("the direct JSON equals the Codable JSON, and each reads the other back", arguments: 0..<3)
    func sameAsCodable(_ index: Int) throws {
        let state = Self.states[index]
        let codable = try JSONValue(encoding: state)
        #expect(state.json == codable)
        #expect(OwnCodeState(json: codable) == state)
        #expect(try ProviderState(ownCode: state).decode(OwnCodeState.self) == state)
        #expect(try ProviderState(state).ownCodeState == state)
    }

    @Test("another provider's state, or a damaged one, is no own-code state")
    func notOwnCode() {
        #expect(ProviderState.empty.ownCodeState == nil)
        let sinch: ProviderState = ["method": "sms", "reference": "vf_1"]
        #expect(sinch.ownCodeState == nil)
        var damaged = Self.states[0].json.objectValue ?? [:]
        damaged["format"] = .object(["length": .number(6.5), "alphabet": .string("digits")])
        #expect(OwnCodeState(json: .object(damaged)) == nil)
        damaged = Self.states[0].json.objectValue ?? [:]
        damaged["sends"] = .array([.object(["provider": .string("x")])])
        #expect(OwnCodeState(json: .object(damaged)) == nil)
    }
}
