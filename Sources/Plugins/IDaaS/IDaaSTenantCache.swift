import Foundation
import GatewayCore
import Synchronization

/// What the provider reads once and keeps: the tenant's area-code list (which regions it serves) and its
/// ID-token signing keys. Shared by every copy of one provider value.
final class IDaaSTenantCache: Sendable {
    struct AreaCodes: Sendable {
        var entries: [IDaaSWire.AreaCode]
        /// The tenant's `preferredAreaCode`, if it names one.
        var preferred: String?
        var fetchedAt: Date
    }

    struct Keys: Sendable {
        var keys: [IDaaSWire.JWK]
        var fetchedAt: Date
    }

    let areaCodes = Mutex<AreaCodes?>(nil)
    let keys = Mutex<Keys?>(nil)

    /// The ISO regions of the area codes read so far; `nil` before the first read (every region is a
    /// candidate, and the start refuses what the list lacks).
    var servedRegions: Set<String>? {
        areaCodes.withLock { cached in
            cached.map { Set($0.entries.compactMap { $0.countryCode?.uppercased() }) }
        }
    }
}
