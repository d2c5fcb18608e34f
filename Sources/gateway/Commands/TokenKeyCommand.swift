import ArgumentParser
@preconcurrency import Crypto
import Foundation

/// `gateway token-key generate`: a new P-256 key for the verification tokens, as PEM on standard output (its
/// `kid` on standard error), for `token.signing_key_env` and the rotation in docs/operations.md.
struct TokenKey: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token-key", abstract: "Make keys for signing verification tokens.",
        subcommands: [Generate.self])

    struct Generate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a new P-256 private key (PEM) for token.signing_key_env; its kid goes to standard error.")

        @Flag(help: "Print the public key (PEM) after the private one, for a verifier that pins keys.")
        var withPublic = false

        func run() async throws {
            let key = P256.Signing.PrivateKey()
            var text = key.pemRepresentation + "\n"
            if withPublic { text += key.publicKey.pemRepresentation + "\n" }
            FileHandle.standardOutput.write(Data(text.utf8))
            let kid = VerificationTokenSigner.keyID(key.publicKey)
            FileHandle.standardError.write(Data("kid \(kid)\n".utf8))
        }
    }
}
