import Foundation
import GatewayCore
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@testable import gateway

/// The Twilio Verify–compatible front door under `/twilio`: Twilio's forms in, Twilio's resources and errors
/// out, the engine behind it, one service routed to Sinch and one to Vonage.
@Suite("The Twilio-compatible front door")
struct TwilioCompatTests {
    static let account = "AC0123456789abcdef0123456789abcdef"
    static let apiKeySID = "SK0123456789abcdef0123456789abcdef"
    static let sinchService = "VA00000000000000000000000000005111"
    static let vonageService = "VA00000000000000000000000000007022"
    static let secret = "sk_test_twilio_front_0123456789"
    static let otherSecret = "sk_test_twilio_other_0123456789"
    static let readSecret = "sk_test_twilio_read_01234567890"

    static let config = """
        sandbox: true
        api_keys:
          - {name: backend, key_env: FRONT_KEY, scopes: [verify]}
          - {name: other, key_env: OTHER_KEY, scopes: [verify]}
          - {name: dashboard, key_env: READ_KEY, scopes: [read]}
        twilio_compat:
          account_sid: \(account)
          api_key_sids: [\(apiKeySID)]
          services:
            - {sid: \(sinchService), friendly_name: Sinch arm, providers: [sinch]}
            - {sid: \(vonageService), providers: [vonage], allow_approve: true}
        """

    static func run(
        config: String = config, _ body: @Sendable (any TestClientProtocol, GatewayRuntime) async throws -> Void
    ) async throws {
        let harness = GatewayHarness()
        let (app, runtime) = try await buildApplication(
            try harness.options(
                config: config,
                environment: ["FRONT_KEY": secret, "OTHER_KEY": otherSecret, "READ_KEY": readSecret]))
        try await app.test(.router) { client in try await body(client, runtime) }
    }

