import Foundation

/// The optional operations a provider offers, beyond start and check. Each is a protocol of its own
/// (``ResendingProvider``, ``CancelingProvider``, …): a provider offers what its type implements, less what its
/// configuration withholds (``ProviderCapabilities/withheld``). Nothing can advertise an operation it does not
/// implement, and the engine reaches each operation only through the accessor of the same name on
/// ``VerificationProvider`` (``VerificationProvider/resending``, …), which is `nil` when it is not offered.
public struct ProviderOperations: OptionSet, Sendable, Hashable {
    /// The bits.
    public let rawValue: Int

    /// Operations from their bits.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// ``ResendingProvider/resend(_:request:)``.
    public static let resend = ProviderOperations(rawValue: 1 << 0)
    /// ``CancelingProvider/cancel(_:)``.
    public static let cancel = ProviderOperations(rawValue: 1 << 1)
    /// ``StatusReportingProvider/status(_:)``.
    public static let status = ProviderOperations(rawValue: 1 << 2)
    /// ``CallbackReceivingProvider/handleCallback(_:lookup:)``.
    public static let callbacks = ProviderOperations(rawValue: 1 << 3)
    /// ``ChallengingProvider/prepare(_:)`` and ``ChallengingProvider/submitChallenge(_:answer:)``.
    public static let challenge = ProviderOperations(rawValue: 1 << 4)
    /// ``ActionProvider/perform(action:input:)``.
    public static let actions = ProviderOperations(rawValue: 1 << 5)

    /// Every optional operation.
    public static let all: ProviderOperations = [.resend, .cancel, .status, .callbacks, .challenge, .actions]

    /// The API's names for the operations in this set, in a fixed order (`resend`, `cancel`, `status`,
    /// `callbacks`, `challenge`, `actions`).
    public var names: [String] {
        let named: [(ProviderOperations, String)] = [
            (.resend, "resend"), (.cancel, "cancel"), (.status, "status"), (.callbacks, "callbacks"),
            (.challenge, "challenge"), (.actions, "actions"),
        ]
        return named.filter { contains($0.0) }.map(\.1)
    }
}

extension VerificationProvider {
    /// The provider as a ``ResendingProvider``, when it offers resends.
    public var resending: (any ResendingProvider)? {
        offering(.resend, as: (any ResendingProvider).self)
    }

    /// The provider as a ``CancelingProvider``, when its vendor cancels.
    public var canceling: (any CancelingProvider)? {
        offering(.cancel, as: (any CancelingProvider).self)
    }

    /// The provider as a ``StatusReportingProvider``, when its vendor reports status.
    public var statusReporting: (any StatusReportingProvider)? {
        offering(.status, as: (any StatusReportingProvider).self)
    }

    /// The provider as a ``CallbackReceivingProvider``, when it takes callbacks.
    public var callbackReceiving: (any CallbackReceivingProvider)? {
        offering(.callbacks, as: (any CallbackReceivingProvider).self)
    }

    /// The provider as a ``ChallengingProvider``, when it may set challenges.
    public var challenging: (any ChallengingProvider)? {
        offering(.challenge, as: (any ChallengingProvider).self)
    }

    /// The provider as an ``ActionProvider``, when it offers actions.
    public var actionProviding: (any ActionProvider)? {
        offering(.actions, as: (any ActionProvider).self)
    }

    /// The provider as `Offered`, unless its configuration withholds `operation`.
    private func offering<Offered>(_ operation: ProviderOperations, as _: Offered.Type) -> Offered? {
        capabilities.withheld.contains(operation) ? nil : self as? Offered
    }

    /// The optional operations the provider offers: those its type implements, less those withheld.
    public var operations: ProviderOperations {
        var offered: ProviderOperations = []
        if resending != nil { offered.insert(.resend) }
        if canceling != nil { offered.insert(.cancel) }
        if statusReporting != nil { offered.insert(.status) }
        if callbackReceiving != nil { offered.insert(.callbacks) }
        if challenging != nil { offered.insert(.challenge) }
        if actionProviding != nil { offered.insert(.actions) }
        return offered
    }

    /// The vendor actions the provider offers; none when it offers no actions.
    public var offeredActions: [ProviderAction] { actionProviding?.actions ?? [] }
}
