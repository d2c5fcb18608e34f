import AsyncHTTPClient
import Foundation
import GatewayCore
import GatewayTestSupport
import NIOCore
import NIOHTTP1
import NIOSSL
import Testing

@testable import gateway

/// HTTPS serving (`--tls-cert`, `--tls-key`, or `tls:` in the configuration file): a client that trusts the
/// certificate talks to the gateway, and the sandbox's own calls to its emulators go over HTTPS too.
@Suite("HTTPS serving")
struct HTTPSServingTests {
    /// A self-signed test-only certificate for 127.0.0.1 and localhost (valid until 2125) and its key.
    static let certificatePEM = """
        -----BEGIN CERTIFICATE-----
        MIIDJzCCAg+gAwIBAgIUF1iRcRTKM/cR6nAD6LN6AZONvC4wDQYJKoZIhvcNAQEL
        BQAwFDESMBAGA1UEAwwJMTI3LjAuMC4xMCAXDTI2MTEyMzEzNTI0MVoYDzIxMjYx
        MDMwMTM1MjQxWjAUMRIwEAYDVQQDDAkxMjcuMC4wLjEwggEiMA0GCSqGSIb3DQEB
        AQUAA4IBDwAwggEKAoIBAQDLVu6wPRJ+B1QOtwBB6JlEcorGrhMt5xT49pC2P94B
        14Ci2g4hUMazKbM3NTxDKkorhXM4vX/VkVNNnLFZezPAu392NCy5cQiBfHdX/4cU
        yri43aW3mzlG4930vA7MlJY+pT2rRuF+1AhETvYknMCMZF3U5vdTQd/exTDig982
        wP6rBouzZrgNV6lzwZn1+xjzzrTgIjk7YsRgbcZDT9mX8JD43gC03TqezrzCGm50
        FKPE2cSFbbtMHuMfctzsQar76bfohYMb8vo2PKiJogpbAjBdRekfH++3pj5YkzBK
        km0xPuj2jhejLJiCaczaC9j+IPSnouzY66ZAD3coa8N7AgMBAAGjbzBtMB0GA1Ud
        DgQWBBQ9hU2NXzUvNRsX1nwZOjWQmMCSgzAfBgNVHSMEGDAWgBQ9hU2NXzUvNRsX
        1nwZOjWQmMCSgzAPBgNVHRMBAf8EBTADAQH/MBoGA1UdEQQTMBGHBH8AAAGCCWxv
        Y2FsaG9zdDANBgkqhkiG9w0BAQsFAAOCAQEAlbc8Oqof1KrqEEXa2VLswbujCITI
        sKmDM+rrkdCJVdSo/8Lrhf7wpyFQ2MWKZaHycuob5dIUhPKPnP3vPiyIpVcFj/hU
        7KiWDaYwLWnAuxuEN1lUFGBUwRf93hs+4MMCjk9WDLgVl5AxH7WjTI/pdtK7oxWW
        A6bHYcsyw82dt6yVF7GFAhj9+8p6+mvAL+Z10SatmeizsJrHh7guMhpOk7Z4yblo
        zDFfYUFDg+cEPgkyam5jm51hphjDz+KPfX9wnDVD9uzuTbXYRYwvNFimLzgFS802
        c0nh8kkgF828+plTfpJemBv5tE9ggLYU+EDI0gRVU8Xv1RTCtJKV0/UC1A==
        -----END CERTIFICATE-----
        """

