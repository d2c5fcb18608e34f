import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import gateway

@Suite("The factors API's refusals")
struct FactorsAPITests {
    @Test(
        "a provider that keeps no device factors, or none by that name, is 404 on every factors route",
        arguments: ["firebase", "sinch", "vonage", "idaas", "nobody"])
    func providerWithoutFactors(_ provider: String) async throws {
        try await GatewayHarness().run { client, _ in
            let calls: [(HTTPRequest.Method, String, String?)] = [
                (.get, "/v1/factors?identity=user-0001&provider=\(provider)", nil),
                (.get, "/v1/factors/YF0123456789abcdef0123456789abcdef?identity=user-0001&provider=\(provider)", nil),
                (
                    .delete, "/v1/factors/YF0123456789abcdef0123456789abcdef?identity=user-0001&provider=\(provider)",
                    nil
                ),
                (.post, "/v1/factors/access-tokens", #"{"identity": "user-0001", "provider": "\#(provider)"}"#),
            ]
            for (method, uri, json) in calls {
                let result = try await client.call(method, uri, json: json)
                #expect(result.status == .notFound, "\(method) \(uri)")
                #expect(result.body.errorCode == "not_found", "\(method) \(uri)")
            }
        }
    }

    @Test("the sandbox's Twilio keeps factors: an unknown identity lists none, an unknown factor is 404")
    func twilioKeepsFactors() async throws {
        try await GatewayHarness().run { client, _ in
            let list = try await client.call(.get, "/v1/factors?identity=user-0001&provider=twilio")
            #expect(list.status == .ok)
            #expect((list.body["factors"] as? [Any])?.isEmpty == true)
            let one = try await client.call(.get, "/v1/factors/YF0123456789abcdef0123456789abcdef?identity=user-0001")
            #expect(one.status == .notFound)
            let missing = try await client.call(.get, "/v1/factors")
            #expect(missing.status == .badRequest)
            #expect(missing.body.errorCode == "invalid_request")
        }
    }
}
