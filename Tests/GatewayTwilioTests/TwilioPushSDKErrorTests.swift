import Foundation
import GatewayCore
import GatewayTestSupport
import Testing

@testable import GatewayTwilio

@Suite("Twilio push SDK errors")
struct TwilioPushSDKErrorTests {
    /// Every case of twilio-verify-ios's error model in the vendor notes `docs/vendors/twilio.md` §5.
    static let documentedCases: [String] = [
        "TwilioVerifyError.networkError", "TwilioVerifyError.mapperError", "TwilioVerifyError.storageError",
        "TwilioVerifyError.inputError", "TwilioVerifyError.keyStorageError", "TwilioVerifyError.initializationError",
        "TwilioVerifyError.authenticationTokenError",
        "InputError.invalidInput", "InputError.invalidPayload", "InputError.expiredChallenge",
        "InputError.alreadyUpdatedChallenge", "InputError.notUpdatedChallenge", "InputError.invalidChallenge",
        "InputError.emptyChallengeSid", "InputError.invalidUpdateChallengePayload", "InputError.emptyFactorSid",
        "InputError.wrongFactor", "InputError.invalidFactor", "InputError.signatureFields",
        "NetworkError.invalidURL", "NetworkError.invalidBody", "NetworkError.invalidResponse",
        "NetworkError.failureStatusCode", "NetworkError.invalidData",
        "MapperError.invalidDate", "MapperError.invalidArgument", "MapperError.illegalArgument",
        "StorageError.error", "SecureStorageError", "JwtSignerError.invalidFormat",
        "AuthenticationError.invalidFactor", "AuthenticationError.invalidKeyPair",
        "KeychainError.unexpectedError", "KeychainError.unableToCopyItem", "KeychainError.unableToGeneratePublicKey",
        "KeychainError.unableToGeneratePrivateKey", "KeychainError.invalidStatusCode",
        "KeychainError.errorCreatingAccessControl", "KeychainError.invalidProtection",
        "KeychainError.createSignatureError", "KeyManagerError.invalidStatusCode",
    ]

    /// What each case must become, written out independently of the table.
    static let expected: [String: GatewayError.Code] = [
        "TwilioVerifyError.networkError": .providerUnavailable, "TwilioVerifyError.mapperError": .providerError,
        "TwilioVerifyError.storageError": .providerError, "TwilioVerifyError.inputError": .invalidRequest,
        "TwilioVerifyError.keyStorageError": .appVerificationFailed,
        "TwilioVerifyError.initializationError": .providerError,
        "TwilioVerifyError.authenticationTokenError": .appVerificationFailed,
        "InputError.invalidInput": .invalidRequest, "InputError.invalidPayload": .invalidRequest,
        "InputError.expiredChallenge": .expired, "InputError.alreadyUpdatedChallenge": .canceled,
        "InputError.notUpdatedChallenge": .providerError, "InputError.invalidChallenge": .invalidRequest,
        "InputError.emptyChallengeSid": .invalidRequest, "InputError.invalidUpdateChallengePayload": .invalidRequest,
        "InputError.emptyFactorSid": .invalidRequest, "InputError.wrongFactor": .invalidRequest,
        "InputError.invalidFactor": .notEnrolled, "InputError.signatureFields": .providerError,
        "NetworkError.invalidURL": .providerError, "NetworkError.invalidBody": .providerError,
        "NetworkError.invalidResponse": .providerError, "NetworkError.failureStatusCode": .providerError,
        "NetworkError.invalidData": .providerError,
        "MapperError.invalidDate": .providerError, "MapperError.invalidArgument": .providerError,
        "MapperError.illegalArgument": .providerError, "StorageError.error": .providerError,
        "SecureStorageError": .providerError, "JwtSignerError.invalidFormat": .appVerificationFailed,
        "AuthenticationError.invalidFactor": .notEnrolled, "AuthenticationError.invalidKeyPair": .appVerificationFailed,
        "KeychainError.unexpectedError": .appVerificationFailed,
        "KeychainError.unableToCopyItem": .appVerificationFailed,
        "KeychainError.unableToGeneratePublicKey": .appVerificationFailed,
        "KeychainError.unableToGeneratePrivateKey": .appVerificationFailed,
        "KeychainError.invalidStatusCode": .appVerificationFailed,
        "KeychainError.errorCreatingAccessControl": .appVerificationFailed,
        "KeychainError.invalidProtection": .appVerificationFailed,
        "KeychainError.createSignatureError": .appVerificationFailed,
        "KeyManagerError.invalidStatusCode": .appVerificationFailed,
    ]