    static let keyPEM = """
        -----BEGIN PRIVATE KEY-----
        MIIEvAIBADANBgkqhkiG9w0BAQEFAASCBKYwggSiAgEAAoIBAQDLVu6wPRJ+B1QO
        twBB6JlEcorGrhMt5xT49pC2P94B14Ci2g4hUMazKbM3NTxDKkorhXM4vX/VkVNN
        nLFZezPAu392NCy5cQiBfHdX/4cUyri43aW3mzlG4930vA7MlJY+pT2rRuF+1AhE
        TvYknMCMZF3U5vdTQd/exTDig982wP6rBouzZrgNV6lzwZn1+xjzzrTgIjk7YsRg
        bcZDT9mX8JD43gC03TqezrzCGm50FKPE2cSFbbtMHuMfctzsQar76bfohYMb8vo2
        PKiJogpbAjBdRekfH++3pj5YkzBKkm0xPuj2jhejLJiCaczaC9j+IPSnouzY66ZA
        D3coa8N7AgMBAAECggEALdLEbYEF1tLt9Xb2HuQ9DfjGH2oBNnn59vURvZB9Bms7
        OPfs8UMT1DJUid98WiKAnngvdBz4XvemDzp9mQ2zpv5aBhhR7+RyJ0QWXQVfuqbI
        pBiHDO51JO2bClkK+L2PckSoth1+GafMySAGRk/w8HJ51s3J9MBGpBxKHPHc7qh+
        j4O61s3ggGNXxhchw3ATUosWPgxwAZE+DeKx3aU8+b2d3N8WqTPNRQKKKjQfQXPM
        hLAhLssV7vWDlV5boCd7hFLEkhqK16VETiRDpL8rcVoEknHXL6wlshsD+Y7CNlqU
        owltieDmwXeLKxRBDG8pGDZNrq91vCxXHTcq56lrEQKBgQDt4NqoxhqIwT1hC1lw
        DEAo2rxzd4cjU+YSWpQJNT94gqDetgOOdUOekeOkcK8ikALL82+h4W5lNhNHt/We
        36Tdol2K9xeyUzkFfARjhytCJoo7E+zeFSWU+v4G6p9nbvI76YVdC50jPpBiHsOu
        ttNm51sWFtTG18jd1KXMZdB+4wKBgQDa1H9KI6kjuy3ZhGtsyyOjEvIJOmHz+3fq
        +paKWSa/A7Cq2eqga4zPJzd7LRDKLG/By8CqumNE7NF6YsIXcD6DVrMtkb7Z4Ydl
        CsbKSZq2GYHAwfcY6g+dy9ipnQSD+ONycZ52JDQuQ3aR+B8I5FkO7y0TVE77WlDi
        orybMpN0iQKBgBnNq0pletlcxNCzD3eVDJyh5ZFM5O7TGgDhrG83RHRJDzQ5YDdi
        xvv7bUsYIhdIsdT3yiMwNe5qqDq+XLloHxUfmLALT5m7Z1MN+dfmAK5DSflQlwAc
        ISCA/W84oiPxJ/uRwDKwoNIC5lyOY8Ge+V2PORUzUs9i9toBSB7c6HnrAoGAErVm
        KI2B8WcYVWdn08ZORqvg+379TuGp7/H6mttiX6ROH11AHPT09eTxblt8+vvvlg74
        auBCimsAwcjdtSlIfuwTp4q1WWVZsP7J3hOK4ZSuri8nE/821JPP8zhUYYAO2gLy
        vED+IRJtea9P3++92XQDU4q6seyXy7iEDXS2fJkCgYBKHd/CUd3ELt5+IOzLgGkn
        3OhrinMbglDWU97VOccTU+Dz9vWJGdZ5oovSRn6JG7KE2baI8K+h7t07BEmgftJP
        fgcuNhi0m032AFlhEC3AyCM/FoJzt/H6jP4jYqDT0XOeFrXFQxK3SEhq8mJ2s0r6
        vSXPFMmVYTgZWMtJ80NcrQ==
        -----END PRIVATE KEY-----
        """

    /// Writes the certificate and key to a fresh directory.
    static func files() throws -> (certificate: URL, key: URL) {
        let directory = ScratchDirectories.make("gateway-tls")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let certificate = directory.appendingPathComponent("cert.pem")
        let key = directory.appendingPathComponent("key.pem")
        try Data(certificatePEM.utf8).write(to: certificate)
        try Data(keyPEM.utf8).write(to: key)
        return (certificate, key)
    }

