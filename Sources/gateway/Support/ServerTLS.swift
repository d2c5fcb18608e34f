import Foundation
import GatewayCore
import NIOSSL

/// The certificate chain and key the gateway serves HTTPS with.
struct ServerTLS: Sendable {
    let chain: [NIOSSLCertificate]
    let key: NIOSSLPrivateKey

    var serverConfiguration: TLSConfiguration {
        TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
    }

    /// The flags' files (`--tls-cert`, `--tls-key`), else the configuration's `tls`.
    static func load(_ options: GatewayOptions, _ configuration: GatewayConfiguration) throws(ConfigurationError)
        -> ServerTLS?
    {
        try load(
            certificate: options.tlsCertificate ?? configuration.tlsCertificate,
            key: options.tlsKey ?? configuration.tlsKey)
    }

    /// Reads both PEM files, or returns `nil` when neither is given; one without the other, or a file that
    /// does not hold a certificate or a key, is a configuration error.
    static func load(certificate: URL?, key: URL?) throws(ConfigurationError) -> ServerTLS? {
        switch (certificate, key) {
        case (nil, nil):
            return nil
        case (let certificate?, let key?):
            var problems: [String] = []
            let chain = try? NIOSSLCertificate.fromPEMFile(certificate.path)
            if chain?.isEmpty != false {
                problems.append("TLS certificate \(certificate.path) is not a readable PEM certificate")
            }
            let privateKey = try? NIOSSLPrivateKey(file: key.path, format: .pem)
            if privateKey == nil { problems.append("TLS key \(key.path) is not a readable PEM private key") }
            guard let chain, let privateKey, problems.isEmpty else { throw ConfigurationError(problems: problems) }
            return ServerTLS(chain: chain, key: privateKey)
        default:
            throw ConfigurationError(problems: [
                "give both a TLS certificate and a TLS key (--tls-cert and --tls-key), or neither"
            ])
        }
    }
}
