import Foundation
import GatewayCore
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import gateway

/// IDaaS SMS login through the gateway's API and the sandbox's IDaaS emulator: the slider is solved from
/// the challenge's own images, as an app (or scripts/idaas_walkthrough.py) would.
@Suite("The verification API over the IDaaS sandbox")
struct IDaaSAPITests {
    static let number = "+8613800138000"

    /// The x where the piece's opaque pixels cover the darkest part of the background (the cut-out). Reads
    /// only what the emulator's encoder writes: 8-bit RGB/RGBA, stored deflate blocks, filter 0.
    static func solve(_ challenge: [String: Any]) throws -> Int {
        let data = try #require(challenge["data"] as? [String: Any])
        let backgroundText = try #require(data["background_png_base64"] as? String)
        let pieceText = try #require(data["piece_png_base64"] as? String)
        let background = try pixels(try #require(Data(base64Encoded: backgroundText)))
        let piece = try pixels(try #require(Data(base64Encoded: pieceText)))
        var mask: [(Int, Int)] = []
        for y in 0..<piece.height {
            for x in 0..<piece.width where piece.bytes[(y * piece.width + x) * 4 + 3] > 0 { mask.append((x, y)) }
        }
        var best = (x: 0, sum: Int.max)
        for left in 0...(background.width - piece.width) {
            let sum = mask.reduce(0) { total, point in
                let index = (point.1 * background.width + left + point.0) * background.channels
                return total + Int(background.bytes[index]) + Int(background.bytes[index + 1])
                    + Int(background.bytes[index + 2])
            }
            if sum < best.sum { best = (left, sum) }
        }
        return best.x
    }

    static func pixels(_ data: Data) throws -> (width: Int, height: Int, channels: Int, bytes: [UInt8]) {
        let bytes = [UInt8](data)
        func u32(_ at: Int) -> Int { bytes[at..<(at + 4)].reduce(0) { $0 << 8 | Int($1) } }
        var offset = 8
        var width = 0
        var height = 0
        var channels = 3
        var idat: [UInt8] = []
        while offset + 12 <= bytes.count {
            let length = u32(offset)
            let type = String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self)
            if type == "IHDR" {
                width = u32(offset + 8)
                height = u32(offset + 12)
                channels = bytes[offset + 17] == 6 ? 4 : 3
            } else if type == "IDAT" {
                idat += bytes[(offset + 8)..<(offset + 8 + length)]
            }
            offset += 12 + length
        }
        var raw: [UInt8] = []
        var at = 2
        while at + 5 <= idat.count {
            let length = Int(idat[at + 1]) | Int(idat[at + 2]) << 8
            raw += idat[(at + 5)..<(at + 5 + length)]
            let final = idat[at] & 1 == 1
            at += 5 + length
            if final { break }
        }
        let stride = width * channels
        var out: [UInt8] = []
        for row in 0..<height { out += raw[(row * (stride + 1) + 1)..<((row + 1) * (stride + 1))] }
        #expect(out.count == width * height * channels)
        return (width, height, channels, out)
    }

    @Test("start, a wrong slider that sends nothing, the slider solved from its image, the SMS, check, tokens, refresh")
    func endToEnd() async throws {
        try await GatewayHarness().run { client, runtime in
            let countries = try await client.call(.get, "/v1/countries")
            let list = try #require(countries.body["countries"] as? [[String: Any]])
            func serves(_ region: String) -> Bool {
                let entry = list.first { $0["region"] as? String == region }
                return (entry?["providers"] as? [[String: Any]])?.contains { $0["id"] as? String == "idaas" } == true
            }
            #expect(serves("CN") && serves("HK") && !serves("US") && !serves("GB"))

            let start = try await client.call(
                .post, "/v1/verifications",
                json:
                    #"{"to": "\#(Self.number)", "provider": "idaas", "client_context": {"ip": "203.0.113.9", "user_agent": "Android 14 app", "device_id": "d-1"}}"#
            )
            #expect(start.status == .created)
            #expect(start.body["sends"] as? Int == 0)
            let id = try #require(start.body["id"] as? String)
            let action = try #require(start.body["next_action"] as? [String: Any])
            let first = try #require(action["solve_challenge"] as? [String: Any])
            #expect(first["kind"] as? String == "slider_captcha")
            #expect(runtime.sandbox?.outbox.last(to: Self.number) == nil)

            let early = try await client.call(.post, "/v1/verifications/\(id)/check", json: #"{"code": "123456"}"#)
            #expect(early.body.errorCode == "invalid_state")

            let x = try Self.solve(first)
            let wrong = try await client.call(
                .post, "/v1/verifications/\(id)/challenge", json: #"{"answer": {"x": \#(x > 150 ? x - 70 : x + 70)}}"#)
            #expect(wrong.status == .forbidden)
            #expect(wrong.body.errorCode == "app_verification_failed")
            #expect(runtime.sandbox?.outbox.last(to: Self.number) == nil)
            let fresh = try #require(
                (wrong.body.error?["next_action"] as? [String: Any])?["solve_challenge"] as? [String: Any])

            let solved = try await client.call(
                .post, "/v1/verifications/\(id)/challenge", json: #"{"answer": {"x": \#(try Self.solve(fresh))}}"#)
            #expect(solved.status == .ok)
            #expect(solved.body["sends"] as? Int == 1)
            let code = try #require(runtime.sandbox?.outbox.last(to: Self.number)?.code)

            let bad = try await client.call(
                .post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(code == "000000" ? "111111" : "000000")"}"#
            )
            #expect(bad.body.errorCode == "incorrect_code")
            let check = try await client.call(.post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(code)"}"#)
            #expect(check.body["status"] as? String == "approved")
            let tokens = try #require(check.body["provider_tokens"] as? [String: Any])
            #expect(tokens["expire"] as? Int == 432_000)
            #expect((tokens["id_token"] as? String)?.split(separator: ".").count == 3)
            let session = try #require(tokens["session_token"] as? String)

            let refresh = try await client.call(
                .post, "/v1/providers/idaas/actions/refresh_id_token",
                json: #"{"input": {"session_token": "\#(session)"}}"#)
            #expect(refresh.status == .ok)
            let output = try #require(refresh.body["output"] as? [String: Any])
            #expect(output["session_token"] as? String != session)
            let old = try await client.call(
                .post, "/v1/providers/idaas/actions/refresh_id_token",
                json: #"{"input": {"session_token": "\#(session)"}}"#)
            #expect(old.status.code == 422)
            #expect(old.body.errorCode == "invalid_token")
            let verify = try await client.call(
                .post, "/v1/providers/idaas/actions/verify_id_token",
                json: #"{"input": {"id_token": "\#(output["id_token"] as? String ?? "")"}}"#)
            #expect((verify.body["output"] as? [String: Any])?["valid"] as? Bool == true)
        }
    }

    @Test("a resend needs a new slider; a number outside the tenant's area codes never reaches IDaaS")
    func resendAndRegions() async throws {
        try await GatewayHarness().run { client, runtime in
            let start = try await client.call(
                .post, "/v1/verifications", json: #"{"to": "\#(Self.number)", "provider": "idaas"}"#)
            let id = try #require(start.body["id"] as? String)
            let first = try #require(
                (start.body["next_action"] as? [String: Any])?["solve_challenge"] as? [String: Any])
            _ = try await client.call(
                .post, "/v1/verifications/\(id)/challenge", json: #"{"answer": {"x": \#(try Self.solve(first))}}"#)
            let resend = try await client.call(.post, "/v1/verifications/\(id)/resend", json: "{}")
            #expect(resend.status == .ok)
            let next = try #require(
                (resend.body["next_action"] as? [String: Any])?["solve_challenge"] as? [String: Any])
            #expect(runtime.sandbox?.outbox.messages(to: Self.number).count == 1)
            let solved = try await client.call(
                .post, "/v1/verifications/\(id)/challenge", json: #"{"answer": {"x": \#(try Self.solve(next))}}"#)
            #expect(solved.body["sends"] as? Int == 2)
            #expect(runtime.sandbox?.outbox.messages(to: Self.number).count == 2)

            let us = try await client.call(
                .post, "/v1/verifications", json: #"{"to": "+16505553434", "provider": "idaas"}"#)
            // Routing skips IDaaS for a region its area codes lack (`country_not_served`); with no other
            // provider for it the answer is final: `unsupported_destination`, not a retryable 503.
            #expect(us.status.code == 400)
            #expect(us.body.errorCode == "unsupported_destination")
            #expect(runtime.sandbox?.outbox.last(to: "+16505553434") == nil)
        }
    }

    /// A started IDaaS verification whose slider is solved: its id and the code sent.
    static func sent(_ client: some TestClientProtocol, _ runtime: GatewayRuntime, to number: String = number)
        async throws -> (String, String)
    {
        let start = try await client.call(
            .post, "/v1/verifications", json: #"{"to": "\#(number)", "provider": "idaas"}"#)
        let id = try #require(start.body["id"] as? String)
        let challenge = try #require(
            (start.body["next_action"] as? [String: Any])?["solve_challenge"] as? [String: Any])
        let solved = try await client.call(
            .post, "/v1/verifications/\(id)/challenge", json: #"{"answer": {"x": \#(try solve(challenge))}}"#)
        #expect(solved.status == .ok)
        #expect(solved.body["content_language"] as? String == "zh")
        return (id, try #require(runtime.sandbox?.outbox.last(to: number)?.code))
    }

    /// The vendor checks the verification's timeline records.
    static func vendorChecks(_ client: some TestClientProtocol, _ id: String) async throws -> Int {
        let read = try await client.call(.get, "/v1/verifications/\(id)?include=timeline")
        let events = try #require(read.body["timeline"] as? [[String: Any]])
        return events.filter { event in
            let operation = (event["detail"] as? [String: Any])?["operation"] as? String
            return event["kind"] as? String == "provider_call" && operation == "check"
        }.count
    }

    @Test("the tenant's area codes are read at startup: /v1/countries lists IDaaS for SG before any start")
    func areaCodesAtStartup() async throws {
        try await GatewayHarness().run { client, _ in
            let countries = try await client.call(.get, "/v1/countries")
            let list = try #require(countries.body["countries"] as? [[String: Any]])
            let singapore = list.first { $0["region"] as? String == "SG" }
            let providers = (singapore?["providers"] as? [[String: Any]])?.compactMap { $0["id"] as? String }
            #expect(providers?.contains("idaas") == true)
        }
    }

    @Test("wrong codes count; IDaaS's lockout ends the verification as account_locked and IDaaS is not called again")
    func lockout() async throws {
        try await GatewayHarness().run { client, runtime in
            let (id, code) = try await Self.sent(client, runtime)
            let wrong = code == "000000" ? "111111" : "000000"
            for left in [4, 3, 2, 1] {
                let bad = try await client.call(.post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(wrong)"}"#)
                #expect(bad.body.errorCode == "incorrect_code")
                #expect(bad.body.error?["attempts_remaining"] as? Int == left)
            }
            for _ in 0..<20 {
                let locked = try await client.call(
                    .post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(wrong)"}"#)
                #expect(locked.status == .forbidden)
                #expect(locked.body.errorCode == "account_locked")
                #expect(locked.body.error?["retryable"] as? Bool == false)
            }
            let read = try await client.call(.get, "/v1/verifications/\(id)")
            #expect(read.body["status"] as? String == "denied")
            #expect(read.body["status_reason"] as? String == "account_locked")
            #expect(try await Self.vendorChecks(client, id) == 5)  // the sandbox locks after 5 wrong codes
            let right = try await client.call(.post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(code)"}"#)
            #expect(right.body.errorCode == "account_locked")
        }
    }

    @Test("wrong codes at once: four are counted, the rest answer account_locked, none max_attempts_reached")
    func concurrentLockout() async throws {
        try await GatewayHarness().run { client, runtime in
            let (id, code) = try await Self.sent(client, runtime)
            let wrong = code == "000000" ? "111111" : "000000"
            let answers = try await withThrowingTaskGroup(of: String?.self) { group in
                for _ in 0..<12 {
                    group.addTask {
                        try await client.call(.post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(wrong)"}"#)
                            .body.errorCode
                    }
                }
                var all: [String?] = []
                for try await answer in group { all.append(answer) }
                return all
            }
            #expect(answers.filter { $0 == "incorrect_code" }.count == 4, "\(answers)")
            #expect(answers.filter { $0 == "account_locked" }.count == 8, "\(answers)")
            let read = try await client.call(.get, "/v1/verifications/\(id)")
            #expect(read.body["status"] as? String == "denied")
            #expect(try await Self.vendorChecks(client, id) == 5)  // the sandbox locks after 5 wrong codes
        }
    }

    @Test("a resend leaves the delivered code valid until the new one is sent; the open slider is named")
    func resendKeepsTheDeliveredCode() async throws {
        try await GatewayHarness().run { client, runtime in
            let (id, code) = try await Self.sent(client, runtime)
            let resend = try await client.call(.post, "/v1/verifications/\(id)/resend", json: "{}")
            #expect(resend.status == .ok)
            #expect(resend.body["sends"] as? Int == 1)
            let check = try await client.call(.post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(code)"}"#)
            #expect(check.status == .ok)
            #expect(check.body["status"] as? String == "approved")

            // Once the new code is sent, the old one is IDaaS's no longer.
            let other = "+8613900139000"
            let (second, first) = try await Self.sent(client, runtime, to: other)
            let again = try await client.call(.post, "/v1/verifications/\(second)/resend", json: "{}")
            let slider = try #require(
                (again.body["next_action"] as? [String: Any])?["solve_challenge"] as? [String: Any])
            let twice = try await client.call(.post, "/v1/verifications/\(second)/resend", json: "{}")
            #expect(twice.body.errorCode == "invalid_state")
            let message = twice.body.error?["message"] as? String
            #expect(message?.contains("/v1/verifications/\(second)/challenge") == true)
            let solved = try await client.call(
                .post, "/v1/verifications/\(second)/challenge", json: #"{"answer": {"x": \#(try Self.solve(slider))}}"#)
            #expect(solved.body["sends"] as? Int == 2)
            let latest = try #require(runtime.sandbox?.outbox.last(to: other)?.code)
            if latest != first {
                let old = try await client.call(
                    .post, "/v1/verifications/\(second)/check", json: #"{"code": "\#(first)"}"#)
                #expect(old.body.errorCode == "incorrect_code")
            }
            let new = try await client.call(
                .post, "/v1/verifications/\(second)/check", json: #"{"code": "\#(latest)"}"#)
            #expect(new.body["status"] as? String == "approved")
        }
    }
}
