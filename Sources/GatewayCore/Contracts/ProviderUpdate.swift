import Foundation
import HTTPTypes

/// One verification a callback is about, and what changed.
public struct ProviderUpdate: Sendable, Equatable {
    /// How a callback names its verification.
    public enum Target: Sendable, Hashable {
        /// The vendor's id (``VerificationRecord/providerReference``).
        case reference(String)
        /// The gateway's id, which the vendor echoes where it takes a reference of ours.
        case verificationID(String)
    }

    /// The verification the update is about.
    public var target: Target
    /// What changed at the vendor.
    public var change: VerificationChange

    /// An update of the verification `target` names.
    public init(target: Target, change: VerificationChange) {
        self.target = target
        self.change = change
    }
}
