import Foundation
import TestSupport
import Testing
import VoteLedger

/// A self-signed certificate for 127.0.0.1 and localhost, made by the openssl command line (as an operator
/// would), with its private key, in `directory` as `NAME.pem` and `NAME.key`.
struct TestCertificate {
    let certificate: String
    let key: String

    init(_ name: String, in directory: String) throws {
        certificate = "\(directory)/\(name).pem"
        key = "\(directory)/\(name).key"
        let made = try Tool.run(
            "openssl",
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
                "-subj", "/CN=\(name)", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
                "-keyout", key, "-out", certificate,
            ])
        #expect(made.status == 0, "\(made.err)")
    }
}

/// Runs a tool from the PATH to completion: status, stdout, stderr.
enum Tool {
    static func run(_ name: String, _ arguments: [String]) throws -> ProgramRun {
        try runToCompletion("/usr/bin/env", [name] + arguments)
    }

    /// `curl` fetching `url` over `version` (`--http2`, `--http1.1`), trusting only `trust`: the HTTP version
    /// and status it got ("2 200"), or its exit status ("exit 60" when the certificate is not trusted).
    static func curl(_ url: String, _ version: String, trust: TestCertificate) throws -> String {
        let result = try run(
            "curl",
            [
                "--silent", "--show-error", version, "--cacert", trust.certificate, "--output", "/dev/null",
                "--write-out", "%{http_version} %{http_code}", url,
            ])
        return result.status == 0 ? result.out : "exit \(result.status)"
    }
}

/// `vote serve --tls-cert --tls-key`: HTTPS with HTTP/2 and HTTP/1.1 (ALPN), a renewed certificate picked up
/// on SIGHUP, and certificate files that are not right refused before anything is served or written.
@Suite(.serialized) struct TLSServerTests {
    /// The same server answers HTTP/2 and HTTP/1.1 over TLS, announces an https:// address, and stops cleanly.
    @Test func servesHTTP2AndHTTP1OverTLS() throws {
        let ledger = try ProcessLedger("TLS")
        let first = try TestCertificate("first", in: ledger.root)
        let served = try ServeProcess(
            ledger: ledger.ledger, clockOffset: 0, adminTokenFile: ledger.tokenFile,
            arguments: ["--tls-cert", first.certificate, "--tls-key", first.key])
        #expect(served.scheme == "https")
        let head = "https://127.0.0.1:\(served.port)/api/v1/head"
        #expect(try Tool.curl(head, "--http2", trust: first) == "2 200")
        #expect(try Tool.curl(head, "--http1.1", trust: first) == "1.1 200")
        #expect(try Tool.curl("https://127.0.0.1:\(served.port)/", "--http2", trust: first) == "2 200")
        let stopped = served.stop()
        #expect(stopped.status == 0, "\(stopped.err)")
    }

    /// SIGHUP reads the files again: the next handshake presents the renewed certificate (a client trusting
    /// only the old one now fails, one trusting the new one succeeds). Files that are bad at a SIGHUP are
    /// logged and the certificate read before is still served.
    @Test func sighupServesARenewedCertificate() throws {
        let ledger = try ProcessLedger("TLS renewal")
        let live = try TestCertificate("live", in: ledger.root)
        let old = try TestCertificate("old", in: ledger.root)
        let renewed = try TestCertificate("renewed", in: ledger.root)
        try copy(old, to: live)
        let served = try ServeProcess(
            ledger: ledger.ledger, clockOffset: 0, adminTokenFile: ledger.tokenFile,
            arguments: ["--tls-cert", live.certificate, "--tls-key", live.key])
        let head = "https://127.0.0.1:\(served.port)/api/v1/head"
        #expect(try Tool.curl(head, "--http2", trust: old) == "2 200")
        #expect(try Tool.curl(head, "--http2", trust: renewed) == "exit 60")

        try copy(renewed, to: live)
        kill(served.process.processIdentifier, SIGHUP)
        served.waitForError(containing: "SIGHUP: reloaded")
        #expect(try Tool.curl(head, "--http2", trust: renewed) == "2 200")
        #expect(try Tool.curl(head, "--http1.1", trust: renewed) == "1.1 200")
        #expect(try Tool.curl(head, "--http2", trust: old) == "exit 60")

        try "not a key".write(toFile: live.key, atomically: true, encoding: .utf8)
        kill(served.process.processIdentifier, SIGHUP)
        served.waitForError(containing: "still serving the certificate read before")
        #expect(try Tool.curl(head, "--http2", trust: renewed) == "2 200")
        let stopped = served.stop()
        #expect(stopped.status == 0, "\(stopped.err)")
    }

    /// A missing file, a file that is not PEM, a key that is not the certificate's, or only one of the two
    /// options: one line naming the problem, exit status 1 (2 for the usage error), nothing served, and no
    /// admin token created.
    @Test func badCertificateFilesServeNothing() throws {
        let ledger = try ProcessLedger("TLS refused")
        let one = try TestCertificate("one", in: ledger.root)
        let other = try TestCertificate("other", in: ledger.root)
        let garbage = ledger.root + "/garbage.pem"
        try "-----BEGIN CERTIFICATE-----\nnot base64\n".write(toFile: garbage, atomically: true, encoding: .utf8)
        let cases: [(arguments: [String], status: Int32, message: String)] = [
            (["--tls-cert", ledger.root + "/missing.pem", "--tls-key", one.key], 1, "--tls-cert \(ledger.root)"),
            (["--tls-cert", garbage, "--tls-key", one.key], 1, "not a readable PEM certificate"),
            (["--tls-cert", one.certificate, "--tls-key", one.certificate], 1, "not a readable PEM private key"),
            (["--tls-cert", one.certificate, "--tls-key", other.key], 1, "is not the private key of the certificate"),
            (["--tls-cert", one.certificate], 2, "--tls-cert and --tls-key go together"),
        ]
        for (arguments, status, message) in cases {
            let run = try VoteBinary.run(
                ["serve", "--listen", "127.0.0.1:0", "--ledger", ledger.ledger, "--admin-token-file", ledger.tokenFile]
                    + arguments)
            #expect(run.status == status, "\(arguments): \(run.err)")
            #expect(run.out.isEmpty, "\(arguments): \(run.out)")
            #expect(run.err.contains(message), "\(arguments): \(run.err)")
            #expect(run.err.split(separator: "\n").count == 1 || status == 2, "\(arguments): \(run.err)")
            #expect(!FileManager.default.fileExists(atPath: ledger.tokenFile), "\(arguments)")
        }
    }

    private func copy(_ source: TestCertificate, to target: TestCertificate) throws {
        for (from, to) in [(source.certificate, target.certificate), (source.key, target.key)] {
            try? FileManager.default.removeItem(atPath: to)
            try FileManager.default.copyItem(atPath: from, toPath: to)
        }
    }
}
