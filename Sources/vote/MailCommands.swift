import ArgumentParser
import Election
import Foundation
import Ledger
import Mail
import VoteCommandLine
import VoteLedger

/// The contact book and delivery log of `ledger`, sealed under its voter secret in its key directory.
func officerRecords(_ ledger: LedgerOptions, _ reader: any BlockSource) throws -> (ContactBook, MailLog) {
    let keys = try ledger.requiredKeyDirectory()
    let secret = try FileVoterSecret(keys: keys)
    let id = reader.genesis.ledgerID
    return (
        ContactBook(keys: keys.path, ledgerID: id, secret: secret),
        MailLog(keys: keys.path, ledgerID: id, secret: secret)
    )
}

/// The places `member` may still vote in, with their token in each, in place order: among `only` (every place if
/// empty), not cancelled or closed at `now` (with `openNow`, open at `now`), where the token has not voted. A
/// replaced token (`nil`) is left out: the new one was handed over with the re-issue. What mail and letters list.
func placesToVoteIn(
    _ member: ContactBook.Member, only: [UInt32], view: ElectionView, ledger: LedgerOptions, now: Int64,
    openNow: Bool = false
) throws -> [(state: PlaceState, token: VotingToken)] {
    var places: [(state: PlaceState, token: VotingToken)] = []
    for (id, token) in member.tokens.sorted(by: { $0.key < $1.key }) where only.isEmpty || only.contains(id) {
        guard let state = view.state.place(id), !state.cancelled, state.place.voting.end > now,
            !openNow || state.place.voting.start <= now,
            try view.hasVoted(ledger, place: id, tokenHash: token.hash) == false
        else { continue }
        places.append((state, token))
    }
    return places
}

