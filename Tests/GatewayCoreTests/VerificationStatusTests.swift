import GatewayCore
import Testing

@Suite("VerificationStatus")
struct VerificationStatusTests {
    static let finalStatuses: [VerificationStatus] = [
        .approved, .denied, .canceled, .expired, .maxAttemptsReached, .failed, .blocked,
    ]

    @Test("pending is the only status that is not final")
    func onlyPendingIsOpen() {
        #expect(!VerificationStatus.pending.isFinal)
        #expect(Set(VerificationStatus.allCases.filter(\.isFinal)) == Set(Self.finalStatuses))
    }

    @Test("the wire names are snake_case")
    func wireNames() {
        #expect(
            VerificationStatus.allCases.map(\.rawValue) == [
                "pending", "approved", "denied", "canceled", "expired", "max_attempts_reached", "failed", "blocked",
            ])
    }

    @Test("pending may move to any status", arguments: VerificationStatus.allCases)
    func pendingMovesAnywhere(_ next: VerificationStatus) {
        #expect(VerificationStatus.pending.canTransition(to: next))
    }

    @Test("a final status never moves to another status", arguments: finalStatuses, VerificationStatus.allCases)
    func finalStaysFinal(_ status: VerificationStatus, _ next: VerificationStatus) {
        #expect(status.canTransition(to: next) == (status == next))
    }

    @Test(
        "each final status answers with its error",
        arguments: [
            (VerificationStatus.approved, GatewayError.Code.alreadyApproved),
            (.denied, .denied),
            (.canceled, .canceled),
            (.expired, .expired),
            (.maxAttemptsReached, .maxAttemptsReached),
            (.failed, .deliveryFailed),
            (.blocked, .destinationBlocked),
        ])
    func finalStateError(_ status: VerificationStatus, _ code: GatewayError.Code) throws {
        let error = try #require(status.finalStateError)
        #expect(error.code == code)
        #expect(!error.message.isEmpty)
    }

    @Test("a pending verification has no final-state error")
    func pendingHasNoError() {
        #expect(VerificationStatus.pending.finalStateError == nil)
    }

    @Test("max_attempts_reached tells the caller no attempts remain")
    func maxAttemptsHasZeroRemaining() {
        #expect(VerificationStatus.maxAttemptsReached.finalStateError?.attemptsRemaining == 0)
    }
}

@Test("a verification that finally failed is not retryable, though delivery_failed usually is")
func finalFailureIsNotRetryable() throws {
    #expect(GatewayError.Code.deliveryFailed.isRetryable)
    let error = try #require(VerificationStatus.failed.finalStateError)
    #expect(error.code == .deliveryFailed)
    #expect(!error.isRetryable)
    for status in VerificationStatus.allCases where status.isFinal {
        #expect(status.finalStateError?.isRetryable == false, "\(status) is final")
    }
}
