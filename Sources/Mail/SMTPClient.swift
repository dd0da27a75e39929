import BlockingHTTP
import Foundation
import VoteLedger

/// The organisation's SMTP relay (RFC 5321): where the messages go, how the connection is protected, and who
/// sends them.
public struct SMTPRelay: Sendable {
    /// How the connection to the relay is protected.
    public enum Security: String, Sendable, CaseIterable {
        /// Plain TCP, then STARTTLS (RFC 3207) before anything else; a relay that does not offer it is refused.
        case starttls
        /// TLS from the first byte (RFC 8314's submissions port, 465).
        case tls
        /// No TLS at all: only for a relay on this machine; AUTH is never sent so.
        case none
    }

    public var host: String
    public var port: Int
    public var security: Security
    /// The PEM file of the authorities that may sign the relay's certificate; nil for the system's.
    public var caFile: String?
    /// The AUTH user and password, if the relay asks for them.
    public var user: String?
    public var password: String?
    /// The envelope and header sender.
    public var from: String

    /// Whether `host` names this machine: "localhost", 127.0.0.0/8 or ::1.
    public static func isLoopback(_ host: String) -> Bool {
        let lower = host.lowercased()
        return lower == "localhost" || lower == "::1" || lower == "[::1]"
            || (lower.hasPrefix("127.") && lower.split(separator: ".").count == 4
                && lower.split(separator: ".").allSatisfy { UInt8($0) != nil })
    }

    public init(
        host: String, port: Int, security: Security, caFile: String? = nil, user: String? = nil,
        password: String? = nil, from: String
    ) {
        self.host = host
        self.port = port
        self.security = security
        self.caFile = caFile
        self.user = user
        self.password = password
        self.from = from
    }
}

/// What a relay said to one message.
public enum SMTPOutcome: Sendable, Equatable {
    /// Accepted for delivery (250 after the message's end).
    case sent(String)
    /// Refused for good (a 5xx reply): the address does not exist, the message is not wanted.
    case refused(String)
    /// Refused for now (a 4xx reply): a later resend may succeed.
    case deferred(String)
}

/// One SMTP session with a relay, on a blocking connection (`BlockingHTTP.Connection`: poll with deadlines,
/// OpenSSL's TLS with the certificate checked for the host): greeting, EHLO, STARTTLS, AUTH PLAIN,
/// then any number of messages, each MAIL FROM, RCPT TO and DATA, RSET after a refusal. Small and synchronous
/// on purpose: mail goes out one message at a time, at a rate the relay accepts, from a command-line run; no
/// Swift SMTP package is among those available, and the system's `sendmail` would hide the relay's answer to
/// each message, which the delivery log records.
public final class SMTPSession {
    private let relay: SMTPRelay
    private let connection: Connection
    private var buffer: [UInt8] = []
    /// How long any one exchange may take.
    private static let patience: Duration = .seconds(60)

    /// Connects to the relay and gets it ready to take messages (TLS and AUTH as `relay` says).
    public init(_ relay: SMTPRelay) throws {
        self.relay = relay
        guard relay.security != .none || SMTPRelay.isLoopback(relay.host) else {
            throw VoteError(.usage, "mail goes to a relay without TLS only on this machine")
        }
        let deadline = ContinuousClock.now + SMTPSession.patience
        let trust = relay.security == .none ? nil : try TLSClientContext.trusting(relay.caFile)
        do {
            connection = try Connection(
                host: relay.host, port: relay.port, tls: relay.security == .tls ? trust : nil, deadline: deadline)
        } catch { throw SMTPSession.failure("cannot reach", relay, error) }
        try expect(220, try reply(), "the relay's greeting")
        var extensions = try hello()
        if relay.security == .starttls {
            guard extensions.contains(where: { $0.uppercased().trimmingCharacters(in: .whitespaces) == "STARTTLS" })
            else {
                throw VoteError(
                    .io,
                    "the SMTP relay \(relay.host):\(relay.port) does not offer STARTTLS; mail is never sent in the clear (use --smtp-security tls for port 465)"
                )
            }
            try expect(220, try command("STARTTLS"), "STARTTLS")
            // Anything sent after the 220 came in the clear: it must not be read as the protected session's.
            guard buffer.isEmpty else {
                throw VoteError(.io, "the SMTP relay \(relay.host) sent more after agreeing to STARTTLS; refusing")
            }
            do { try connection.startTLS(trust!, host: relay.host) } catch {
                throw SMTPSession.failure("cannot start TLS with", relay, error)
            }
            extensions = try hello()
        }
        if let user = relay.user {
            guard relay.security != .none else {
                throw VoteError(.usage, "a password is never sent to an SMTP relay without TLS")
            }
            try authenticate(user: user, password: relay.password ?? "", extensions: extensions)
        }
    }

    deinit { _ = try? command("QUIT") }

