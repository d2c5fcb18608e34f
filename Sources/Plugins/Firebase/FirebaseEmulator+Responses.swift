import Foundation
import GatewayCore
import HTTPTypes

extension FirebaseEmulator {
    /// The Auth Emulator's `sessionInfo` length (docs/vendors/firebase.md §4): an opaque URL-safe string.
    static let sessionInfoLength = 226
    static let refreshTokenLength = 180

    // MARK: bodies

    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) -> TransportResponse {
        var headers = HTTPFields()
        headers[.contentType] = "application/json; charset=UTF-8"
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let body = (try? encoder.encode(value)) ?? Data("{}".utf8)
        return TransportResponse(status: status, headerFields: headers, body: body)
    }

    /// Google's error envelope (docs/vendors/firebase.md §3.1). `status` is omitted for the plain 400s of Identity
    /// Toolkit's business errors, as the Auth Emulator does.
    static func error(
        _ httpStatus: Int, message: String, status: String? = nil, reason: String = "invalid",
        domain: String = "global"
    ) -> TransportResponse {
        let envelope = FirebaseWire.ErrorEnvelope(
            error: FirebaseWire.ErrorEnvelope.Body(
                code: httpStatus, message: message,
                errors: [FirebaseWire.ErrorEnvelope.Item(message: message, domain: domain, reason: reason)],
                status: status))
        return json(envelope, status: HTTPResponse.Status(code: httpStatus))
    }

    /// An Identity Toolkit business error: HTTP 400, message `CODE` or `CODE : detail`.
    static func refusal(_ code: String, detail: String? = nil) -> TransportResponse {
        error(400, message: detail.map { "\(code) : \($0)" } ?? code)
    }

    /// The 5xx body the fault switch answers with, as Google's front end writes it.
    static func serverError(_ httpStatus: Int) -> TransportResponse {
        switch httpStatus {
        case 503:
            return error(
                503, message: "The service is currently unavailable.", status: "UNAVAILABLE", reason: "backendError")
        case 504:
            return error(
                504, message: "Deadline expired before operation could complete.", status: "DEADLINE_EXCEEDED",
                reason: "backendError")
        default:
            return error(httpStatus, message: "Internal error encountered.", status: "INTERNAL", reason: "backendError")
        }
    }

    static func notFound() -> TransportResponse {
        error(404, message: "Requested entity was not found.", status: "NOT_FOUND", reason: "notFound")
    }

    static func invalidJSON() -> TransportResponse {
        error(400, message: "Invalid JSON payload received.", status: "INVALID_ARGUMENT", reason: "badRequest")
    }

    // MARK: values

    private static let urlSafe = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    private static let alphanumeric = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")

    /// A random string from the URL-safe alphabet (or letters and digits only, the shape of a Firebase uid).
    static func randomString(length: Int, alphanumeric: Bool = false) -> String {
        let alphabet = alphanumeric ? Self.alphanumeric : urlSafe
        var generator = SystemRandomNumberGenerator()
        return String((0..<length).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] })
    }

    /// The SMS in the language the provider asked for (`X-Firebase-Locale`), which is the language it
    /// reports: Firebase's own wording for the languages below, the sandbox's phrase table for the others.
    static func smsText(code: String, language: String?, projectID: String) -> (text: String, language: String) {
        let app = "\(projectID).firebaseapp.com"
        let base = language?.lowercased().split(separator: "-").first.map(String.init)
        switch base {
        case "es": return ("\(code) es tu código de verificación para \(app).", "es")
        case "fr": return ("\(code) est votre code de validation pour \(app).", "fr")
        case "de": return ("\(code) ist dein Bestätigungscode für \(app).", "de")
        case "pt": return ("\(code) é seu código de verificação para \(app).", "pt")
        case "en", nil: return ("\(code) is your verification code for \(app).", "en")
        default:
            let message = SandboxMessages.verificationCode(code, language: language)
            guard message.language != "en" else { return ("\(code) is your verification code for \(app).", "en") }
            return (message.text + " (\(app))", message.language)
        }
    }
}