    static func basic(_ user: String = account, _ password: String = secret) -> String {
        "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }

    static func path(_ service: String, _ rest: String = "") -> String { "/twilio/v2/Services/\(service)\(rest)" }

    func form(_ pairs: [(String, String)]) -> String { FormEncoding.encode(pairs) }

    @Test("create, fetch, a wrong code (200 pending), the right one (approved with the gateway's token), on Sinch")
    func sinchRoundTrip() async throws {
        try await Self.run { client, runtime in
            let to = "+46701230001"
            let created = try await client.twilio(
                .post, Self.path(Self.sinchService, "/Verifications"), form: form([("To", to), ("Channel", "sms")]))
            #expect(created.status == .created)
            let sid = try #require(created.body["sid"] as? String)
            #expect(TwilioCompatSettings.isSID(sid, prefix: "VE"))
            #expect(created.body["status"] as? String == "pending" && created.body["valid"] as? Bool == false)
            #expect(created.body["service_sid"] as? String == Self.sinchService)
            #expect(created.body["account_sid"] as? String == Self.account)
            #expect(created.body["channel"] as? String == "sms" && created.body["to"] as? String == to)
            #expect(created.body["lookup"] is [String: Any] && created.body["sna"] is NSNull)
            let attempts = try #require(created.body["send_code_attempts"] as? [[String: Any]])
            #expect(attempts.count == 1 && (attempts.first?["attempt_sid"] as? String)?.hasPrefix("VL") == true)
            let gateway = try #require(created.body["gateway"] as? [String: Any])
            #expect(gateway["provider"] as? String == "sinch")
            #expect(gateway["route"] as? String == "twilio:\(Self.sinchService)")
            let id = try #require(gateway["verification_id"] as? String)
            #expect(id == "vf_" + sid.dropFirst(2))

            let fetched = try await client.twilio(.get, Self.path(Self.sinchService, "/Verifications/\(sid)"))
            #expect(fetched.status == .ok && fetched.body["sid"] as? String == sid)
            // The same verification on the native API.
            let native = try await client.call(.get, "/v1/verifications/\(id)", key: Self.secret)
            #expect(native.body["provider"] as? String == "sinch")

            let code = try sandboxCode(runtime, to: to)
            let wrong = code == "0000" ? "1111" : "0000"
            let check = Self.path(Self.sinchService, "/VerificationCheck")
            let miss = try await client.twilio(.post, check, form: form([("VerificationSid", sid), ("Code", wrong)]))
            #expect(miss.status == .ok && miss.body["status"] as? String == "pending")
            #expect(miss.body["valid"] as? Bool == false)
            let hit = try await client.twilio(
                .post, check, form: form([("To", to), ("VerificationSid", sid), ("Code", code)]))
            #expect(hit.status == .ok && hit.body["status"] as? String == "approved")
            #expect(hit.body["valid"] as? Bool == true)
            #expect((hit.body["gateway"] as? [String: Any])?["token"] is String)
        }
    }

    @Test("the Vonage service routes to Vonage; cancel on Sinch, Vonage's own refusal, approve where allowed")
    func vonageCancelApprove() async throws {
        try await Self.run { client, _ in
            let verifications = Self.path(Self.vonageService, "/Verifications")
            let first = try await client.twilio(
                .post, verifications, form: form([("To", "+14155550161"), ("Channel", "call"), ("Locale", "es")]))
            #expect(first.status == .created && first.body["channel"] as? String == "call")
            #expect((first.body["gateway"] as? [String: Any])?["provider"] as? String == "vonage")
            let sid = try #require(first.body["sid"] as? String)
            // Vonage refuses a cancel in its first 30 seconds (409): Twilio's shape, Vonage's code alongside.
            let early = try await client.twilio(
                .post, Self.path(Self.vonageService, "/Verifications/\(sid)"), form: form([("Status", "canceled")]))
            #expect(early.status == .badRequest && early.body["code"] as? Int == 60200, "\(early.body)")
            let gateway = try #require(early.body["gateway"] as? [String: Any])
            #expect(gateway["code"] as? String == "invalid_state")
            #expect((gateway["provider"] as? [String: Any])?["id"] as? String == "vonage")

            let onSinch = try await client.twilio(
                .post, Self.path(Self.sinchService, "/Verifications"),
                form: form([("To", "+46701230002"), ("Channel", "sms")]))
            let sinchSID = try #require(onSinch.body["sid"] as? String)
            let canceled = try await client.twilio(
                .post, Self.path(Self.sinchService, "/Verifications/\(sinchSID)"), form: form([("Status", "canceled")]))
            #expect(canceled.status == .ok && canceled.body["status"] as? String == "canceled", "\(canceled.body)")
            let again = try await client.twilio(.get, Self.path(Self.sinchService, "/Verifications/\(sinchSID)"))
            #expect(again.body["status"] as? String == "canceled")

            let second = try await client.twilio(
                .post, verifications, form: form([("To", "+14155550162"), ("Channel", "sms")]))
            let other = try #require(second.body["sid"] as? String)
            let approved = try await client.twilio(
                .post, Self.path(Self.vonageService, "/Verifications/\(other)"), form: form([("Status", "approved")]))
            #expect(approved.status == .ok && approved.body["status"] as? String == "approved")
            #expect(approved.body["valid"] as? Bool == true)
            // The Sinch service does not allow it: 60200.
            let third = try await client.twilio(
                .post, Self.path(Self.sinchService, "/Verifications"),
                form: form([("To", "+46701230003"), ("Channel", "sms")]))
            let refused = try await client.twilio(
                .post, Self.path(Self.sinchService, "/Verifications/\(third.body["sid"] as? String ?? "")"),
                form: form([("Status", "approved")]))
            #expect(refused.status == .badRequest && refused.body["code"] as? Int == 60200)
        }
    }

    @Test("Basic credentials: split at the first colon; no colon, an empty side or invalid UTF-8 is none")
    func basicCredentials() {
        func header(_ raw: [UInt8]) -> String { "Basic " + Data(raw).base64EncodedString() }
        let parsed = TwilioCompatAuthMiddleware.credentials(header(Array("AC1:sk:with:colons".utf8)))
        #expect(parsed?.user == "AC1" && parsed?.password == "sk:with:colons")
        #expect(
            TwilioCompatAuthMiddleware.credentials("basic  " + Data("AC1:é".utf8).base64EncodedString())?.password
                == "é")
        for raw in [Array("AC1".utf8), Array(":secret".utf8), Array("AC1:".utf8), [0x41, 0x3A, 0xFF]] {
            #expect(TwilioCompatAuthMiddleware.credentials(header(raw)) == nil, "\(raw)")
        }
        let token = Data("AC1:sk".utf8).base64EncodedString()
        #expect(TwilioCompatAuthMiddleware.credentials("  BASIC   \(token) \t")?.password == "sk")
        for other in [
            "Bearer \(token)", "Basic\(token)", "Basic\t\(token)", "Basic", "Basic ", "Basic !!!!", "Basics \(token)",
        ] {
            #expect(TwilioCompatAuthMiddleware.credentials(other) == nil, "\(other)")
        }
    }