    /// Sends `message` (its header and body, lines ending in CRLF) from the relay's sender to `recipient`.
    public func send(_ message: [UInt8], to recipient: String) throws -> SMTPOutcome {
        for (line, what) in [("MAIL FROM:<\(relay.from)>", "the sender"), ("RCPT TO:<\(recipient)>", "the recipient")] {
            let answer = try command(line)
            guard answer.code / 100 == 2 else { return try refusal(answer, what) }
        }
        let ready = try command("DATA")
        guard ready.code == 354 else { return try refusal(ready, "the message") }
        try connection.send(SMTPSession.dotStuffed(message) + Array(".\r\n".utf8))
        let answer = try reply()
        guard answer.code / 100 == 2 else { return try refusal(answer, "the message") }
        return .sent(answer.text)
    }

    /// The outcome of a refusal, after RSET so the session can go on with the next message.
    private func refusal(_ answer: Reply, _ what: String) throws -> SMTPOutcome {
        _ = try command("RSET")
        let text = "\(answer.code) \(answer.text) (to \(what))"
        return answer.code / 100 == 4 ? .deferred(text) : .refused(text)
    }

    /// The message with every line that starts with "." given a second one (RFC 5321 §4.5.2), ending in CRLF.
    static func dotStuffed(_ message: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(message.count + 64)
        var atLineStart = true
        for byte in message {
            if atLineStart && byte == UInt8(ascii: ".") { out.append(byte) }
            out.append(byte)
            atLineStart = byte == UInt8(ascii: "\n")
        }
        if !atLineStart { out += Array("\r\n".utf8) }
        return out
    }

    private func hello() throws -> [String] {
        let answer = try command("EHLO voteledger.invalid")
        try expect(250, answer, "EHLO")
        return Array(answer.lines.dropFirst())
    }

    private func authenticate(user: String, password: String, extensions: [String]) throws {
        // "AUTH PLAIN LOGIN": the mechanisms follow the keyword.
        let mechanisms = extensions.first { $0.uppercased().hasPrefix("AUTH ") }?.uppercased().split(separator: " ")
        guard let mechanisms, mechanisms.contains("PLAIN") else {
            throw VoteError(
                .io, "the SMTP relay \(relay.host) does not offer AUTH PLAIN; leave out --smtp-user if it needs none")
        }
        let plain = Data(([0] + Array(user.utf8) + [0] + Array(password.utf8))).base64EncodedString()
        let answer = try command("AUTH PLAIN \(plain)")
        guard answer.code == 235 else {
            throw VoteError(
                .refused, "the SMTP relay \(relay.host) refused the user and password: \(answer.code) \(answer.text)")
        }
    }

    private func expect(_ code: Int, _ answer: Reply, _ what: String) throws {
        guard answer.code == code else {
            throw VoteError(.io, "the SMTP relay \(relay.host) answered \(what) with \(answer.code) \(answer.text)")
        }
    }

    /// A reply: its code and its lines' texts.
    private struct Reply {
        var code: Int
        var lines: [String]
        var text: String { lines.joined(separator: " / ") }
    }

    private func command(_ line: String) throws -> Reply {
        connection.deadline = ContinuousClock.now + SMTPSession.patience
        do { try connection.send(Array((line + "\r\n").utf8)) } catch {
            throw SMTPSession.failure("lost the connection to", relay, error)
        }
        return try reply()
    }

    /// The relay's next reply: lines "CODE-text" up to one "CODE text".
    private func reply() throws -> Reply {
        connection.deadline = ContinuousClock.now + SMTPSession.patience
        var lines: [String] = []
        while true {
            let line = try readLine()
            let code = Int(line.prefix(3)) ?? 0
            guard line.count >= 3, (200...599).contains(code) else {
                throw VoteError(.io, "the SMTP relay \(relay.host) sent a line that is not SMTP")
            }
            // The relay's text goes to a terminal and the log: no control character of its own.
            lines.append(
                String(
                    String.UnicodeScalarView(
                        line.dropFirst(4).unicodeScalars.map { $0.properties.generalCategory == .control ? "?" : $0 })))
            if line.count == 3 || line[line.index(line.startIndex, offsetBy: 3)] != "-" {
                return Reply(code: code, lines: lines)
            }
            guard lines.count < 100 else { throw VoteError(.io, "the SMTP relay \(relay.host) sent an endless reply") }
        }
    }

    private func readLine() throws -> String {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            if let end = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = buffer[..<end].last == UInt8(ascii: "\r") ? buffer[..<(end - 1)] : buffer[..<end]
                defer { buffer.removeSubrange(...end) }
                return String(decoding: line, as: UTF8.self)
            }
            guard buffer.count < 8192 else {
                throw VoteError(.io, "the SMTP relay \(relay.host) sent an overlong line")
            }
            let count: Int
            do { count = try connection.receive(into: &chunk) } catch {
                throw SMTPSession.failure("lost the connection to", relay, error)
            }
            guard count > 0 else { throw VoteError(.io, "the SMTP relay \(relay.host) closed the connection") }
            buffer += chunk[..<count]
        }
    }

    private static func failure(_ what: String, _ relay: SMTPRelay, _ error: any Error) -> VoteError {
        VoteError(.io, "\(what) the SMTP relay \(relay.host):\(relay.port): \(VoteError.describe(error))")
    }
}
