import Foundation
import GatewayCore
import HTTPTypes
import Hummingbird
import Logging

/// An error as Twilio answers one: `{"code", "message", "more_info", "status"}`, plus the gateway's side in the
/// documented extension field `gateway`: the taxonomy code, the request id, the attempts left and the vendor's
/// own code when a vendor answered (docs/twilio-compat.md, "Errors").
struct TwilioCompatError: Error, Sendable {
    var status: Int
    /// Twilio's error code (60200, 20404, …).
    var code: Int
    var message: String
    /// The gateway error behind it (its taxonomy code goes in `gateway.code`).
    var error: GatewayError

    init(status: Int, code: Int, message: String, error: GatewayError) {
        self.status = status
        self.code = code
        self.message = message
        self.error = error
    }

    /// Twilio's answer for a gateway error: the status and code Twilio gives the same situation.
    init(_ error: GatewayError) {
        let (status, code) = Self.twilioCode(for: error.code)
        self.init(status: status, code: code, message: error.message, error: error)
    }

    /// 60200, Twilio's "Invalid parameter", naming the parameter.
    static func invalidParameter(_ name: String, _ detail: String) -> TwilioCompatError {
        TwilioCompatError(
            status: 400, code: 60200, message: "Invalid parameter `\(name)`: \(detail)",
            error: GatewayError(.invalidRequest, "Invalid parameter `\(name)`: \(detail)"))
    }

    /// 60204, Twilio's "Service does not support this feature": a parameter the facade refuses.
    static func unsupported(_ name: String, _ detail: String) -> TwilioCompatError {
        TwilioCompatError(
            status: 400, code: 60204, message: "`\(name)` is not supported here: \(detail)",
            error: GatewayError(.invalidRequest, "`\(name)` is not supported here: \(detail)"))
    }

    /// 20404, Twilio's "Not Found".
    static func notFound(_ what: String) -> TwilioCompatError {
        TwilioCompatError(
            status: 404, code: 20404, message: "The requested resource \(what) was not found",
            error: GatewayError(.notFound, "The requested resource \(what) was not found"))
    }

    /// Twilio's status and code for each taxonomy code (the table in docs/twilio-compat.md).
    static func twilioCode(for code: GatewayError.Code) -> (status: Int, code: Int) {
        switch code {
        case .invalidRequest, .invalidPhoneNumber, .unsupportedChannel, .unsupportedDestination,
            .appVerificationRequired, .appVerificationFailed, .invalidToken, .notEnrolled, .invalidState,
            .incorrectCode:
            return (400, 60200)
        case .unauthorized: return (401, 20003)
        case .forbidden, .accountLocked: return (403, 20403)
        case .rateLimited: return (429, 20429)
        case .destinationBlocked, .recentSimSwap: return (403, 60410)
        case .idempotencyConflict, .idempotencyOutcomeUnknown, .concurrentVerification: return (429, 60212)
        case .maxAttemptsReached: return (429, 60202)
        case .maxSendsReached: return (429, 60203)
        case .expired, .notFound, .alreadyApproved, .canceled, .denied: return (404, 20404)
        case .providerUnavailable, .providerTimeout, .providerRateLimited, .providerAuthFailed,
            .providerInsufficientFunds, .providerRejected, .deliveryFailed, .providerError, .noProviderAvailable,
            .storeUnavailable:
            return (503, 20503)
        case .internal: return (500, 20500)
        }
    }

    func body(requestID: String) -> JSONValue {
        var gateway: [String: JSONValue] = [
            "code": .string(error.code.rawValue), "request_id": .string(requestID),
        ]
        if let remaining = error.attemptsRemaining { gateway["attempts_remaining"] = .number(Double(remaining)) }
        if let vendor = error.vendor {
            gateway["provider"] = .object([
                "id": .string(vendor.providerID), "code": vendor.code.map(JSONValue.string) ?? .null,
                "status": vendor.httpStatus.map { .number(Double($0)) } ?? .null,
            ])
        }
        return .object([
            "code": .number(Double(code)), "message": .string(message),
            "more_info": .string("https://www.twilio.com/docs/errors/\(code)"), "status": .number(Double(status)),
            "gateway": .object(gateway),
        ])
    }

    func response(requestID: String) -> Response {
        var headers: HTTPFields = [:]
        if !requestID.isEmpty { headers[.requestID] = requestID }
        if let retryAfter = error.retryAfter { headers[.retryAfter] = String(retryAfter) }
        if status == 401 { headers[.wwwAuthenticate] = "Basic realm=\"Twilio API\"" }
        return JSONResponse.response(
            body(requestID: requestID), status: HTTPResponse.Status(code: status), headers: headers)
    }

    /// Any error from the facade's handlers, or from the layers below them, as Twilio's answer.
    static func from(_ error: any Error, request: Request, routes: RouteTable?) -> TwilioCompatError? {
        switch error {
        case let error as TwilioCompatError: return error
        case let error as GatewayError: return TwilioCompatError(error)
        case let error as APIError:
            var twilio = TwilioCompatError(error.error)
            if error.status == .contentTooLarge { twilio.status = 413 }
            return twilio
        case let error as HTTPError:
            switch error.status {
            case .notFound:
                if let allow = routes?.allowHeader(forPath: request.uri.path) {
                    return TwilioCompatError(
                        status: 405, code: 20004, message: "Method \(request.method) not allowed; use \(allow)",
                        error: GatewayError(.invalidRequest, "Method \(request.method) is not allowed here."))
                }
                return notFound(request.uri.path)
            case .methodNotAllowed:
                return TwilioCompatError(
                    status: 405, code: 20004, message: "Method \(request.method) not allowed",
                    error: GatewayError(.invalidRequest, "Method \(request.method) is not allowed here."))
            case .contentTooLarge:
                return TwilioCompatError(
                    status: 413, code: 60200, message: "The request body is too large",
                    error: GatewayError(.invalidRequest, "The request body is too large."))
            case .unauthorized:
                return TwilioCompatError(GatewayError(.unauthorized, "Authentication failed."))
            default:
                return nil
            }
        default:
            return nil
        }
    }
}

/// Answers every error under `/twilio` in Twilio's shape (the group's first middleware, inside the gateway's
/// own ``ErrorMiddleware``, which keeps the request id and the request log).
struct TwilioCompatErrorMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext
    var routes: RouteTable? = nil

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            guard let twilio = TwilioCompatError.from(error, request: request, routes: routes) else { throw error }
            let level: Logger.Level = twilio.error.code == .internal ? .error : .info
            context.logger.log(
                level: level, "request failed",
                metadata: [
                    "http.method": "\(request.method)", "http.path": "\(request.uri.path)",
                    "error.code": "\(twilio.error.code.rawValue)", "twilio.code": "\(twilio.code)",
                    "vendor.code": "\(twilio.error.vendor?.code ?? "-")",
                ])
            return twilio.response(requestID: context.requestID)
        }
    }
}