    @Test("the resources written field by field are the bytes the generic JSON writer gives for them")
    func canonicalJSON() async throws {
        try await Self.run { client, runtime in
            let to = "+46701230208"
            func raw(_ method: HTTPRequest.Method, _ uri: String, _ form: String?) async throws -> Data {
                var headers: HTTPFields = [.authorization: Self.basic()]
                if form != nil { headers[.contentType] = "application/x-www-form-urlencoded" }
                return try await client.execute(
                    uri: uri, method: method, headers: headers, body: form.map { ByteBuffer(string: $0) }
                ) { Data($0.body.readableBytesView) }
            }
            let verifications = Self.path(Self.sinchService, "/Verifications")
            let created = try await raw(.post, verifications, form([("To", to), ("Channel", "sms")]))
            let resent = try await raw(.post, verifications, form([("To", to), ("Channel", "sms")]))
            let fetched = try await raw(.get, Self.path(Self.sinchService, "/Verifications/\(to)"), nil)
            let code = try sandboxCode(runtime, to: to)
            let check = Self.path(Self.sinchService, "/VerificationCheck")
            let missed = try await raw(.post, check, form([("To", to), ("Code", code == "0000" ? "1111" : "0000")]))
            let approved = try await raw(.post, check, form([("To", to), ("Code", code)]))
            for body in [created, resent, fetched, missed, approved] {
                let text = String(decoding: body, as: UTF8.self)
                let value = try #require(JSONValue.parse(body), "\(text)")
                #expect(value.sortedJSON == text)
            }
            let approvedValue = try #require(JSONValue.parse(approved))
            guard case .object(let fields) = approvedValue, case .object(let gateway)? = fields["gateway"] else {
                Issue.record("no gateway field: \(approvedValue)")
                return
            }
            #expect(gateway["token"] != nil && fields["valid"] == .bool(true))
        }
    }

    @Test("the form's Content-Type: in any case, with parameters and spaces; nothing else")
    func formContentType() {
        for type in [
            "application/x-www-form-urlencoded", "Application/X-WWW-Form-URLEncoded; charset=utf-8",
            " application/x-www-form-urlencoded ;charset=UTF-8",
        ] {
            #expect(TwilioCompatForm.isForm(type), "\(type)")
        }
        for type in [
            "application/json", "application/x-www-form-urlencodedx", "application/x\rwww-form-urlencoded",
            "multipart/form-data", "",
        ] {
            #expect(!TwilioCompatForm.isForm(type), "\(type)")
        }
    }

