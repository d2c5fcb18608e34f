import Foundation
import GatewayCore

extension StoreConformance {
    /// A fixed instant on a whole number of Unix seconds, so every store keeps it exactly.
    public static let epoch = Date(timeIntervalSince1970: 1_800_000_000)

    /// A phone verification with every optional field set and awkward values in the maps.
    public static func phoneRecord(id: String = "VEphone0001") throws -> VerificationRecord {
        VerificationRecord(
            id: id,
            destination: .phone(try PhoneNumber(parsing: "+16505550134")),
            channel: .sms,
            providerID: "twilio",
            providerReference: "VE0123456789abcdef",
            providerState: ["sessionInfo": "AJOnW4S/+=", "quote": "say \"hi\"", "unicode": "Grüße 👋", "empty": ""],
            status: .pending,
            attempts: 1,
            maxAttempts: 5,
            sends: 2,
            createdAt: epoch,
            updatedAt: epoch.addingTimeInterval(12.5),
            expiresAt: epoch.addingTimeInterval(600),
            contentLanguage: "de-DE",
            locales: ["de-DE", "en"],
            route: "uk-sms",
            experiment: "twilio-vs-firebase",
            experimentArm: "arm-b",
            failovers: ["sinch:provider_unavailable", "vonage:provider_timeout"],
            isTestNumber: true,
            clientReference: "",
            metadata: ["order": "A-17", "emoji": "✅", "newline": "a\nb", "nul": "x\u{0}y"],
            apiKeyID: "key_live_1",
            nextAction: .solveChallenge(
                NextAction.Challenge(
                    kind: "slider_captcha", data: ["background": "iVBOR…", "width": 320, "ok": true],
                    expiresAt: epoch.addingTimeInterval(120))),
            fallbackChannels: [.voice, .whatsapp],
            challengeAttempts: 2,
            tokenPending: true,
            pendingTokens: ["id_token": "eyJ…", "expire": 7200, "nested": ["a": [1, 2]]],
            checkLeaseUntil: epoch.addingTimeInterval(30),
            checkLeaseOwner: "in_0123456789abcdef",
            checkLeaseHoldsAttempt: true,
            statusReason: "Fraud",
            version: 1
        )
        .with(adaptiveContext: "US/sms").with(risk: ["sim_swap": "recent", "quote\"": "é\n"])
    }

    /// An email verification with every optional field nil and every map empty.
    public static func emailRecord(id: String = "VEemail0001") -> VerificationRecord {
        VerificationRecord(
            id: id,
            destination: .email("someone@example.com"),
            channel: .email,
            providerID: "sendgrid",
            providerReference: nil,
            maxAttempts: 3,
            createdAt: epoch.addingTimeInterval(0.25),
            updatedAt: epoch.addingTimeInterval(0.25),
            expiresAt: epoch.addingTimeInterval(300.75))
    }

    /// A push verification addressed to a user identity.
    public static func identityRecord(id: String = "VEident0001") -> VerificationRecord {
        VerificationRecord(
            id: id,
            destination: .identity("user-0001-abcdef"),
            channel: .push,
            providerID: "twilio",
            providerReference: "YF0123",
            providerState: ["factor": "YF0123"],
            status: .approved,
            attempts: 0,
            maxAttempts: 1,
            sends: 1,
            createdAt: epoch,
            updatedAt: epoch,
            expiresAt: epoch.addingTimeInterval(60),
            locales: ["en-US"],
            metadata: [:],
            version: 7)
    }

    /// The next version of `record`, as a writer holding `record` would submit it.
    public static func nextVersion(
        of record: VerificationRecord, attempts: Int? = nil, status: VerificationStatus? = nil
    ) -> VerificationRecord {
        var next = record
        next.version += 1
        next.attempts = attempts ?? record.attempts + 1
        next.status = status ?? record.status
        next.updatedAt = record.updatedAt.addingTimeInterval(1)
        return next
    }
}

extension VerificationRecord {
    /// The record with its adaptive context set (the initializer has no parameter for it).
    public func with(adaptiveContext: String?) -> VerificationRecord {
        var record = self
        record.adaptiveContext = adaptiveContext
        return record
    }

    /// The record with the risk step's marks set (the initializer has no parameter for them).
    public func with(risk: [String: String]) -> VerificationRecord {
        var record = self
        record.risk = risk
        return record
    }
}
