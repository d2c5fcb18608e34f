import Foundation

/// A provider with vendor-only operations, offered through `POST /v1/providers/{id}/actions/{name}` (IDaaS
/// `refresh_id_token`, Sinch `report`). The API runs only an action named in ``actions``; any other name is
/// `not_found` before the provider is called.
public protocol ActionProvider: VerificationProvider {
    /// The operations this provider offers.
    var actions: [ProviderAction] { get }

    /// Runs one of ``actions``. Input and output are JSON objects, so the core never needs to know a vendor's
    /// types.
    func perform(action: String, input: [String: JSONValue]) async throws(GatewayError) -> [String: JSONValue]
}