extension VoterCommand {
    /// `vote voter mail`: the voting links, or a reminder, by e-mail through the organisation's relay.
    struct Mail: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "mail", abstract: "E-mail each member their voting links, or remind those who have not voted.",
            discussion: """
                Mails the members of the contact book (kept by `vote voter authorize --from LIST --identity-column C \
                --email-column E`, sealed in the key directory) through the organisation's SMTP relay: one message \
                per member listing every place they may vote in that has not closed, each with its window in \
                --time-zone, in the member's language (English or Korean), and their own link (the token after # \
                so it never reaches a server log). Every message's outcome is kept in a sealed delivery log; a run \
                that stops is resumed by running it again, and no one is mailed twice for the same places unless \
                --again. The one message in flight when a connection breaks is logged as failed and may have gone. \
                --remind mails only those who have not voted (or in an anonymous place not taken their ballot). \
                The relay's password is read from $VOTE_SMTP_PASSWORD or --smtp-password-file, never an argument.
                """)

        @OptionGroup var ledger: LedgerOptions
        @Option(help: "Only these places (repeat); default: every place in the contact book.") var place: [UInt32] = []
        @Option(help: "The web app's address, as voters reach it (https://…).") var baseURL: String
        @Option(help: "Whom members ask for help (an e-mail address or a phone number), printed in every message.")
        var helpContact: String
        @Option(help: "The sender (From), an address the relay lets you send as.") var from: String
        @Option(help: "The SMTP relay's host name.") var smtpHost: String
        @Option(help: "The relay's port (default: 587 with starttls, 465 with tls, 25 with none).") var smtpPort: Int?
        @Option(help: "starttls (default), tls (implicit, port 465) or none (a relay on this machine only).")
        var smtpSecurity: String = "starttls"
        @Option(help: "PEM file of the authorities the relay's certificate may chain to (default: the system's).")
        var smtpCacert: String?
        @Option(help: "The user name for the relay's AUTH, if it asks for one.") var smtpUser: String?
        @Option(help: "A file holding the relay's password (else $VOTE_SMTP_PASSWORD).") var smtpPasswordFile: String?
        @Option(
            help:
                "The time zone the windows are given in (an IANA name, e.g. Europe/Paris; default UTC), for members without one of their own (authorize --time-zone-column)."
        )
        var timeZone = "UTC"
        @Option(help: "At most this many messages a minute.") var rate = 60
        @Flag(help: "A reminder, to members who have not voted in a place that is still open.") var remind = false
        @Flag(help: "Only members whose last message of this kind failed (refused, deferred, failed or bounced).")
        var failedOnly = false
        @Flag(help: "Mail everyone again, even those already sent this message.") var again = false
        @OptionGroup var output: JSONOption

        func validate() throws {
            do { _ = try VotingLink.base(baseURL) } catch { throw ValidationError(error.description) }
            guard VoterList.Contact.isAddress(from) else { throw ValidationError("--from must be one e-mail address") }
            guard let security = SMTPRelay.Security(rawValue: smtpSecurity) else {
                throw ValidationError("--smtp-security must be starttls, tls or none")
            }
            // Each message carries a member's voting link: it crosses no network in the clear.
            if security == .none && !SMTPRelay.isLoopback(smtpHost) {
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
            guard !helpContact.trimmingCharacters(in: .whitespaces).isEmpty, helpContact.utf8.count <= 200 else {
                throw ValidationError("--help-contact must be 1-200 bytes")
            }
            if failedOnly && again { throw ValidationError("--failed-only and --again do not go together") }
        }

        func run() throws {
            let security = SMTPRelay.Security(rawValue: smtpSecurity)!
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
            let reader = try ledger.reader()
            let view = try ledger.view(of: reader)
            let (book, log) = try officerRecords(ledger, reader)
            let members = try book.members()
            guard !members.isEmpty else {
                throw VoteError(
                    .refused,
                    "the contact book is empty: authorise the members from their list with --email-column first (vote voter authorize --help)"
                )
            }
            let now = Clock.now()
            var recipients: [Mailing.Recipient] = []
            var withoutAddress = 0
            for member in members {
                // A reminder lists the places open now.
                let places = try placesToVoteIn(
                    member, only: place, view: view, ledger: ledger, now: now, openNow: remind
                ).map { (MailPlace($0.state.place), $0.token) }
                guard !places.isEmpty else { continue }
                guard let address = member.contact.email else {
                    withoutAddress += 1
                    continue
                }
                recipients.append(Mailing.Recipient(member: member, address: address, places: places))
            }
            if withoutAddress > 0 {
                Output.note(
                    "\(Output.count(withoutAddress, "member")) to mail \(withoutAddress == 1 ? "has" : "have") no e-mail address (print letters for them)"
                )
            }
            var mailing = Mailing(log: log, kind: remind ? .reminder : .invitation)
            mailing.again = again
            mailing.failedOnly = failedOnly
            mailing.perMinute = rate
            let invitation = Invitation(
                kind: mailing.kind, election: reader.genesis.name, base: try VotingLink.base(baseURL),
                help: helpContact, timeZone: TimeZone(identifier: timeZone)!)
            let totals: Mailing.Totals
            do {
                defer { Output.endProgress() }
                totals = try mailing.run(recipients, invitation: invitation, relay: relay) { totals in
                    let done = totals.sent + totals.refused + totals.deferred + totals.failed
                    Output.progress(
                        "mailed \(done)/\(totals.recipients): \(totals.sent) sent, \(totals.refused + totals.deferred + totals.failed) failed"
                    )
                }
            }
            let failed = totals.refused + totals.deferred + totals.failed
            if output.json {
                try Output.json(totals)
            } else {
                try Output.line(
                    "\(totals.resumed ? "resumed the \(totals.kind.rawValue) mailing: " : "")\(Output.count(totals.sent, "message")) sent, \(failed) failed, \(totals.skipped) already sent or not due"
                )
            }
            if failed > 0 {
                throw VoteError(
                    .refused,
                    "\(Output.count(failed, "message")) failed (vote voter mail-log lists them); send them again with --failed-only"
                )
            }
        }
    }

    /// `vote voter mail-log`: every member's last message and what the relay said.
    struct MailLogCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "mail-log", abstract: "Show what happened to each member's last message.")

        @OptionGroup var ledger: LedgerOptions
        @Flag(help: "The reminders' log rather than the invitations'.") var remind = false
        @OptionGroup var output: JSONOption

        func run() throws {
            let (_, log) = try officerRecords(ledger, try ledger.reader())
            let latest = try log.latest(of: remind ? .reminder : .invitation).values.sorted { $0.at < $1.at }
            if output.json {
                struct Entry: Encodable {
                    var identity: String
                    var email: String?
                    var status: String
                    var detail: String?
                    var at: String
                }
                return try Output.json(
                    latest.map {
                        Entry(
                            identity: $0.identity ?? "", email: $0.email, status: $0.status.rawValue, detail: $0.detail,
                            at: ISO8601DateFormatter().string(from: $0.at))
                    })
            }
            if latest.isEmpty { return try Output.line("no \(remind ? "reminder" : "invitation") was mailed yet") }
            for record in latest {
                try Output.line(
                    "\(record.identity ?? "")\t\(record.email ?? "")\t\(record.status.rawValue)\t\(record.detail ?? "")"
                )
            }
        }
    }

    /// `vote voter pending`: who has not voted in a place, from the ledger's own state and the contact book.
    struct Pending: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "pending", abstract: "List the members of a place who have not voted yet.",
            discussion: """
                For each member of the contact book authorised in the place, asks the ledger whether their token has \
                voted (in an anonymous place: whether they took their ballot credential). The officer's view: it \
                needs the key directory. The public sees the counts only.
                """)

        @OptionGroup var ledger: LedgerOptions
        @Option(help: "Place id.") var place: UInt32
        @OptionGroup var output: JSONOption

        func run() throws {
            let reader = try ledger.reader()
            let view = try ledger.view(of: reader)
            let state = try view.place(place)
            let (book, _) = try officerRecords(ledger, reader)
            struct Member: Encodable {
                var identity: String
                var name: String?
                var email: String?
            }
            var pending: [Member] = []
            var inBook = 0
            for member in try book.members() {
                guard let token = member.tokens[place] else { continue }
                inBook += 1
                if try view.hasVoted(ledger, place: place, tokenHash: token.hash) == false {
                    pending.append(
                        Member(identity: member.identity, name: member.contact.name, email: member.contact.email))
                }
            }
            let anonymous = state.place.isAnonymous
            let done = anonymous ? state.issued : state.voted
            if output.json {
                struct PendingJSON: Encodable {
                    var place: UInt32
                    var authorized: UInt64
                    var done: UInt64
                    var inContactBook: Int
                    var pending: [Member]
                    enum CodingKeys: String, CodingKey {
                        case place, authorized, pending
                        case done = "voted"
                        case inContactBook = "in_contact_book"
                    }
                }
                return try Output.json(
                    PendingJSON(
                        place: place, authorized: state.authorized, done: done, inContactBook: inBook, pending: pending)
                )
            }
            Output.note(
                "place \(place): \(state.authorized) authorised, \(done) \(anonymous ? "took their ballot" : "voted"); \(pending.count) of the \(inBook) in the contact book have not"
            )
            for member in pending {
                try Output.line("\(member.identity)\t\(member.name ?? "")\t\(member.email ?? "")")
            }
        }
    }
}

extension MailPlace {
    /// The place as a message or a letter names it.
    init(_ place: Place) {
        self.init(
            id: place.id, name: place.name, opens: Date(timeIntervalSince1970: Double(place.voting.start) / 1000),
            closes: Date(timeIntervalSince1970: Double(place.voting.end) / 1000), anonymous: place.isAnonymous)
    }
}
