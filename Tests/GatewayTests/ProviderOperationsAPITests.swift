import Foundation
import GatewayCore
import HummingbirdTesting
import Testing

@testable import gateway

/// `GET /v1/admin/providers` shows the optional operations each sandbox provider offers, as its plugin implements
/// them less what its configuration withholds, and the API refuses the ones it does not offer before the vendor.
@Suite("Provider operations over the API")
struct ProviderOperationsAPITests {
    static let config = """
        sandbox: true
        routing:
          default: [twilio]
        """

    func withGateway(_ body: @Sendable (any TestClientProtocol, GatewayRuntime) async throws -> Void) async throws {
        let harness = GatewayHarness()
        let (app, runtime) = try await buildApplication(harness.options(config: Self.config))
        try await app.test(.router) { client in try await body(client, runtime) }
    }

    @Test("each sandbox provider lists the operations its plugin offers")
    func listed() async throws {
        try await withGateway { client, _ in
            let answer = try await client.call(.get, "/v1/admin/providers")
            #expect(answer.status == .ok)
            let providers = try #require(answer.body["providers"] as? [[String: Any]])
            var operations: [String: [String]] = [:]
            for provider in providers {
                let id = try #require(provider["id"] as? String)
                let offered = try #require(provider["operations"] as? [String])
                operations[id] = offered
                #expect(provider["supports_resend"] as? Bool == offered.contains("resend"), "\(id)")
                #expect(provider["supports_cancel"] as? Bool == offered.contains("cancel"), "\(id)")
                #expect(provider["supports_status"] as? Bool == offered.contains("status"), "\(id)")
                #expect(provider["accepts_callbacks"] as? Bool == offered.contains("callbacks"), "\(id)")
                #expect(
                    ((provider["actions"] as? [String]) ?? []).isEmpty != offered.contains("actions"),
                    "\(id): actions listed only with the operation")
            }
            #expect(operations["twilio"] == ["resend", "cancel", "status", "callbacks"])
            #expect(operations["sinch"] == ["resend", "status", "callbacks", "actions"])
            #expect(operations["firebase"] == ["resend"])
            #expect(operations["idaas"] == ["resend", "challenge", "actions"])
            // The sandbox runs Vonage Verify v2, which has no status call, with a signature secret.
            #expect(operations["vonage"] == ["resend", "cancel", "callbacks"])
            #expect(operations["telnyx"] == ["resend", "status", "callbacks"])
        }
    }

    @Test("an action a provider does not offer is not_found, and a provider without actions has none")
    func actions() async throws {
        try await withGateway { client, _ in
            let none = try await client.call(
                .post, "/v1/providers/twilio/actions/report", json: #"{"input": {}}"#)
            #expect(none.status == .notFound && none.body.errorCode == "not_found")
            let unknown = try await client.call(
                .post, "/v1/providers/sinch/actions/no_such_action", json: #"{"input": {}}"#)
            #expect(unknown.status == .notFound && unknown.body.errorCode == "not_found")
        }
    }
}
