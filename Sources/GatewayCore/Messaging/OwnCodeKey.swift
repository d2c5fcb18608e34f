/// The secret behind the codes the gateway issues: a keyed MAC (HMAC-SHA256 in the gateway, from the
/// configuration's environment variable). The core holds no cryptography; the executable passes one in.
///
/// A verification keeps a random seed and the MAC of its code, never the code: the code is derived from the
/// seed under this key (so a resend sends the same code without the store holding it), and a check compares
/// the MAC of what the user typed with the stored one in constant time.
public protocol OwnCodeKey: Sendable {
    /// The MAC of `message` under the secret key (32 bytes for HMAC-SHA256).
    func authenticationCode(for message: [UInt8]) -> [UInt8]
}

extension OwnCodeKey {
    /// The code a verification's `seed` stands for: the key's MAC of the seed and a block counter, read as a
    /// stream of uniformly random bytes by ``OwnCodeFormat/code(from:)``.
    public func code(seed: [UInt8], format: OwnCodeFormat) -> String {
        var stream: [UInt8] = []
        var block: UInt8 = 0
        while true {
            stream += authenticationCode(for: Array("own-code/v1/derive".utf8) + seed + [block])
            if let code = format.code(from: stream) { return code }
            block &+= 1
        }
    }

    /// The MAC stored with a verification for its `code`: bound to the verification's `seed`, so that no two
    /// verifications with the same code store the same value.
    public func digest(code: String, seed: [UInt8]) -> [UInt8] {
        authenticationCode(for: Array("own-code/v1/check".utf8) + seed + Array(code.utf8))
    }

    /// A code the caller chose, sealed for the store: its bytes XOR the key's MAC of the seed under a label of
    /// its own. As with a derived code, the store alone reveals nothing of it, and the key with the seed gives it.
    public func seal(code: String, seed: [UInt8]) -> [UInt8] {
        let pad = authenticationCode(for: Array("own-code/v1/seal".utf8) + seed)
        return zip(Array(code.utf8), pad).map { $0 ^ $1 }
    }

    /// The code ``seal(code:seed:)`` sealed; `nil` when the sealed bytes are longer than a pad or not text.
    public func unseal(_ sealed: [UInt8], seed: [UInt8]) -> String? {
        let pad = authenticationCode(for: Array("own-code/v1/seal".utf8) + seed)
        guard sealed.count <= pad.count else { return nil }
        return String(validating: zip(sealed, pad).map { $0 ^ $1 }, as: UTF8.self)
    }

    /// Whether `entered` (already ``OwnCodeFormat/normalized(_:)``) is the code whose digest is `stored`,
    /// compared in time that does not depend on where they differ.
    public func matches(_ entered: String, seed: [UInt8], stored: [UInt8]) -> Bool {
        ConstantTime.equals(digest(code: entered, seed: seed), stored)
    }
}
