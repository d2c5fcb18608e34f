import Foundation
import HTTPTypes
import Logging

/// A vendor's error answer (any status outside 2xx), as a plugin's error mapping reads it.
public struct VendorErrorAnswer: Sendable {
    /// The HTTP status code.
    public var status: Int
    /// The answer's header fields.
    public var headerFields: HTTPFields
    /// The answer's body, for the plugin to read the vendor's error fields from.
    public var body: Data
    /// `Retry-After` in whole seconds, when the vendor sent one.
    public var retryAfter: Int?
    /// The call that got the answer.
    public var operation: VendorOperation
}
