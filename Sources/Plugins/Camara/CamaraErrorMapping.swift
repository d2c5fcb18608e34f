import Foundation
import GatewayCore

/// Every error CAMARA's two APIs and the operator's OpenID Connect endpoints can answer, mapped into the taxonomy
/// (docs/errors.md, "CAMARA"). API errors are `{status, code, message}` and mapped by code and status; OAuth
/// errors are RFC 6749's `error` strings: from the token endpoint (vocabulary `oauth`), or in the redirect that
/// ends a device's authorization (vocabulary `authorize`), which ends the silent step.
enum CamaraErrorMapping {
    private static func api(
        _ code: String, _ status: Int, _ mapsTo: GatewayError.Code, _ note: String, retryable: Bool? = nil
    ) -> VendorErrorRow {
        VendorErrorRow(
            code: code, httpStatus: status, name: code, mapsTo: mapsTo, retryable: retryable,
            source: "docs/vendors/camara.md §2.3, §3.3", note: note)
    }

    private static func oauth(_ code: String, _ status: Int?, _ mapsTo: GatewayError.Code, _ note: String)
        -> VendorErrorRow
    {
        VendorErrorRow(
            vocabulary: "oauth", code: code, httpStatus: status, name: code, mapsTo: mapsTo,
            source: "docs/vendors/camara.md §2.1", note: note)
    }

    private static func authorize(_ code: String, _ mapsTo: GatewayError.Code, _ note: String) -> VendorErrorRow {
        VendorErrorRow(
            vocabulary: "authorize", code: code, name: code, mapsTo: mapsTo, source: "docs/vendors/camara.md §2.1",
            note: note)
    }

    static let table = VendorErrorTable(
        vendor: "CAMARA",
        rows: [
            api("INVALID_ARGUMENT", 400, .providerRejected, "the request broke the API's schema: a gateway fault"),
            api("OUT_OF_RANGE", 400, .providerRejected, "`max_age_hours` is beyond what the operator monitors"),
            api("UNAUTHENTICATED", 401, .providerAuthFailed, "the access token is missing, expired or not valid"),
            api("PERMISSION_DENIED", 403, .providerAuthFailed, "the token lacks the scope, or the operator refused"),
            api(
                "NUMBER_VERIFICATION.USER_NOT_AUTHENTICATED_BY_MOBILE_NETWORK", 403, .denied,
                "the device was not authenticated by the mobile network: the silent step fails"),
            api("NOT_FOUND", 404, .providerRejected, "the operator has no such resource: a wrong `api_root`"),
            api("IDENTIFIER_NOT_FOUND", 404, .unsupportedDestination, "the number is not this operator's"),
            api(
                "SERVICE_NOT_APPLICABLE", 422, .unsupportedDestination, "the operator offers no signal for this number"),
            api("MISSING_IDENTIFIER", 422, .providerRejected, "no number in a two-legged call: a gateway fault"),
            api(
                "UNNECESSARY_IDENTIFIER", 422, .providerRejected, "a number with a three-legged token: a gateway fault"),
            api("QUOTA_EXCEEDED", 429, .providerRateLimited, "the business quota is spent", retryable: false),
            api("TOO_MANY_REQUESTS", 429, .providerRateLimited, "rate limited; try again later"),
            oauth("invalid_request", 400, .providerRejected, "the token request is malformed: a gateway fault"),
            oauth("invalid_client", 401, .providerAuthFailed, "the client id or its key (the assertion) is refused"),
            oauth("invalid_grant", 400, .denied, "the authorization code expired or was used: the silent step fails"),
            oauth("unauthorized_client", 400, .providerAuthFailed, "the client may not use this grant"),
            oauth("unsupported_grant_type", 400, .providerRejected, "the operator does not offer this grant"),
            oauth("invalid_scope", 400, .providerAuthFailed, "the purpose or API scope is not granted to the client"),
            oauth(
                "invalid_dpop_proof", 400, .providerRejected,
                "the operator requires DPoP, which the gateway does not send"),
            authorize("access_denied", .denied, "the network could not authenticate the device (Wi-Fi, another SIM)"),
            authorize("consent_required", .denied, "the user's consent is needed and cannot be asked silently"),
            authorize("invalid_request", .providerRejected, "the authorization request is malformed: a gateway fault"),
            authorize("unauthorized_client", .providerAuthFailed, "the client may not use the authorization code flow"),
            authorize("unsupported_response_type", .providerRejected, "the operator does not offer `code`"),
            authorize("invalid_scope", .providerAuthFailed, "the purpose or scope is not granted to the client"),
            authorize("server_error", .providerUnavailable, "the operator's authorization server failed"),
            authorize("temporarily_unavailable", .providerUnavailable, "the operator's authorization server is busy"),
            authorize("invalid_request_object", .providerRejected, "a request object was refused"),
            authorize("request_uri_not_supported", .providerRejected, "the operator takes no `request_uri`"),
        ],
        summaries: [
            .denied: "The operator could not confirm the device's number",
            .unsupportedDestination: "The operator gives no network signal for this number",
        ])

    /// The error for a CAMARA API answer outside 2xx.
    static func map(status: Int, body: Data, operation: VendorOperation, retryAfter: Int?, providerID: String)
        -> GatewayError
    {
        if let info = try? JSONDecoder().decode(CamaraWire.ErrorInfo.self, from: body),
            let row = table.row(code: info.code, httpStatus: status)
        {
            return table.error(
                row.mapsTo, detail: "CAMARA \(info.code), HTTP \(status)", vendorCode: info.code, httpStatus: status,
                providerID: providerID, retryAfter: retryAfter, retryable: row.retryable)
        }
        if let oauth = try? JSONDecoder().decode(CamaraWire.OAuthError.self, from: body),
            let row = table.row(vocabulary: "oauth", code: oauth.error, httpStatus: status)
                ?? table.row(anyStatus: oauth.error, vocabulary: "oauth")
        {
            return table.error(
                row.mapsTo, detail: "OAuth \(oauth.error), HTTP \(status)", vendorCode: oauth.error, httpStatus: status,
                providerID: providerID, retryAfter: retryAfter, retryable: row.retryable)
        }
        let code = GatewayError.Code.forVendorStatus(status)
        return table.error(
            code, detail: "HTTP \(status)", vendorCode: nil, httpStatus: status, providerID: providerID,
            retryAfter: retryAfter)
    }

    /// The error an authorization redirect's `error` stands for.
    static func authorizationError(_ error: String, providerID: String) -> GatewayError {
        let row = table.row(vocabulary: "authorize", code: error)
        return table.error(
            row?.mapsTo ?? .denied, detail: "authorization \(error)", vendorCode: error, httpStatus: nil,
            providerID: providerID)
    }
}
