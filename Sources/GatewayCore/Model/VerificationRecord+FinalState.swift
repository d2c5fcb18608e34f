extension VerificationRecord {
    /// Why a vendor lockout ended a verification: the `status_reason` of a verification settled `denied`
    /// because the vendor locked the user's account (IDaaS `LOGIN.1003`).
    public static let accountLockedReason = GatewayError.Code.accountLocked.rawValue

    /// The error a request on this verification receives once it is final: its status's
    /// (``VerificationStatus/finalStateError``), except that a verification a vendor lockout ended answers
    /// `account_locked`, as the check that met the lockout did.
    public var finalStateError: GatewayError? {
        if status == .denied, statusReason == Self.accountLockedReason {
            return GatewayError(
                .accountLocked,
                "The account behind this number is locked at the provider; this verification is over.")
        }
        return status.finalStateError
    }
}
