import Foundation
import GatewayCore
import HTTPTypes
import Testing

@testable import GatewaySinch

@Suite("Sinch signing")
struct SinchSigningTests {
    // The vectors were computed independently of this code, by hand with Python's hmac, hashlib and base64:
    //   md5 = base64(md5(body)); sts = f"{verb}\n{md5}\n{ctype}\nx-timestamp:{ts}\n{path}"
    //   sig = base64(hmac.new(b64decode(secret), sts.encode(), sha256).digest())
    static let secret = "JViE5vDor0Sw3WllZka15Q=="
    static let body = #"{"identity":{"type":"number","endpoint":"+46700000000"},"method":"sms"}"#

    @Test("a POST with a body signs to the fixed vector")
    func postVector() throws {
        let key = try #require(SinchSigning.key(fromSecret: Self.secret))
        #expect(SinchSigning.contentMD5(Data(Self.body.utf8)) == "pKXhl9sOsUjClws1oANArA==")
        let header = SinchSigning.authorization(
            applicationKey: "5F5C418A0F914BBC8234A9BF5EDDAD97", key: key, method: "POST", body: Data(Self.body.utf8),
            contentType: "application/json; charset=UTF-8", timestamp: "2014-06-04T13:41:58Z",
            resource: "/verification/v1/verifications")
        #expect(header == "Application 5F5C418A0F914BBC8234A9BF5EDDAD97:VxDSe5uE8VklXS2/jBE/367uctrGNs2/faurGCbRUwk=")
    }

    @Test("a GET signs an empty Content-MD5 and still signs the Content-Type")
    func getVector() throws {
        let key = try #require(SinchSigning.key(fromSecret: Self.secret))
        #expect(SinchSigning.contentMD5(Data()) == "")
        let text = SinchSigning.stringToSign(
            method: "get", contentMD5: "", contentType: "application/json", timestamp: "2014-06-04T13:41:58Z",
            resource: "/verification/v1/verifications/id/1234567890")
        #expect(
            text
                == "GET\n\napplication/json\nx-timestamp:2014-06-04T13:41:58Z\n/verification/v1/verifications/id/1234567890"
        )
        #expect(SinchSigning.signature(text, key: key) == "iSyP+Z6B9m/GwBe3C5+n3WtLUqiG6xqDtPs0YVatQs8=")
    }

    @Test("the secret is base64-decoded before use, with or without padding; garbage is refused")
    func secretDecoding() {
        #expect(SinchSigning.key(fromSecret: "c2FuZGJveA==") == Data("sandbox".utf8))
        #expect(SinchSigning.key(fromSecret: "c2FuZGJveA") == Data("sandbox".utf8))
        #expect(SinchSigning.key(fromSecret: "not base64!") == nil)
        #expect(SinchSigning.key(fromSecret: "") == nil)
    }

    @Test("x-timestamp is read in Sinch's form and in Python's isoformat with microseconds and an offset")
    func timestamps() throws {
        let plain = try #require(VendorDate.parseISO8601("2014-06-04T13:41:58Z"))
        let python = try #require(VendorDate.parseISO8601("2014-06-04T13:41:58.123456+00:00"))
        #expect(abs(python.timeIntervalSince(plain) - 0.123) < 0.001)
        #expect(VendorDate.iso8601(plain) == "2014-06-04T13:41:58Z")
        #expect(VendorDate.parseISO8601("yesterday") == nil)
    }

    static func signedHeaders(
        secret: String = SinchSandbox.applicationSecret, key applicationKey: String = SinchSandbox.applicationKey,
        body: Data, resource: String, at date: Date
    ) throws -> HTTPFields {
        let key = try #require(SinchSigning.key(fromSecret: secret))
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        headers[SinchSigning.timestampHeader] = VendorDate.iso8601(date)
        headers[.authorization] = SinchSigning.authorization(
            applicationKey: applicationKey, key: key, method: "POST", body: body, contentType: "application/json",
            timestamp: VendorDate.iso8601(date), resource: resource)
        return headers
    }

    @Test("verification accepts a good signature and names each refusal with Sinch's error code")
    func verification() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let body = Data(Self.body.utf8)
        func verify(_ headers: HTTPFields, body: Data = body, allowBasic: Bool = false) -> SinchSigning.Refusal? {
            let result = SinchSigning.verify(
                headers: headers, method: "POST", body: body, resources: ["/callbacks/sinch"],
                applicationKey: SinchSandbox.applicationKey, secret: SinchSandbox.applicationSecret, now: now,
                tolerance: 600, allowBasic: allowBasic)
            if case .failure(let refusal) = result { return refusal }
            return nil
        }
        let good = try Self.signedHeaders(body: body, resource: "/callbacks/sinch", at: now)
        #expect(verify(good) == nil)
        #expect(verify(good, body: Data("{}".utf8)) == .badSignature)
        #expect(
            verify(try Self.signedHeaders(secret: "d3Jvbmc=", body: body, resource: "/callbacks/sinch", at: now))
                == .badSignature)
        #expect(verify(try Self.signedHeaders(body: body, resource: "/callbacks/other", at: now)) == .badSignature)
        #expect(
            verify(try Self.signedHeaders(key: "someone-else", body: body, resource: "/callbacks/sinch", at: now))
                == .unknownKey)
        #expect(
            verify(try Self.signedHeaders(body: body, resource: "/callbacks/sinch", at: now.addingTimeInterval(-601)))
                == .staleTimestamp)
        var noStamp = good
        noStamp[SinchSigning.timestampHeader] = nil
        #expect(verify(noStamp) == .missingTimestamp)
        var none = good
        none[.authorization] = nil
        #expect(verify(none) == .missingAuthorization)
        var publicScheme = good
        publicScheme[.authorization] = "Application " + SinchSandbox.applicationKey
        #expect(verify(publicScheme) == .weakScheme)
        var basic = good
        basic[.authorization] = VendorHTTPClient.basicAuthorization(
            SinchSandbox.applicationKey, SinchSandbox.applicationSecret)
        #expect(verify(basic) == .malformedAuthorization)
        #expect(verify(basic, allowBasic: true) == nil)
        basic[.authorization] = VendorHTTPClient.basicAuthorization(SinchSandbox.applicationKey, "wrong")
        #expect(verify(basic, allowBasic: true) == .badSignature)
        #expect(SinchSigning.Refusal.badSignature.errorCode == 40102)
        #expect(SinchSigning.Refusal.missingTimestamp.errorCode == 40101)
    }
}
