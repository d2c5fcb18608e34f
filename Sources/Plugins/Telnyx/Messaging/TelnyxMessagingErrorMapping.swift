import Foundation
import GatewayCore

/// The table from Telnyx Messaging's error codes to the gateway taxonomy: every code of
/// docs/vendors/telnyx-messaging.md §6. A code refused at the request (in a 4xx's `errors[]`) has the HTTP status
/// the sandbox answers it with (Telnyx publishes none per code, so the lookup falls back on the code alone); a
/// code only a `message.finalized` webhook carries (in `payload.errors[]`) has none. Never read by `title` or
/// `detail`.
enum TelnyxMessagingErrorMapping {
    static let table = VendorErrorTable(vendor: "Telnyx", rows: rows)

    static func request(
        _ code: String, _ status: Int, _ name: String, _ mapsTo: GatewayError.Code, _ note: String
    ) -> VendorErrorRow {
        VendorErrorRow(
            code: code, httpStatus: status, name: name, mapsTo: mapsTo,
            source: "docs/vendors/telnyx-messaging.md §6", note: note)
    }

    static func delivery(_ code: String, _ name: String, _ mapsTo: GatewayError.Code, _ note: String)
        -> VendorErrorRow
    {
        VendorErrorRow(
            code: code, name: name, mapsTo: mapsTo, source: "docs/vendors/telnyx-messaging.md §6", note: note)
    }

    /// The codes a send is refused with.
    // swift-format-ignore
    static let requestRows: [VendorErrorRow] = [
        request("10002", 400, "Invalid phone number", .invalidPhoneNumber, "not a valid number"),
        request("10016", 400, "Phone number must be in +E.164 format", .invalidPhoneNumber, "the number's form"),
        request("40310", 400, "Invalid 'to' address", .invalidPhoneNumber, "Telnyx cannot send to this address"),
        request("40300", 403, "Blocked due to STOP message", .destinationBlocked, "the recipient opted out"),
        request("40309", 403, "Invalid destination region", .unsupportedDestination, "the profile leaves this country out"),
        request("40331", 403, "Whitelisted destinations missing", .unsupportedDestination, "the profile allows no country"),
        request("40305", 400, "Invalid 'from' address", .providerRejected, "the sender is not on this profile: configuration"),
        request("40306", 400, "Alphanumeric sender ID not configured", .providerRejected, "the profile has no alphanumeric sender: configuration"),
        request("40307", 400, "Alphanumeric sender ID mismatch", .providerRejected, "the sender is not the profile's: configuration"),
        request("40325", 400, "Invalid alphanumeric sender ID", .providerRejected, "the sender's form: configuration"),
        request("40315", 403, "Unhealthy from number", .providerRejected, "Telnyx holds the sender back: fail over"),
        request("40320", 403, "Sender in transition", .providerRejected, "the number is being moved: fail over"),
        request("40322", 403, "Prohibited content", .providerRejected, "the template was refused: configuration"),
        request("40302", 400, "Too many segments", .providerRejected, "the rendered template is too long"),
        request("40328", 400, "Too many message parts", .providerRejected, "the rendered template is too long"),
        request("10011", 429, "Too many requests", .providerRateLimited, "back off, or fail over"),
        request("40318", 429, "Message queue full", .providerRateLimited, "Telnyx's queue for the sender is full"),
        request("20100", 402, "Insufficient funds", .providerInsufficientFunds, "top up the account; fail over"),
        request("40333", 403, "Messaging profile spend limit reached", .providerInsufficientFunds, "the profile's daily limit"),
        request("40314", 403, "Messaging disabled on account", .providerRejected, "the account: configuration"),
        request("40312", 403, "Messaging profile disabled", .providerRejected, "the profile: configuration"),
    ]

    /// The codes a `message.finalized` webhook says a message was not delivered with.
    // swift-format-ignore
    static let deliveryRows: [VendorErrorRow] = [
        delivery("40001", "Not routable", .invalidPhoneNumber, "a landline or a number no carrier routes"),
        delivery("40012", "Invalid destination number", .invalidPhoneNumber, "the carrier refused the number"),
        delivery("40006", "Recipient carrier unavailable", .deliveryFailed, "for now: another vendor may get through"),
        delivery("40008", "Undeliverable", .deliveryFailed, "the carrier did not take it"),
        delivery("40004", "Rejected by destination", .deliveryFailed, "no reason given"),
        delivery("40005", "Message expired", .deliveryFailed, "not delivered in its validity"),
        delivery("40014", "Expired in queue", .deliveryFailed, "left Telnyx's queue too late"),
        delivery("40002", "Blocked as spam, temporary", .providerRejected, "the carrier's filter"),
        delivery("40003", "Blocked as spam, permanent", .providerRejected, "the sending number is blocked: configuration"),
        delivery("40015", "Blocked by Telnyx's spam filter", .providerRejected, "Telnyx's filter"),
        delivery("40017", "Blocked by AT&T as spam", .providerRejected, "the carrier's filter"),
        delivery("40020", "2FA traffic blocked", .destinationBlocked, "suspected artificial traffic inflation: fraud"),
        delivery("40013", "Invalid source number", .providerRejected, "the carrier refused the sender: configuration"),
        delivery("40010", "Not 10DLC registered", .providerRejected, "a US long code needs registration: configuration"),
        delivery("40329", "Toll-free not verified", .providerRejected, "a US toll-free sender needs verification"),
        delivery("40016", "T-Mobile campaign limit", .providerRateLimited, "the campaign's daily cap"),
        delivery("40018", "AT&T campaign limit", .providerRateLimited, "the campaign's throughput cap"),
        delivery("40019", "Invalid 10DLC tag data", .providerRejected, "the campaign's data: configuration"),
        delivery("40011", "Carrier throughput exceeded", .providerRateLimited, "sent too fast for the carrier"),
    ]

    static let rows = requestRows + deliveryRows

    /// Maps an error answer to a send: the first `errors[]` code with the status, then the code alone, then the
    /// status as Telnyx Verify's table reads it.
    static func map(status: Int, errors: TelnyxWire.Errors?, retryAfter: Int?, providerID: String) -> GatewayError {
        let code = errors?.errors.first?.code
        let row = table.row(code: code, httpStatus: status, operation: nil) ?? code.flatMap { table.row(anyStatus: $0) }
        return table.error(
            row?.mapsTo ?? TelnyxErrorMapping.fallback(httpStatus: status),
            detail: "Telnyx HTTP \(status)\(code.map { " code \($0)" } ?? "")", vendorCode: code, httpStatus: status,
            providerID: providerID, retryAfter: retryAfter)
    }

    /// A webhook's error code in the taxonomy: its row's, else `delivery_failed`.
    static func delivery(code: String) -> GatewayError.Code {
        table.row(anyStatus: code)?.mapsTo ?? .deliveryFailed
    }
}