    @Test("authentication: the account SID or an API key SID with a gateway key's secret; anything else is 20003")
    func authentication() async throws {
        try await Self.run { client, _ in
            let service = Self.path(Self.sinchService)
            #expect(try await client.twilio(.get, service).status == .ok)
            #expect(try await client.twilio(.get, service, authorization: Self.basic(Self.apiKeySID)).status == .ok)
            for authorization in [
                Self.basic(Self.account, "sk_wrong_secret"), Self.basic("AC" + String(repeating: "f", count: 32)),
                "Bearer \(Self.secret)", "Basic !!!", "",
            ] {
                let refused = try await client.twilio(.get, service, authorization: authorization)
                #expect(refused.status == .unauthorized, "\(authorization)")
                #expect(refused.body["code"] as? Int == 20003)
                #expect(refused.body["more_info"] as? String == "https://www.twilio.com/docs/errors/20003")
                #expect((refused.body["gateway"] as? [String: Any])?["code"] as? String == "unauthorized")
                #expect(refused.headers[.wwwAuthenticate] != nil)
            }
            // A read key may fetch, not create.
            let read = Self.basic(Self.account, Self.readSecret)
            #expect(try await client.twilio(.get, service, authorization: read).status == .ok)
            let create = try await client.twilio(
                .post, Self.path(Self.sinchService, "/Verifications"),
                form: form([("To", "+46701230004"), ("Channel", "sms")]), authorization: read)
            #expect(create.status == .forbidden && create.body["code"] as? Int == 20403)
        }
    }

