import Foundation
import HTTPTypes

extension VendorErrorTable {
    /// The row for a vendor code whatever the status and operation, in one vocabulary: for vendors whose code
    /// alone says what went wrong.
    public func row(anyStatus code: String, vocabulary: String = "") -> VendorErrorRow? {
        rows.first { $0.vocabulary == vocabulary && $0.matches(code: code) }
    }

    /// The error for an answer keyed by its code alone: a known code decides (`Acme 60202: Max attempts`),
    /// else the HTTP status (`Acme 60999, HTTP 400`, or `HTTP 400` without a code).
    public func error(
        code: String?, httpStatus: Int, retryAfter: Int? = nil, providerID: String
    ) -> GatewayError {
        let found = code.flatMap { row(anyStatus: $0) }
        let detail =
            if let code, let found { "\(vendor) \(code): \(found.name)" } else {
                code.map { "\(vendor) \($0), HTTP \(httpStatus)" } ?? "HTTP \(httpStatus)"
            }
        return error(
            found?.mapsTo ?? .forVendorStatus(httpStatus), detail: detail, vendorCode: code, httpStatus: httpStatus,
            providerID: providerID, retryAfter: retryAfter)
    }
}