    /// A client that trusts only the test certificate (besides the system's roots).
    static func trustingClient() throws -> HTTPClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.additionalTrustRoots = [.certificates(try NIOSSLCertificate.fromPEMBytes(Array(certificatePEM.utf8)))]
        var configuration = HTTPClient.Configuration()
        configuration.tlsConfiguration = tls
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    static func call(_ client: HTTPClient, _ method: HTTPMethod, _ url: String, json: String? = nil) async throws
        -> (status: Int, body: [String: Any])
    {
        var request = HTTPClientRequest(url: url)
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(GatewayHarness.apiKey)")
        if let json {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: json))
        }
        let response = try await client.execute(request, timeout: .seconds(10))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        let body = (try? JSONSerialization.jsonObject(with: Data(buffer: bytes))) as? [String: Any] ?? [:]
        return (Int(response.status.code), body)
    }

    @Test("the gateway serves HTTPS; a start reaches the Vonage emulator over HTTPS on the gateway's own port")
    func servesHTTPS() async throws {
        let (certificate, key) = try Self.files()
        let harness = GatewayHarness(clock: ManualClock(Date()))
        var options = harness.options()
        options.sandboxTransport = .http
        options.port = try LoopbackPort.next()
        options.tlsCertificate = certificate
        options.tlsKey = key
        let (app, runtime) = try await buildApplication(options)
        #expect(runtime.baseURL.hasPrefix("https://127.0.0.1:"))
        let client = try Self.trustingClient()
        let base = "https://127.0.0.1:\(options.port)"
        try await withRunningApplication(app) {
            var ready = false
            let deadline = ContinuousClock.now + .seconds(60)  // against a hang, not a speed figure
            while !ready, ContinuousClock.now < deadline {
                if let health = try? await Self.call(client, .GET, base + "/healthz"), health.status == 200 {
                    ready = true
                } else {
                    try await Task.sleep(for: .milliseconds(25))
                }
            }
            #expect(ready)
            let start = try await Self.call(
                client, .POST, base + "/v1/verifications",
                json: #"{"to": "+14155550199", "channel": "sms", "provider": "vonage"}"#)
            #expect(start.status == 201)
            #expect(runtime.sandbox?.outbox.last(to: "+14155550199")?.provider == "vonage")
            // A client that does not trust the certificate is refused by the handshake.
            await #expect(throws: (any Error).self) {
                _ = try await Self.call(HTTPClient.shared, .GET, base + "/healthz")
            }
        }
        try await client.shutdown()
    }

    @Test("a certificate without a key, or files that are not PEM, are configuration errors")
    func badFiles() throws {
        let (certificate, key) = try Self.files()
        #expect(throws: ConfigurationError.self) { try ServerTLS.load(certificate: certificate, key: nil) }
        #expect(throws: ConfigurationError.self) { try ServerTLS.load(certificate: key, key: certificate) }
        #expect(try ServerTLS.load(certificate: certificate, key: key) != nil)
        #expect(try ServerTLS.load(certificate: nil, key: nil) == nil)
    }

    @Test("the configuration file's tls section names the files; `plugin: nexmo` is the vonage plugin")
    func configuration() throws {
        let root: JSONValue = [
            "sandbox": true,
            "tls": ["cert_file": "/etc/gateway/cert.pem", "key_file": "/etc/gateway/key.pem"],
            "providers": [
                [
                    "plugin": "nexmo",
                    "settings": ["api_key": "abc", "api_secret_env": "VONAGE_SECRET", "brand": "Acme"],
                ]
            ],
        ]
        let parsed = try GatewayConfiguration.parse(
            root, plugins: InstalledPlugins.all, environment: ["VONAGE_SECRET": "s3cret"])
        #expect(parsed.tlsCertificate?.path == "/etc/gateway/cert.pem")
        #expect(parsed.tlsKey?.path == "/etc/gateway/key.pem")
        #expect(parsed.providers.first?.plugin == "vonage")
        #expect(throws: ConfigurationError.self) {
            try GatewayConfiguration.parse(["sandbox": true, "tls": ["cert_file": "x"]], plugins: [], environment: [:])
        }
    }
}
