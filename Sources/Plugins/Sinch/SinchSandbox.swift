/// The fixed, public credentials and test numbers of the Sinch sandbox (``SinchEmulator``), documented so the
/// official `sinch` Python SDK or `curl` can be pointed at it. They never work against Sinch.
public enum SinchSandbox {
    /// The Verification application key the emulator knows.
    public static let applicationKey = "5a4db0c0-5a4d-4b0c-8a4d-b0c05a4d0001"
    /// Its secret, base64 as the dashboard shows it (`sandbox-sinch-application-secret`).
    public static let applicationSecret = "c2FuZGJveC1zaW5jaC1hcHBsaWNhdGlvbi1zZWNyZXQ="
    /// Where the sandbox mounts the emulator; the Python SDK signs paths with it included.
    public static let mountPath = "/sandbox/sinch"

    /// The SMS service plan the ``SinchSMSEmulator`` knows, and the sandbox's `sinch_sms` provider sends with.
    public static let servicePlanID = "5a4db0c05a4d4b0c8a4db0c05a4d0002"
    /// That plan's API token (`Authorization: Bearer`).
    public static let smsAPIToken = "sandbox0sinch0sms0api0token00001"
    /// The secret the SMS emulator signs its delivery reports with (`x-sinch-webhook-signature`).
    public static let smsWebhookSecret = "sandbox-sinch-sms-webhook-secret-0001"

    /// A number Sinch's fraud engine denies: the start is accepted, nothing is sent, and the verification
    /// reports `DENIED` with reason `Fraud`.
    public static let fraudNumber = "+46700000666"

    /// The number that makes a start answer `errorCode` (one of the codes of docs/vendors/sinch.md §4.2) with its HTTP
    /// status: `+46700` + the five digits + `1`, a Swedish mobile number (`+46700402001` answers 40200).
    public static func errorNumber(_ errorCode: Int) -> String { "+46700\(errorCode)1" }

    /// The error code an ``errorNumber(_:)`` stands for, if `number` is one.
    static func errorCode(of number: String) -> Int? {
        guard number.count == 12, number.hasPrefix("+46700"), number.hasSuffix("1"),
            let code = Int(number.dropFirst(6).prefix(5)), SinchErrorMapping.row(for: code) != nil
        else { return nil }
        return code
    }
}
