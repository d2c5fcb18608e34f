import Foundation
import GatewayCore
import HTTPTypes

/// The Identity Toolkit methods the provider calls, by their names; the calls that send an SMS are those whose
/// ambiguous failure may have delivered one.
extension VendorOperation {
    static let send = VendorOperation("sendVerificationCode", sendMayHaveHappened: true)
    static let signIn = VendorOperation("signInWithPhoneNumber")
    static let mfaSignInStart = VendorOperation("mfaSignIn.start", sendMayHaveHappened: true)
    static let mfaSignInFinalize = VendorOperation("mfaSignIn.finalize")
    static let mfaEnrollmentStart = VendorOperation("mfaEnrollment.start", sendMayHaveHappened: true)
    static let mfaEnrollmentFinalize = VendorOperation("mfaEnrollment.finalize")
}

extension FirebaseProvider {
    /// POSTs a JSON body to `path?key=…` and returns a 2xx answer; every other outcome throws the mapped error.
    func call(
        _ path: String, body: any Encodable, headers extra: HTTPFields = [:], operation: VendorOperation
    ) async throws(GatewayError) -> TransportResponse {
        var headers = extra
        headers[.contentType] = "application/json"
        headers[.accept] = "application/json"
        return try await client.send(
            .post, path + "?key=" + FormEncoding.escape(configuration.apiKey), headers: headers,
            body: try client.json(body), operation: operation
        ) { answer in
            FirebaseErrorMapping.map(
                envelope: try? JSONDecoder().decode(FirebaseWire.ErrorEnvelope.self, from: answer.body),
                httpStatus: answer.status, retryAfter: answer.retryAfter, providerID: id)
        }
    }
}
