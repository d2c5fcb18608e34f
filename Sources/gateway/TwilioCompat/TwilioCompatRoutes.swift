import Foundation
import GatewayCore
import HTTPTypes
import Hummingbird

/// The Twilio Verify–compatible front door: Twilio's verification routes under ``prefix``, so a Twilio
/// client whose Verify base URL is `<gateway>/twilio` reaches `/twilio/v2/…` (docs/twilio-compat.md).
enum TwilioCompatRoutes {
    /// The path prefix (the group below is registered with the same, without its slash).
    static let prefix = "/twilio"

    /// Registers the facade's routes, their Twilio error shape and their HTTP Basic authentication.
    static func add(
        to router: RecordingRouter<GatewayRequestContext>, settings: TwilioCompatSettings,
        native: VerificationsController, keyring: APIKeyring, keyStore: (any APIKeyStore)?, routes: RouteTable,
        publicBaseURL: URL?
    ) {
        let group = router.group("twilio")
            .add(middleware: TwilioCompatErrorMiddleware(routes: routes))
            .add(middleware: TwilioCompatAuthMiddleware(settings: settings, keyring: keyring, store: keyStore))
        TwilioCompatController(
            service: native.service, settings: settings, native: native, publicBaseURL: publicBaseURL
        ).addRoutes(to: group)
    }

    /// Whether `path` is under the facade's prefix (its errors, even for paths no route serves, are Twilio's).
    static func owns(_ path: String) -> Bool {
        path.hasPrefix(prefix + "/") || path == prefix
    }
}
