import Foundation
import GatewayCore
import HTTPTypes
import Logging

extension FirebaseProvider {
    /// The Identity Toolkit method a call is for; a send is the one whose ambiguous failure may have
    /// delivered an SMS.
    enum Operation: String, Sendable {
        case send = "sendVerificationCode"
        case signIn = "signInWithPhoneNumber"
        case mfaSignInStart = "mfaSignIn.start"
        case mfaSignInFinalize = "mfaSignIn.finalize"
        case mfaEnrollmentStart = "mfaEnrollment.start"
        case mfaEnrollmentFinalize = "mfaEnrollment.finalize"

        /// The calls that send an SMS.
        var sendMayHaveHappened: Bool { self == .send || self == .mfaSignInStart || self == .mfaEnrollmentStart }
    }

    /// POSTs a JSON body to `path?key=…` and returns a 2xx answer; every other outcome throws the mapped
    /// error. Logs carry the operation and the outcome, never the body (numbers, codes, sessionInfo).
    func call(
        _ path: String, body: some Encodable, headers extra: HTTPFields, operation: Operation
    ) async throws(GatewayError) -> TransportResponse {
        guard
            let url = URL(
                string: configuration.baseURL + path + "?key=" + FormEncoding.escape(configuration.apiKey))
        else {
            throw GatewayError.internal("The Firebase base URL does not form a valid request URL.")
        }
        let data: Data
        do {
            data = try JSONEncoder().encode(body)
        } catch {
            throw GatewayError.internal("The Firebase request could not be encoded.")
        }
        var headers = extra
        headers[.contentType] = "application/json"
        headers[.accept] = "application/json"
        headers[.userAgent] = "verification-gateway"
        let request = TransportRequest(method: .post, url: url, headerFields: headers, body: data)
        let response: TransportResponse
        do {
            response = try await transport.send(request, timeout: requestTimeout)
        } catch {
            logger.warning(
                "firebase call failed without an answer",
                metadata: [
                    "provider.id": "\(id)", "firebase.operation": "\(operation.rawValue)",
                    "transport.error": "\(Self.name(of: error))",
                ])
            throw transportFailure(error, operation: operation)
        }
        let status = response.status.code
        guard !(200..<300).contains(status) else { return response }
        let envelope = try? JSONDecoder().decode(FirebaseWire.ErrorEnvelope.self, from: response.body)
        let retryAfter = response.headerFields[.retryAfter].flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        let error = FirebaseErrorMapping.map(
            envelope: envelope, httpStatus: status, retryAfter: retryAfter, providerID: id)
        logger.info(
            "firebase refused a call",
            metadata: [
                "provider.id": "\(id)", "firebase.operation": "\(operation.rawValue)", "http.status": "\(status)",
                "firebase.code": "\(error.vendor?.code ?? "-")", "error.code": "\(error.code.rawValue)",
            ])
        throw error
    }

    /// The failure's kind only: a transport's description may quote the URL, which carries the API key.
    static func name(of error: TransportError) -> String {
        switch error {
        case .timeout: return "timeout"
        case .connectFailed: return "connect_failed"
        case .connectionReset: return "connection_reset"
        }
    }

    /// The error for a 2xx answer the provider cannot read. After a send, Firebase accepted it.
    func malformed(operation: Operation, httpStatus: Int) -> GatewayError {
        logger.warning(
            "firebase answered with an unreadable body",
            metadata: [
                "provider.id": "\(id)", "firebase.operation": "\(operation.rawValue)", "http.status": "\(httpStatus)",
            ])
        return GatewayError(
            .providerError, "Firebase answered \(operation.rawValue) with a body the gateway cannot read.",
            vendor: GatewayError.VendorDetail(providerID: id, code: nil, httpStatus: httpStatus),
            sendMayHaveHappened: operation.sendMayHaveHappened)
    }

    /// A call that got no HTTP answer. Only a refused connection proves Firebase never saw the request.
    func transportFailure(_ error: TransportError, operation: Operation) -> GatewayError {
        .transport(error, vendor: "Firebase", providerID: id, sendMayHaveHappened: operation.sendMayHaveHappened)
    }
}
