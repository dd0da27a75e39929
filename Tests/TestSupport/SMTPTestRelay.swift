public import Foundation

/// A real SMTP relay for the mail tests: aiosmtpd (`Tests/mail/smtp_relay.py`) with STARTTLS on a certificate of the
/// test's own (`makeCertificate`), AUTH PLAIN as `officer` / `s3cret pass`, refusing `refuse@example.org` for good,
/// and writing each accepted message, decoded, as JSON to `out`.
public final class SMTPTestRelay: @unchecked Sendable {
    public let process: Process
    public let port: Int
    public let out: String

    public init(root: String, dieAfter: Int? = nil) throws {
        out = root + "/relay-out"
        try? FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let script = URL(fileURLWithPath: #filePath).appendingPathComponent("../../mail/smtp_relay.py").standardized
            .path
        var arguments = [
            script, "--cert", root + "/relay-cert.pem", "--key", root + "/relay-key.pem", "--out", out, "--user",
            "officer", "--password", "s3cret pass",
        ]
        if let dieAfter { arguments += ["--die-after", String(dieAfter)] }
        let portFile = root + "/relay-port"
        try? FileManager.default.removeItem(atPath: portFile)
        arguments += ["--port-file", portFile]
        let (process, _, _) = try startProgram("/usr/bin/env", ["python3"] + arguments)
        self.process = process
        var started = false
        defer { if !started { process.terminate() } }
        let written = try waitForBlocking("the SMTP relay to listen", every: .milliseconds(50)) { () -> String in
            process.isRunning ? (try? String(contentsOfFile: portFile, encoding: .utf8)) ?? "" : "exited"
        } until: {
            $0.hasSuffix("\n") || $0 == "exited"
        }
        guard let port = Int(written.dropLast()) else {
            throw RelayFailure("the SMTP relay did not start (python3 with aiosmtpd): \(written)")
        }
        self.port = port
        started = true
    }

    /// The messages accepted so far, decoded by the relay.
    public func messages() throws -> [[String: Any]] {
        try FileManager.default.contentsOfDirectory(atPath: out).filter { $0.hasSuffix(".json") }.sorted().map {
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out + "/" + $0)))
                as! [String: Any]
        }
    }

    public func stop() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }

    /// A certificate for 127.0.0.1 and localhost in `root` (relay-cert.pem, relay-key.pem), and the relay's
    /// password in `root/smtp-password`.
    public static func makeCertificate(root: String) throws {
        let made = shell(
            "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout \(root)/relay-key.pem -out \(root)/relay-cert.pem -days 2 -subj /CN=localhost -addext subjectAltName=IP:127.0.0.1,DNS:localhost"
        )
        guard made.status == 0 else { throw RelayFailure(made.output) }
        try "s3cret pass\n".write(toFile: root + "/smtp-password", atomically: true, encoding: .utf8)
    }

    /// The relay or its certificate could not be made.
    public struct RelayFailure: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }
}