    @Test("errors in Twilio's shape with Twilio's codes, the taxonomy code alongside")
    func errors() async throws {
        try await Self.run { client, runtime in
            let verifications = Self.path(Self.sinchService, "/Verifications")
            let unknownService = try await client.twilio(
                .get, Self.path("VA" + String(repeating: "e", count: 32)))
            #expect(unknownService.status == .notFound && unknownService.body["code"] as? Int == 20404)
            let unknownSID = try await client.twilio(
                .get, Self.path(Self.sinchService, "/Verifications/VE" + String(repeating: "0", count: 32)))
            #expect(unknownSID.status == .notFound && unknownSID.body["code"] as? Int == 20404)
            let notASID = try await client.twilio(.get, Self.path(Self.sinchService, "/Verifications/nonsense"))
            #expect(notASID.status == .notFound && notASID.body["code"] as? Int == 20404)
            let noPath = try await client.twilio(.get, "/twilio/v2/Nothing")
            #expect(noPath.status == .notFound && noPath.body["code"] as? Int == 20404)

            for (pairs, status, code, name) in [
                ([("Channel", "sms")], 400, 60200, "To"),
                ([("To", "+46701230005")], 400, 60200, "Channel"),
                ([("To", "not a number"), ("Channel", "sms")], 400, 60200, "To"),
                ([("To", "+46701230005"), ("Channel", "pigeon")], 400, 60200, "Channel"),
                ([("To", "+46701230005"), ("Channel", "sna")], 400, 60204, "Channel"),
                ([("To", "+46701230005"), ("Channel", "sms"), ("CustomCode", "1234")], 400, 60204, "CustomCode"),
                ([("To", "+46701230005"), ("Channel", "sms"), ("Amount", "1")], 400, 60204, "Amount"),
                ([("To", "+46701230005"), ("Channel", "sms"), ("Payee", "Acme")], 400, 60204, "Payee"),
                ([("To", "+46701230005"), ("Channel", "sms"), ("To", "+46701230006")], 400, 60200, "To"),
                ([("To", "+46701230005"), ("Channel", "sms"), ("Colour", "red")], 400, 60200, "Colour"),
                ([("To", "+46701230005"), ("Channel", "sms"), ("DeviceIp", "1.2.3")], 400, 60200, "DeviceIp"),
                ([("To", "+46701230005"), ("Channel", "sms"), ("Tags", "[1]")], 400, 60200, "Tags"),
                ([("To", "+46701230005"), ("Channel", "sms"), ("RiskCheck", "maybe")], 400, 60200, "RiskCheck"),
            ] as [([(String, String)], Int, Int, String)] {
                let answer = try await client.twilio(.post, verifications, form: form(pairs))
                #expect(answer.status.code == status && answer.body["code"] as? Int == code, "\(pairs)")
                #expect((answer.body["message"] as? String)?.contains(name) == true, "\(pairs)")
                #expect(answer.body["status"] as? Int == status)
            }
            // A JSON body is not Twilio's.
            let json = try await client.twilio(
                .post, verifications, body: #"{"To": "+46701230005"}"#, contentType: "application/json")
            #expect(json.status == .badRequest && json.body["code"] as? Int == 60200)
            #expect(runtime.sandbox?.outbox.last(to: "+46701230005") == nil, "no refused request sent anything")

            // Checks: no target (60221), `To` alone with nothing pending (20404) or not a number (60200), too
            // many (60202), after approval (20404).
            let check = Self.path(Self.sinchService, "/VerificationCheck")
            let noTarget = try await client.twilio(.post, check, form: form([("Code", "1234")]))
            #expect(noTarget.body["code"] as? Int == 60221)
            let toOnly = try await client.twilio(.post, check, form: form([("To", "+46701230007"), ("Code", "1234")]))
            #expect(toOnly.status == .notFound && toOnly.body["code"] as? Int == 20404)
            let badTo = try await client.twilio(.post, check, form: form([("To", "not a number"), ("Code", "1234")]))
            #expect(badTo.status == .badRequest && badTo.body["code"] as? Int == 60200)
            let created = try await client.twilio(
                .post, verifications, form: form([("To", "+46701230007"), ("Channel", "sms")]))
            let sid = try #require(created.body["sid"] as? String)
            let code = try sandboxCode(runtime, to: "+46701230007")
            let wrong = code == "0000" ? "1111" : "0000"
            var codes: [Int] = []
            for _ in 0..<6 {
                let answer = try await client.twilio(
                    .post, check, form: form([("VerificationSid", sid), ("Code", wrong)]))
                codes.append(answer.status == .ok ? 200 : answer.body["code"] as? Int ?? 0)
            }
            #expect(codes == [200, 200, 200, 200, 60202, 60202], "the gateway's policy allows 5 checks")
            let tooMany = try await client.twilio(.post, check, form: form([("VerificationSid", sid), ("Code", code)]))
            #expect(tooMany.status == .tooManyRequests)
            #expect((tooMany.body["gateway"] as? [String: Any])?["code"] as? String == "max_attempts_reached")

            // A verification of one service is not found under the other.
            let elsewhere = try await client.twilio(
                .get, Self.path(Self.vonageService, "/Verifications/\(sid)"))
            #expect(elsewhere.status == .notFound && elsewhere.body["code"] as? Int == 20404)
            // Another key's verification is not found either.
            let foreign = try await client.twilio(
                .get, Self.path(Self.sinchService, "/Verifications/\(sid)"),
                authorization: Self.basic(Self.account, Self.otherSecret))
            #expect(foreign.status == .notFound)
        }
    }

    @Test("a double-tapped VerificationCheck: one approval, the other answer 20404, never two approvals")
    func doubleTap() async throws {
        try await Self.run { client, runtime in
            let check = Self.path(Self.sinchService, "/VerificationCheck")
            for round in 0..<4 {
                let to = "+4670123010\(round)"
                let created = try await client.twilio(
                    .post, Self.path(Self.sinchService, "/Verifications"), form: form([("To", to), ("Channel", "sms")]))
                let sid = try #require(created.body["sid"] as? String)
                let code = try sandboxCode(runtime, to: to)
                let body = form([("VerificationSid", sid), ("Code", code)])
                // Each answer: status, Twilio code, Twilio status, taxonomy code, whether it carries the token.
                let answers = try await withThrowingTaskGroup(of: (Int, Int?, String?, String?, Bool).self) { group in
                    for _ in 0..<2 {
                        group.addTask {
                            let answer = try await client.twilio(.post, check, form: body)
                            let gateway = answer.body["gateway"] as? [String: Any]
                            return (
                                Int(answer.status.code), answer.body["code"] as? Int, answer.body["status"] as? String,
                                gateway?["code"] as? String, gateway?["token"] is String
                            )
                        }
                    }
                    var all: [(Int, Int?, String?, String?, Bool)] = []
                    for try await answer in group { all.append(answer) }
                    return all
                }
                #expect(
                    answers.filter { $0.0 == 200 && $0.2 == "approved" && $0.4 }.count == 1,
                    "round \(round): \(answers)")
                #expect(
                    answers.filter { $0.0 == 404 && $0.1 == 20404 && $0.3 == "already_approved" }.count == 1,
                    "round \(round): \(answers)")
                let read = try await client.twilio(.get, Self.path(Self.sinchService, "/Verifications/\(sid)"))
                #expect(read.body["status"] as? String == "approved")
            }
        }
    }

    @Test(
        "by To: a repeated create resends the pending verification, a fetch and a check find it by number, only in its service and for its key"
    )
    func byDestination() async throws {
        try await Self.run { client, runtime in
            let to = "+46701230201"
            let verifications = Self.path(Self.sinchService, "/Verifications")
            let first = try await client.twilio(.post, verifications, form: form([("To", to), ("Channel", "sms")]))
            let sid = try #require(first.body["sid"] as? String)
            let firstCode = try sandboxCode(runtime, to: to)
            // The same number and channel again: the same verification, sent twice.
            let repeated = try await client.twilio(.post, verifications, form: form([("To", to), ("Channel", "sms")]))
            #expect(repeated.status == .created && repeated.body["sid"] as? String == sid, "\(repeated.body)")
            #expect((repeated.body["send_code_attempts"] as? [[String: Any]])?.count == 2)
            #expect(runtime.sandbox?.outbox.messages(to: to).count == 2, "the vendor sent it again")
            let id = "vf_" + sid.dropFirst(2)
            let native = try await client.call(.get, "/v1/verifications/\(id)", key: Self.secret)
            #expect(native.body["sends"] as? Int == 2)

            // A fetch with the number in the SID's place, `+` as is or encoded, finds it.
            let fetched = try await client.twilio(.get, Self.path(Self.sinchService, "/Verifications/\(to)"))
            #expect(fetched.status == .ok && fetched.body["sid"] as? String == sid, "\(fetched.body)")
            let encoded = try await client.twilio(.get, Self.path(Self.sinchService, "/Verifications/%2B46701230201"))
            #expect(encoded.body["sid"] as? String == sid)

            // A check by `To` alone: a wrong code is `pending`, the newest code approves.
            let check = Self.path(Self.sinchService, "/VerificationCheck")
            let code = try sandboxCode(runtime, to: to)
            let wrong = try #require(["0000", "1111", "2222"].first { $0 != code && $0 != firstCode })
            let miss = try await client.twilio(.post, check, form: form([("To", to), ("Code", wrong)]))
            #expect(miss.status == .ok && miss.body["sid"] as? String == sid, "\(miss.body)")
            #expect(miss.body["valid"] as? Bool == false)
            let hit = try await client.twilio(.post, check, form: form([("To", to), ("Code", code)]))
            #expect(hit.status == .ok && hit.body["sid"] as? String == sid, "\(hit.body)")
            #expect(hit.body["status"] as? String == "approved" && hit.body["valid"] as? Bool == true)
            // Nothing is pending any more: a check or a fetch by `To` is 20404.
            let none = try await client.twilio(.post, check, form: form([("To", to), ("Code", code)]))
            #expect(none.status == .notFound && none.body["code"] as? Int == 20404)
            let gone = try await client.twilio(.get, Self.path(Self.sinchService, "/Verifications/\(to)"))
            #expect(gone.status == .notFound && gone.body["code"] as? Int == 20404)
            // A `To` that disagrees with the `VerificationSid` is 20404.
            let disagree = try await client.twilio(
                .post, check, form: form([("To", "+46701230299"), ("VerificationSid", sid), ("Code", code)]))
            #expect(disagree.status == .notFound)

            // Another channel, another service or another key starts a verification of its own; by `To`, each
            // key sees only its own, in its service, the newest first.
            let other = "+46701230202"
            let bySMS = try await client.twilio(.post, verifications, form: form([("To", other), ("Channel", "sms")]))
            let smsSID = try #require(bySMS.body["sid"] as? String)
            let byCall = try await client.twilio(
                .post, verifications, form: form([("To", other), ("Channel", "call")]))
            let callSID = try #require(byCall.body["sid"] as? String)
            #expect(byCall.status == .created && callSID != smsSID, "\(byCall.body)")
            let onVonage = try await client.twilio(
                .post, Self.path(Self.vonageService, "/Verifications"), form: form([("To", other), ("Channel", "sms")]))
            #expect(onVonage.status == .created && onVonage.body["sid"] as? String != smsSID)
            let otherKey = try await client.twilio(
                .post, verifications, form: form([("To", other), ("Channel", "sms")]),
                authorization: Self.basic(Self.account, Self.otherSecret))
            let otherKeySID = try #require(otherKey.body["sid"] as? String)
            #expect(otherKey.status == .created && otherKeySID != smsSID)
            let newest = try await client.twilio(.get, Self.path(Self.sinchService, "/Verifications/\(other)"))
            #expect(newest.body["sid"] as? String == callSID, "\(newest.body)")
            let canceled = try await client.twilio(
                .post, Self.path(Self.sinchService, "/Verifications/\(other)"), form: form([("Status", "canceled")]))
            #expect(canceled.status == .ok && canceled.body["sid"] as? String == callSID)
            #expect(canceled.body["status"] as? String == "canceled")
            let next = try await client.twilio(.get, Self.path(Self.sinchService, "/Verifications/\(other)"))
            #expect(next.body["sid"] as? String == smsSID, "\(next.body)")
            let theirs = try await client.twilio(
                .get, Self.path(Self.sinchService, "/Verifications/\(other)"),
                authorization: Self.basic(Self.account, Self.otherSecret))
            #expect(theirs.body["sid"] as? String == otherKeySID)
        }
    }

    @Test("a repeat create refused a resend (60203) leaves the verification to resend: the next is refused too")
    func refusedResendKeepsTheVerification() async throws {
        try await Self.run(config: Self.config + "\npolicy: {max_sends: 2}\n") { client, runtime in
            let to = "+46701230207"
            let verifications = Self.path(Self.sinchService, "/Verifications")
            let first = try await client.twilio(.post, verifications, form: form([("To", to), ("Channel", "sms")]))
            let sid = try #require(first.body["sid"] as? String)
            let again = try await client.twilio(.post, verifications, form: form([("To", to), ("Channel", "sms")]))
            #expect(again.status == .created && again.body["sid"] as? String == sid, "\(again.body)")
            for _ in 0..<2 {
                // Each repeat resends the pending verification, which has had its two sends.
                let refused = try await client.twilio(
                    .post, verifications, form: form([("To", to), ("Channel", "sms")]))
                #expect(
                    refused.status == .tooManyRequests && refused.body["code"] as? Int == 60203,
                    "\(refused.status) \(refused.body)")
            }
            #expect(runtime.sandbox?.outbox.messages(to: to).count == 2)
            let fetched = try await client.twilio(.get, Self.path(Self.sinchService, "/Verifications/\(to)"))
            #expect(fetched.body["sid"] as? String == sid)
        }
    }

    @Test("a service whose profile is an experiment splits its starts between Sinch and Vonage")
    func experimentProfile() async throws {
        let service = "VA00000000000000000000000000000ab1"
        let config = """
            sandbox: true
            api_keys:
              - {name: backend, key_env: FRONT_KEY, scopes: [verify]}
            experiments:
              - name: sinch-vs-vonage
                salt: "2026-11"
                arms:
                  - {name: sinch, provider: sinch, weight: 50, control: true}
                  - {name: vonage, provider: vonage, weight: 50}
            twilio_compat:
              account_sid: \(Self.account)
              services:
                - {sid: \(service), experiment: sinch-vs-vonage}
            """
        let (app, _) = try await buildApplication(
            try GatewayHarness().options(config: config, environment: ["FRONT_KEY": Self.secret]))
        try await app.test(.router) { client in
            var arms: [String: String] = [:]
            for index in 0..<16 {
                let to = "+1415555\(String(format: "%04d", 200 + index))"
                let created = try await client.twilio(
                    .post, Self.path(service, "/Verifications"), form: form([("To", to), ("Channel", "sms")]))
                #expect(created.status == .created, "\(created.body)")
                let gateway = try #require(created.body["gateway"] as? [String: Any])
                #expect(gateway["experiment"] as? String == "sinch-vs-vonage")
                #expect(gateway["route"] as? String == "twilio:\(service)")
                let arm = try #require(gateway["experiment_arm"] as? String)
                #expect(gateway["provider"] as? String == arm, "the arm's provider sent it")
                arms[to] = arm
            }
            #expect(Set(arms.values) == ["sinch", "vonage"], "16 numbers reach both arms: \(arms)")
        }
    }

    @Test("translation: channels, statuses and SIDs both ways")
    func translation() throws {
        #expect(TwilioCompatController.twilioChannel(.voice) == "call")
        #expect(TwilioCompatController.channels["call"] == .voice)
        #expect(TwilioCompatController.twilioStatus(.denied) == "failed")
        #expect(TwilioCompatController.twilioStatus(.maxAttemptsReached) == "max_attempts_reached")
        let id = VerificationService.newID()
        let sid = TwilioCompatController.sid(verificationID: id)
        #expect(TwilioCompatSettings.isSID(sid, prefix: "VE"))
        #expect(TwilioCompatController.verificationID(sid: sid) == id)
        #expect(TwilioCompatController.verificationID(sid: "VE" + sid.dropFirst(2).uppercased()) == id)
        #expect(TwilioCompatController.verificationID(sid: "VA" + sid.dropFirst(2)) == nil)
        #expect(TwilioCompatController.attemptSID(id, index: 0) == TwilioCompatController.attemptSID(id, index: 0))
        #expect(TwilioCompatController.attemptSID(id, index: 0) != TwilioCompatController.attemptSID(id, index: 1))
        for code in GatewayError.Code.allCases {
            let (status, twilio) = TwilioCompatError.twilioCode(for: code)
            #expect((400...599).contains(status) && (20000...69999).contains(twilio), "\(code)")
        }
    }

    @Test("check-config reports every twilio_compat problem where it is")
    func configProblems() throws {
        let (check, _) = try ConfigReaderTests.check(
            """
            sandbox: true
            twilio_compat:
              account_sid: AC123
              api_key_sids: [SK0123456789abcdef0123456789abcdef, nope]
              services:
                - {sid: VA0123456789abcdef0123456789abcdef, providers: [sinch, nexmo]}
                - {sid: VA0123456789abcdef0123456789abcdef, providers: [sinch]}
                - {sid: VB0123456789abcdef0123456789abcdef, providers: [sinch]}
                - {sid: VA1123456789abcdef0123456789abcdef, experiment: missing}
                - {sid: VA2123456789abcdef0123456789abcdef}
                - {sid: VA3123456789abcdef0123456789abcdef, providers: [sinch], code_length: 12, colour: red}
            """)
        let lines = check.problems.byPosition().map { $0.position?.line ?? 0 }
        #expect(lines == [3, 4, 6, 7, 8, 9, 10, 11, 11], "\(check.problems)")
        let messages = check.problems.map(\.message).joined(separator: "\n")
        #expect(messages.contains("unknown provider `nexmo`"))
        #expect(messages.contains("no experiment named `missing`"))
        #expect(messages.contains("give `providers` or `experiment`"))
    }
}

extension TestClientProtocol {
    /// A Twilio-style request: form body, HTTP Basic with the test account; the answer's JSON object.
    @discardableResult
    func twilio(
        _ method: HTTPRequest.Method, _ uri: String, form: String? = nil, body: String? = nil,
        contentType: String = "application/x-www-form-urlencoded",
        authorization: String = TwilioCompatTests.basic()
    ) async throws -> (status: HTTPResponse.Status, body: [String: Any], headers: HTTPFields) {
        var headers = HTTPFields()
        if !authorization.isEmpty { headers[.authorization] = authorization }
        let payload = form ?? body
        if payload != nil { headers[.contentType] = contentType }
        return try await execute(
            uri: uri, method: method, headers: headers, body: payload.map { ByteBuffer(string: $0) }
        ) { response in
            let data = Data(response.body.readableBytesView)
            let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
            return (response.status, object, response.headers)
        }
    }
}
