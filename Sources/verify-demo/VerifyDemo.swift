import Foundation
import GatewayClient

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Runs every vendor's app-side flow against a sandbox gateway with GatewayClient, as an app and its back end
/// would: the back end starts (with the server's API key), the app drives the verification to its end with
/// `VerificationFlow` (with the app's credential), and the user's phone is played by the sandbox outbox (the
/// SMS, the flash call, the push) and by `SimulatedPhone` (the Verify Push SDK's key).
///
///     verify-demo --base http://127.0.0.1:8080 --key sk_sandbox_demo_key_123 [--app-credential api-key] [FLOW…]
///
/// Prints a line per flow and `verify-demo: N passed, M failed`; exits non-zero when any failed.
@main
struct VerifyDemo {
    static func main() async {
        let options: Options
        do {
            options = try Options(CommandLine.arguments.dropFirst())
        } catch {
            FileHandle.standardError.write(Data("verify-demo: \(error)\n\n\(Options.usage)\n".utf8))
            exit(2)
        }
        let demo = Demo(options: options)
        var (passed, failed) = (0, 0)
        for flow in Demo.flows where options.only.isEmpty || options.only.contains(flow.name) {
            do {
                let summary = try await flow.run(demo)
                print("\(flow.name): passed: \(summary)")
                passed += 1
            } catch {
                print("\(flow.name): FAILED: \(error)")
                failed += 1
            }
        }
        print("verify-demo: \(passed) passed, \(failed) failed")
        exit(failed == 0 && passed > 0 ? 0 : 1)
    }
}

struct Options {
    /// What the app side presents: the server's API key, or (once the gateway answers one with each start)
    /// the verification's own client secret. The header is the same; only the value differs.
    enum AppCredential: String {
        case apiKey = "api-key"
        case clientSecret = "client-secret"
    }

    var base: URL
    var key: String
    var appCredential = AppCredential.apiKey
    var only: Set<String> = []

    static let usage = """
        usage: verify-demo --base URL --key API_KEY [--app-credential api-key|client-secret] [FLOW…]
        flows: \(Demo.flows.map(\.name).joined(separator: " "))
        """

    struct Invalid: Error, CustomStringConvertible {
        let description: String
    }

    init(_ arguments: ArraySlice<String>) throws {
        var (base, key): (URL?, String?) = (nil, nil)
        var rest = arguments
        while let argument = rest.popFirst() {
            switch argument {
            case "--base":
                guard let text = rest.popFirst(), let url = URL(string: text), url.scheme != nil else {
                    throw Invalid(description: "--base needs a URL")
                }
                base = url
            case "--key":
                guard let text = rest.popFirst(), !text.isEmpty else { throw Invalid(description: "--key needs a key") }
                key = text
            case "--app-credential":
                guard let text = rest.popFirst(), let credential = AppCredential(rawValue: text) else {
                    throw Invalid(description: "--app-credential is api-key or client-secret")
                }
                appCredential = credential
            case "-h", "--help":
                throw Invalid(description: "help")
            default:
                guard Demo.flows.contains(where: { $0.name == argument }) else {
                    throw Invalid(description: "unknown flow or option \(argument)")
                }
                only.insert(argument)
            }
        }
        guard let base, let key else { throw Invalid(description: "--base and --key are required") }
        (self.base, self.key) = (base, key)
    }
}

struct DemoFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

func expect(_ condition: Bool, _ message: @autoclosure () -> String) throws {
    if !condition { throw DemoFailure(message()) }
}

/// The back end's client, the app's, and the sandbox's outbox.
struct Demo: Sendable {
    let options: Options
    /// The back end: starts verifications and fetches factor access tokens with the server's API key.
    let backend: VerificationClient

    init(options: Options) {
        self.options = options
        self.backend = VerificationClient(baseURL: options.base, credential: .apiKey(options.key))
    }

    /// The app's client for a verification its back end started.
    func app(for verification: Verification) throws -> VerificationClient {
        switch options.appCredential {
        case .apiKey:
            return backend
        case .clientSecret:
            guard let secret = verification.clientSecret else {
                throw DemoFailure("the start answered no client_secret (this gateway does not issue them)")
            }
            return VerificationClient(baseURL: options.base, credential: .clientSecret(secret))
        }
    }

    /// The newest message the sandbox "sent" to `to` after `known` earlier ones, waiting for it up to a minute
    /// (a bound against a message that never comes, not a speed figure).
    func nextMessage(to: String, after known: Int, kind: String? = nil) async throws -> SandboxMessage {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            let messages = try await backend.sandboxOutbox(to: to).filter { kind == nil || $0.kind == kind }
            if messages.count > known, let last = messages.last { return last }
            try await Task.sleep(for: .milliseconds(200))
        }
        throw DemoFailure("no message to \(to) in the sandbox outbox")
    }

    func messageCount(to: String, kind: String? = nil) async throws -> Int {
        try await backend.sandboxOutbox(to: to).filter { kind == nil || $0.kind == kind }.count
    }

    static func shortened(_ token: String?) -> String {
        guard let token else { return "none" }
        return token.count > 16 ? String(token.prefix(12)) + "…" : token
    }

    struct Flow: Sendable {
        let name: String
        let run: @Sendable (Demo) async throws -> String
    }

    static let flows: [Flow] = [
        Flow(name: "twilio-sms", run: { try await $0.twilioSMS() }),
        Flow(name: "twilio-cancel", run: { try await $0.twilioCancel() }),
        Flow(name: "sinch-sms", run: { try await $0.sinchSMS() }),
        Flow(name: "sinch-flashcall", run: { try await $0.sinchFlashCall() }),
        Flow(name: "vonage-silent-auth", run: { try await $0.vonageSilentAuth() }),
        Flow(name: "camara-silent-auth", run: { try await $0.camaraSilentAuth() }),
        Flow(name: "camara-silent-fallback", run: { try await $0.camaraSilentFallback() }),
        Flow(name: "idaas-slider", run: { try await $0.idaasSlider() }),
        Flow(name: "firebase-sms", run: { try await $0.firebaseSMS() }),
        Flow(name: "twilio-push", run: { try await $0.twilioPush(approve: true) }),
        Flow(name: "twilio-push-deny", run: { try await $0.twilioPush(approve: false) }),
    ]
}
