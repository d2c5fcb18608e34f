import Foundation
import GatewayCore
import Testing

@Suite("Destination")
struct DestinationTests {
    @Test("phone channels need a phone number; email and push do not", arguments: Channel.allCases)
    func needsPhoneNumber(_ channel: Channel) {
        let phoneChannels: Set<Channel> = [.sms, .voice, .whatsapp, .flashcall, .silentAuth]
        #expect(channel.needsPhoneNumber == phoneChannels.contains(channel))
    }

    @Test("phone channels parse `to` as an E.164 number", arguments: [Channel.sms, .voice, .whatsapp, .flashcall])
    func phoneChannels(_ channel: Channel) throws {
        let destination = try Destination.parse("+1 (650) 555-3434", for: channel)
        #expect(destination == .phone(try PhoneNumber(parsing: "+16505553434")))
        #expect(destination.value == "+16505553434")
        #expect(destination.masked == "+1650*****34")
        #expect(destination.phoneNumber?.e164 == "+16505553434")
    }

    @Test("phone channels refuse what is not a phone number", arguments: [Channel.sms, .voice, .whatsapp, .flashcall])
    func phoneChannelsRefuseEmail(_ channel: Channel) {
        expectGatewayError(.invalidPhoneNumber) { () throws(GatewayError) in
            try Destination.parse("ana@example.com", for: channel)
        }
    }

    @Test(
        "the email channel accepts plain addresses",
        arguments: ["ana@example.com", "first.last+tag@mail.example.co.uk", "a@b.io", "x_y-z@sub-domain.example.org"])
    func validEmail(_ address: String) throws {
        let destination = try Destination.parse(address, for: .email)
        #expect(destination == .email(address))
        #expect(destination.value == address)
        #expect(destination.phoneNumber == nil)
    }

    @Test(
        "the email channel refuses what is not an email address",
        arguments: [
            "", "ana", "ana@", "@example.com", "ana@example", "ana@.example.com", "ana@example.com.",
            "ana@@example.com", "ana@b@example.com", "ana @example.com", "ana@exa mple.com", " ana@example.com",
            "ana@example.com\n", "+16505553434",
            String(repeating: "a", count: 243) + "@example.com",  // 255 characters
        ])
    func invalidEmail(_ address: String) {
        expectGatewayError(.invalidRequest) { () throws(GatewayError) in
            try Destination.parse(address, for: .email)
        }
    }

    @Test("an email address of 254 characters is accepted")
    func longestEmail() throws {
        let address = String(repeating: "a", count: 242) + "@example.com"
        #expect(address.count == 254)
        #expect(try Destination.parse(address, for: .email) == .email(address))
    }

    @Test(
        "push takes a user identity of 8 to 64 ASCII letters, digits and dashes",
        arguments: [
            "user-123", "0123456789abcdef", "ABCDEFGH", String(repeating: "a", count: 64),
            "a1b2-c3d4-e5f6",
        ])
    func validIdentity(_ identity: String) throws {
        let destination = try Destination.parse(identity, for: .push)
        #expect(destination == .identity(identity))
        #expect(destination.value == identity)
    }

    @Test(
        "push refuses identities that are too short, too long or carry other characters",
        arguments: [
            "", "user-12", String(repeating: "a", count: 65), "user_1234", "user 1234", "usér-1234",
            "user.1234", "user@example.com", "+16505553434", "ｕｓｅｒ１２３４",
        ])
    func invalidIdentity(_ identity: String) {
        expectGatewayError(.invalidRequest) { () throws(GatewayError) in
            try Destination.parse(identity, for: .push)
        }
    }

    @Test("masked values hide personal data")
    func masking() {
        #expect(Destination.email("ana.maria@example.com").masked == "a***@example.com")
        #expect(Destination.email("not-an-address").masked == "***")
        #expect(Destination.identity("user-123456").masked == "use***")
    }

    @Test("every kind of destination survives a JSON round trip")
    func codableRoundTrip() throws {
        let destinations: [Destination] = [
            .phone(try PhoneNumber(parsing: "+16505553434")), .email("ana@example.com"), .identity("user-1234"),
        ]
        let data = try JSONEncoder().encode(destinations)
        #expect(try JSONDecoder().decode([Destination].self, from: data) == destinations)
    }
}
