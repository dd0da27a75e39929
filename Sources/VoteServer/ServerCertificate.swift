import Foundation
import Ledger
import NIOCore
import NIOSSL
import VoteLedger

/// The certificate chain and private key `vote serve --tls-cert --tls-key` serves, read from their PEM files
/// at start and again by `reload()` (on SIGHUP), so a renewed certificate is served from the next TLS
/// handshake on without a restart; connections already open keep the one they began with.
public final class ServerCertificate: Sendable {
    /// The files, as given (read again on every reload).
    public let certificateFile: String
    public let keyFile: String
    private let current: Locked<NIOSSLContextConfigurationOverride>

    /// Reads both files; a file that is missing, unreadable or not PEM of the right kind throws a
    /// `VoteError` naming it, so `vote serve` says why in one line and serves nothing.
    public init(certificateFile: String, keyFile: String) throws {
        self.certificateFile = certificateFile
        self.keyFile = keyFile
        current = Locked(try ServerCertificate.read(certificateFile: certificateFile, keyFile: keyFile))
    }

    /// Reads the files again and serves what they hold from the next handshake on. If they are bad (a
    /// renewal written half-way, a wrong path) it throws and the certificate served so far stays.
    public func reload() throws {
        let fresh = try ServerCertificate.read(certificateFile: certificateFile, keyFile: keyFile)
        current.withLock { $0 = fresh }
    }

    /// The TLS 1.2 cipher suites served: Mozilla's "intermediate" profile (forward-secret ECDHE key exchange,
    /// AEAD ciphers only) as BoringSSL names it (it has no finite-field DHE). CBC suites, SHA-1 MACs and static
    /// RSA key exchange are refused. TLS 1.3's suites are all AEAD and forward-secret, and BoringSSL serves
    /// them whatever this list says.
    static let tls12CipherSuites = [
        "ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-RSA-AES128-GCM-SHA256", "ECDHE-ECDSA-AES256-GCM-SHA384",
        "ECDHE-RSA-AES256-GCM-SHA384", "ECDHE-ECDSA-CHACHA20-POLY1305", "ECDHE-RSA-CHACHA20-POLY1305",
    ].joined(separator: ":")

    /// The server's TLS configuration: TLS 1.2 with `tls12CipherSuites` or TLS 1.3; ALPN offers HTTP/2 and
    /// HTTP/1.1 (`HTTP2UpgradeChannel` adds them); the certificate of each handshake is the one read last.
    var tlsConfiguration: TLSConfiguration {
        let now = current.withLock { $0 }
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: now.certificateChain ?? [], privateKey: now.privateKey!)
        configuration.minimumTLSVersion = .tlsv12
        configuration.maximumTLSVersion = .tlsv13
        configuration.cipherSuites = ServerCertificate.tls12CipherSuites
        configuration.sslContextCallback = { [self] _, promise in
            promise.succeed(current.withLock { $0 })
        }
        return configuration
    }

    private static func read(certificateFile: String, keyFile: String) throws -> NIOSSLContextConfigurationOverride {
        let chain: [NIOSSLCertificate]
        do { chain = try NIOSSLCertificate.fromPEMFile(certificateFile) } catch {
            throw VoteError(.refused, "--tls-cert \(certificateFile): not a readable PEM certificate (\(error))")
        }
        guard let leaf = chain.first else {
            throw VoteError(.refused, "--tls-cert \(certificateFile): no certificate in the file")
        }
        let key: NIOSSLPrivateKey
        do { key = try NIOSSLPrivateKey(file: keyFile, format: .pem) } catch {
            throw VoteError(.refused, "--tls-key \(keyFile): not a readable PEM private key (\(error))")
        }
        // A TLS context refuses a key that is not the certificate's: build one now rather than fail every
        // handshake later.
        var probe = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(leaf)], privateKey: .privateKey(key))
        probe.minimumTLSVersion = .tlsv12
        do { _ = try NIOSSLContext(configuration: probe) } catch {
            throw VoteError(
                .refused, "--tls-key \(keyFile) is not the private key of the certificate in \(certificateFile)")
        }
        var override = NIOSSLContextConfigurationOverride()
        override.certificateChain = chain.map { .certificate($0) }
        override.privateKey = .privateKey(key)
        return override
    }
}