    @Test("every documented SDK case has exactly one row, and no row is undocumented")
    func coverage() {
        let names = TwilioPushSDKErrors.cases.map(\.name)
        #expect(Set(names).count == names.count)
        #expect(Set(names) == Set(Self.documentedCases))
        #expect(Set(Self.expected.keys) == Set(Self.documentedCases))
    }

    @Test("each SDK case maps as the table says, under an SDK code", arguments: TwilioPushSDKErrors.cases)
    func each(_ sdkCase: VendorErrorRow) {
        let code = TwilioPushSDKErrors.code(of: sdkCase)
        #expect((60401...60407).contains(code))
        #expect(sdkCase.mapsTo == Self.expected[sdkCase.name])
        let error = TwilioPushSDKErrors.map(code: code, cause: sdkCase.name, providerID: "twilio")
        #expect(error.code == sdkCase.mapsTo)
        #expect(error.vendor?.code == String(code))
        #expect(error.message.contains(sdkCase.name))
    }

    @Test("the seven TwilioVerifyError codes map on their own, matching the numeric table")
    func codesAlone() {
        for code in 60401...60407 {
            let error = TwilioPushSDKErrors.map(code: code, cause: nil, providerID: "twilio")
            #expect(error.code == TwilioErrorMapping.row(for: code)?.mapsTo, "\(code)")
        }
        #expect(TwilioPushSDKErrors.map(code: 60499, cause: nil, providerID: "t").code == .providerError)
    }

    @Test("a failure status carrying Twilio's APIError code is mapped by that code")
    func failureStatusUsesAPICode() {
        let expired = TwilioPushSDKErrors.map(
            code: 60401, cause: "NetworkError.failureStatusCode", apiErrorCode: 60323, providerID: "twilio")
        #expect(expired.code == .expired)
        #expect(expired.vendor?.code == "60323")
        let denied = TwilioPushSDKErrors.map(
            code: 60401, cause: "NetworkError.failureStatusCode", apiErrorCode: 60324, providerID: "twilio")
        #expect(denied.code == .incorrectCode)
    }

    @Test("docs/errors.md prints every SDK case with its code, mapping and a note")
    func documented() throws {
        let lines = try ErrorsDoc.lines()
        for sdkCase in TwilioPushSDKErrors.cases {
            let code = TwilioPushSDKErrors.code(of: sdkCase)
            ErrorsDoc.expectNotedLine("| `\(sdkCase.name)` | \(code) | `\(sdkCase.mapsTo.rawValue)` | ", in: lines)
        }
    }

    @Test(
        "who can meet each 603xx and 604xx code",
        arguments: TwilioErrorMapping.rows.compactMap { $0.code.flatMap { Int($0) } }.filter {
            (60300..<60500).contains($0)
        })
    func audience(_ code: Int) throws {
        let audience = TwilioErrorMapping.audience(of: code)
        if (60401...60407).contains(code) { #expect(audience == .app) }
        if [60324, 60322, 60311, 60313, 60314].contains(code) { #expect(audience == .app) }
        if [60318, 60312, 60309, 60307, 60305].contains(code) { #expect(audience == .backend) }
        let lines = try ErrorsDoc.lines()
        let line = lines.first { $0.hasPrefix("| \(code) |") }
        #expect(line?.hasSuffix("| \(audience.rawValue) |") == true, "docs line for \(code)")
    }
}
