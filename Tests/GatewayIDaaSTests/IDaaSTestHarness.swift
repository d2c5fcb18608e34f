import Foundation
import GatewayCore
import GatewayTestSupport
import HTTPTypes
import Testing

@testable import GatewayIDaaS

extension RecordingTransport {
    var paths: [String] { requests.map { $0.url.path() } }
}

/// The emulator on a manual clock and direct requests to it.
struct IDaaSEmulatorHarness {
    static let number = "+8613800138000"
    static let mobile = "+86-13800138000"
    static let device: HTTPFields = [
        HTTPField.Name("X-client-id")!: IDaaSSandbox.clientID,
        HTTPField.Name("X-operating-sys-version")!: "iOS 17.4",
        HTTPField.Name("X-device-fingerprint")!: "156aysdna213sc50",
        HTTPField.Name("X-agent")!: "TestApp/1.0",
        HTTPField.Name("X-device-ip")!: "203.0.113.7",
    ]

    let clock = ManualClock()
    let outbox = SandboxOutbox()
    /// What the emulator logged.
    let logs = CapturedLogs()
    let emulator: IDaaSEmulator

    init(persistence: any EmulatorPersistence = NoEmulatorPersistence()) {
        emulator = IDaaSEmulator(
            context: EmulatorContext(clock: clock, outbox: outbox, logger: logs.logger(), persistence: persistence))
    }

    func raw(
        _ method: HTTPRequest.Method, _ path: String, json: String = "", headers: HTTPFields = device
    ) async -> TransportResponse? {
        let request = EmulatorRequest(
            method: method, path: path, query: nil, headerFields: headers, body: Data(json.utf8))
        guard case .response(let response) = await emulator.handle(request) else { return nil }
        return response
    }

    func captcha() async throws -> IDaaSWire.CaptchaResponse {
        let response = try #require(await raw(.get, IDaaSWire.captchaPath))
        #expect(response.status == .ok)
        return try JSONDecoder().decode(IDaaSWire.CaptchaResponse.self, from: response.body)
    }

    func answer(_ token: String) async throws -> Double {
        let response = try #require(await raw(.get, "/sandbox/captchas/\(token)"))
        return try JSONDecoder().decode(IDaaSWire.Point.self, from: response.body).x
    }

    func verify(token: String, x: Double, sender: String = mobile) async -> TransportResponse? {
        let point = #"{\"x\":\#(x),\"y\":5.0}"#
        return await raw(
            .post, IDaaSWire.captchaVerifyPath,
            json: #"{"point_json":"\#(point)","token":"\#(token)","sender":"\#(sender)"}"#)
    }

    /// A captcha token for `sender`, from a slider solved with the sandbox's answer.
    func captchaToken(sender: String = mobile) async throws -> String {
        let captcha = try await captcha()
        let token = try #require(captcha.token)
        let response = try #require(await verify(token: token, x: try await answer(token), sender: sender))
        #expect(response.status == .ok)
        return try #require(
            try SnakeCaseJSON.decoder.decode(IDaaSWire.CaptchaVerifyResponse.self, from: response.body).captchaToken)
    }

    func send(_ captchaToken: String, mobile: String = mobile) async -> TransportResponse? {
        await raw(
            .post, IDaaSWire.smsSendPath,
            json:
                #"{"mobile":"\#(mobile)","type":"LOGIN_SMS","captcha_token":"\#(captchaToken.replacingOccurrences(of: "\"", with: "\\\""))"}"#
        )
    }

    func login(_ code: String, mobile: String = mobile) async -> TransportResponse? {
        await raw(.post, IDaaSWire.smsLoginPath, json: #"{"mobile":"\#(mobile)","verify_code":"\#(code)"}"#)
    }
}

func errorCode(_ response: TransportResponse?) -> String? {
    response.flatMap { try? SnakeCaseJSON.decoder.decode(IDaaSWire.ErrorBody.self, from: $0.body) }?.errorCode
}

/// A PNG read back with only the parts our encoder writes (stored deflate blocks, filter 0), checking every
/// CRC and the Adler-32: an independent reading of the format.
struct DecodedPNG {
    var width: Int
    var height: Int
    var channels: Int
    var pixels: [UInt8]

    init(_ data: Data) throws {
        let bytes = [UInt8](data)
        #expect(Array(bytes.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        var offset = 8
        var idat: [UInt8] = []
        var width = 0
        var height = 0
        var channels = 0
        func u32(_ at: Int) -> Int { bytes[at..<(at + 4)].reduce(0) { $0 << 8 | Int($1) } }
        while offset + 12 <= bytes.count {
            let length = u32(offset)
            let type = String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self)
            let body = Array(bytes[(offset + 8)..<(offset + 8 + length)])
            #expect(
                UInt32(u32(offset + 8 + length)) == IDaaSPNG.crc32(Array(bytes[(offset + 4)..<(offset + 8)]) + body))
            if type == "IHDR" {
                width = (Int(body[0]) << 24) | (Int(body[1]) << 16) | (Int(body[2]) << 8) | Int(body[3])
                height = (Int(body[4]) << 24) | (Int(body[5]) << 16) | (Int(body[6]) << 8) | Int(body[7])
                channels = body[9] == 6 ? 4 : 3
            } else if type == "IDAT" {
                idat += body
            }
            offset += 12 + length
        }
        // zlib: header, stored blocks, Adler-32.
        var raw: [UInt8] = []
        var at = 2
        while true {
            let final = idat[at] & 1 == 1
            let length = Int(idat[at + 1]) | Int(idat[at + 2]) << 8
            raw += idat[(at + 5)..<(at + 5 + length)]
            at += 5 + length
            if final { break }
        }
        #expect(UInt32(idat[at..<(at + 4)].reduce(0) { $0 << 8 | Int($1) }) == IDaaSPNG.adler32(raw))
        var pixels: [UInt8] = []
        let stride = width * channels
        for row in 0..<height {
            #expect(raw[row * (stride + 1)] == 0)
            pixels += raw[(row * (stride + 1) + 1)..<((row + 1) * (stride + 1))]
        }
        self.width = width
        self.height = height
        self.channels = channels
        self.pixels = pixels
    }

    /// Where the piece fits: the x whose area under the piece's opaque pixels is darkest in the background.
    static func solve(background: DecodedPNG, piece: DecodedPNG) -> Int {
        var mask: [(Int, Int)] = []
        for row in 0..<piece.height {
            for column in 0..<piece.width where piece.pixels[(row * piece.width + column) * 4 + 3] > 0 {
                mask.append((column, row))
            }
        }
        var best = (x: 0, score: Int.max)
        for x in 0...(background.width - piece.width) {
            var sum = 0
            for (column, row) in mask {
                let index = (row * background.width + x + column) * background.channels
                sum +=
                    Int(background.pixels[index]) + Int(background.pixels[index + 1])
                    + Int(background.pixels[index + 2])
            }
            if sum < best.score { best = (x, sum) }
        }
        return best.x
    }
}
