import ArgumentParser
import Election
import FileDriver
import Foundation
import JSONViews
import Ledger
import Mail
import VoteCommandLine
import VoteLedger

/// The contact book and delivery log of `ledger`, sealed under its voter secret in its key directory.
func officerRecords(_ ledger: LedgerOptions, _ reader: any BlockSource) throws -> (ContactBook, MailLog) {
    let keys = try ledger.requiredKeyDirectory()
    return Mail.officerRecords(
        keys: FileKeyStore(keys), ledgerID: reader.genesis.ledgerID, secret: try FileVoterSecret(keys: keys))
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
        @OptionGroup var mail: MailOptions
        @Flag(help: "A reminder, to members who have not voted in a place that is still open.") var remind = false
        @Flag(help: "Only members whose last message of this kind failed (refused, deferred, failed or bounced).")
        var failedOnly = false
        @Flag(help: "Mail everyone again, even those already sent this message.") var again = false
        @OptionGroup var output: JSONOption

        func validate() throws {
            guard mail.given else {
                throw ValidationError("--base-url, --help-contact, --from and --smtp-host are needed to send mail")
            }
            if failedOnly && again { throw ValidationError("--failed-only and --again do not go together") }
        }

        func run() throws {
            let settings = try mail.settings()!
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
            let kind: MailKind = remind ? .reminder : .invitation
            let due = try Mailing.due(
                members, kind: kind, only: place, view: view, source: reader, derived: ledger.derived, now: Clock.now())
            let withoutAddress = due.withoutAddress
            if withoutAddress > 0 {
                Output.note(
                    "\(Output.count(withoutAddress, "member")) to mail \(withoutAddress == 1 ? "has" : "have") no e-mail address (print letters for them)"
                )
            }
            var mailing = Mailing(log: log, kind: kind)
            mailing.again = again
            mailing.failedOnly = failedOnly
            mailing.perMinute = settings.perMinute
            let invitation = settings.invitation(kind, election: reader.genesis.name)
            let totals: Mailing.Totals
            do {
                defer { Output.endProgress() }
                totals = try mailing.run(due.recipients, invitation: invitation, relay: settings.relay) { totals in
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
                if try view.hasVoted(reader, place: place, tokenHash: token.hash, derived: ledger.derived) == false {
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
