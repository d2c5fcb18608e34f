import Hummingbird
import Logging

/// The per-request context: Hummingbird's core storage plus the caller's API key and request id.
struct GatewayRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    /// Set by ``APIKeyMiddleware`` on `/v1` routes.
    var apiKey: APIKey?
    /// Set by ``APIKeyMiddleware`` instead of ``apiKey`` when a client secret authorized the request.
    var clientSecret: ClientSecretGrant?
    var requestID: String = ""
    /// The connection's peer address, for per-IP limits (nil in the socket-free test harness).
    let remoteAddress: String?

    init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress?.ipAddress
    }

    /// Request bodies above this size are refused with 413 before they are read.
    var maxUploadSize: Int { 64 * 1024 }
}
