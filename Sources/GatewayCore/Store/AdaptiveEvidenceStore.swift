import Foundation

/// The evidence adaptive routes learn from (docs/routing.md §3a): counts of starts, approvals and failures
/// per route, context, provider and time bucket, kept in the store so that every instance on one database
/// learns from every verification and the learning survives restarts. Methods throw only ``GatewayError``.
public protocol AdaptiveEvidenceStore: Sendable {
    /// Adds `starts`, `approvals` and `failures` (each may be 0) to the cell of `cell`'s route, context,
    /// provider and bucket, creating it at zero first; the cell's own counts are the amounts to add. Atomic:
    /// concurrent additions all count.
    func addAdaptiveEvidence(_ cell: AdaptiveCell) async throws(GatewayError)

    /// The cells of `route` whose bucket starts at or after `since` (Unix seconds), of one context or, with
    /// `context` nil, of every context.
    func adaptiveEvidence(route: String, context: String?, since: Int) async throws(GatewayError) -> [AdaptiveCell]

    /// Deletes every cell whose bucket starts before `before` (Unix seconds); returns how many.
    @discardableResult
    func pruneAdaptiveEvidence(before: Int) async throws(GatewayError) -> Int

    /// The provider of the newest verification to `destination` (its ``Destination/value``) on `route` that is
    /// still open at `at` (pending, code still valid), if any: an adaptive start to that destination sticks
    /// to it, so a user who asks again does not get a second vendor's code.
    func openProvider(destination: String, route: String, at: Date) async throws(GatewayError) -> String?
}
