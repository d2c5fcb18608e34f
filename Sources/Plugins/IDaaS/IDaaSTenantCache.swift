import Foundation
import GatewayCore
import Synchronization

/// What the provider reads once and keeps: the tenant's area-code list (which regions it serves) and its
/// ID-token signing keys. Shared by every copy of one provider value.
final class IDaaSTenantCache: Sendable {
    let areaCodes = Mutex<(list: IDaaSWire.AreaCodesResponse, fetchedAt: Date)?>(nil)
    let keys = Mutex<(keys: JWKSet, fetchedAt: Date)?>(nil)

    /// The ISO regions of the area codes read so far; `nil` before the first read (every region is a
    /// candidate, and the start refuses what the list lacks).
    var servedRegions: Set<String>? {
        areaCodes.withLock { cached in
            cached.map { Set(($0.list.phoneAreaCodeDefinitions ?? []).compactMap { $0.countryCode?.uppercased() }) }
        }
    }
}
