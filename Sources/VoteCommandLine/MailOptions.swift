public import ArgumentParser
import Foundation
public import Mail
import VoteLedger

/// The relay and the messages' surroundings, as `vote voter mail` and `vote serve` (for the console's mail action)
/// take them: one set of options, checked in one place. The relay's password is read from
/// `--smtp-password-file` or `$VOTE_SMTP_PASSWORD`, never from an argument others can see in the process list.
public struct MailOptions: ParsableArguments {
    @Option(help: "The web app's address, as voters reach it (https://…).") public var baseURL: String?
    @Option(help: "Whom members ask for help (an e-mail address or a phone number), printed in every message.")
    public var helpContact: String?
    @Option(help: "The sender (From), an address the relay lets you send as.") public var from: String?
    @Option(help: "The SMTP relay's host name.") public var smtpHost: String?
    @Option(help: "The relay's port (default: 587 with starttls, 465 with tls, 25 with none).")
    public var smtpPort: Int?
    @Option(help: "starttls (default), tls (implicit, port 465) or none (a relay on this machine only).")
    public var smtpSecurity: String = "starttls"
    @Option(help: "PEM file of the authorities the relay's certificate may chain to (default: the system's).")
    public var smtpCacert: String?
    @Option(help: "The user name for the relay's AUTH, if it asks for one.") public var smtpUser: String?
    @Option(help: "A file holding the relay's password (else $VOTE_SMTP_PASSWORD).") public var smtpPasswordFile:
        String?
    @Option(
        help:
            "The time zone the windows are given in (an IANA name, e.g. Europe/Paris; default UTC), for members without one of their own (authorize --time-zone-column)."
    )
    public var timeZone = "UTC"
    @Option(help: "At most this many messages a minute.") public var rate = 60

    public init() {}

    /// Whether any of these options was given (`vote serve` without them has no mail action); then the four that
    /// name the relay and the messages must all be there. An option at its default cannot be told from one left out.
    public var given: Bool {
        [baseURL, helpContact, from, smtpHost, smtpCacert, smtpUser, smtpPasswordFile].contains { $0 != nil }
            || smtpPort != nil || smtpSecurity != "starttls" || timeZone != "UTC" || rate != 60
    }

    public func validate() throws {
        guard given else { return }
        for (name, value) in [
            ("--base-url", baseURL), ("--help-contact", helpContact), ("--from", from), ("--smtp-host", smtpHost),
        ] where value == nil {
            throw ValidationError(
                "\(name) is needed to send mail (with --base-url, --help-contact, --from, --smtp-host)")
        }
        do { _ = try VotingLink.base(baseURL!) } catch { throw ValidationError(error.description) }
        guard VoterList.Contact.isAddress(from!) else { throw ValidationError("--from must be one e-mail address") }
        guard let security = SMTPRelay.Security(rawValue: smtpSecurity) else {
            throw ValidationError("--smtp-security must be starttls, tls or none")
        }
        // Each message carries a member's voting link: it crosses no network in the clear.
        if security == .none && !SMTPRelay.isLoopback(smtpHost!) {
            throw ValidationError(
                "--smtp-security none is for a relay on this machine only (localhost, 127.0.0.1, ::1): the messages carry voting links"
            )
        }
        guard TimeZone(identifier: timeZone) != nil else {
            throw ValidationError(
                "--time-zone \(timeZone) is not a time zone name (such as Europe/Paris or Asia/Seoul)")
        }
        guard (1...100_000).contains(rate) else {
            throw ValidationError("--rate must be 1-100000 messages a minute")
        }
        guard (1...65535).contains(smtpPort ?? 1) else { throw ValidationError("--smtp-port must be 1-65535") }
        guard !helpContact!.trimmingCharacters(in: .whitespaces).isEmpty, helpContact!.utf8.count <= 200 else {
            throw ValidationError("--help-contact must be 1-200 bytes")
        }
    }

    /// The settings these options name, the password read; nil when no relay was named.
    public func settings() throws -> MailSettings? {
        guard given, let baseURL, let helpContact, let from, let smtpHost,
            let security = SMTPRelay.Security(rawValue: smtpSecurity), let zone = TimeZone(identifier: timeZone)
        else { return nil }
        let password =
            try smtpPasswordFile.map { file in
                do {
                    return try String(contentsOfFile: file, encoding: .utf8).trimmingCharacters(in: .newlines)
                } catch { throw VoteError(.refused, "cannot read the password file \(file)") }
            } ?? ProcessInfo.processInfo.environment["VOTE_SMTP_PASSWORD"]
        if smtpUser != nil && password == nil {
            throw VoteError(
                .usage, "--smtp-user needs a password: set VOTE_SMTP_PASSWORD or give --smtp-password-file")
        }
        let relay = SMTPRelay(
            host: smtpHost, port: smtpPort ?? [.starttls: 587, .tls: 465, .none: 25][security]!, security: security,
            caFile: smtpCacert, user: smtpUser, password: password, from: from)
        return MailSettings(
            relay: relay, base: try VotingLink.base(baseURL), help: helpContact, timeZone: zone, perMinute: rate)
    }
}
