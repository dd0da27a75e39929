import ArgumentParser
import Election
import FileDriver
import Foundation
import JSONViews
import Ledger
import LedgerCrypto
import Mail
import OutputFiles
import VoteCommandLine
import VoteLedger

/// `vote voter …`: authorising voters and issuing their tokens.
struct VoterCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "voter",
        abstract: "Authorise voters, mail them their links, re-issue lost tokens and withdraw authorisations.",
        subcommands: [
            Authorize.self, Mail.self, Pending.self, MailLogCommand.self, Bounces.self, Reissue.self, Withdraw.self,
            Letters.self,
        ])

    /// `vote voter reissue`: a new token for an authorised voter who has not voted (a lost letter); the old
    /// token stops working. Printed once, before the re-issue is recorded, as `authorize --voter` does.
    struct Reissue: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "reissue", abstract: "Issue a new voting token to an authorised voter who has not voted.",
            discussion: """
                Prints the new token once on stdout, before the re-issue is recorded (if it cannot be written, \
                nothing is recorded). The voter's previous token can no longer vote. Allowed until voting ends.
                """)

        @OptionGroup var ledger: LedgerOptions
        @Option(help: "Place id.") var place: UInt32
        @Option(help: "Voter identity: E.164 phone number or member id.") var voter: String
        @OptionGroup var passphrase: PassphraseOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let (place, voter) = (place, voter)
            let keys = FileKeyStore(try ledger.requiredKeyDirectory())
            let ledgerID = try ledger.reader().genesis.ledgerID
            let (what, booked) = try await ledger.withWriter(passphrase) { writer in
                let tag = try writer.voterSecret.tag(voter)
                let source = try await writer.source()
                let token = try await issueToken(
                    writer, place: place, json: output.json, what: ("re-issue", "the token was not re-issued")
                ) { token in
                    try VoterTokens.reissue(in: source, place: place, voterTag: tag, newTokenHash: token.hash)
                }
                // A member of the contact book gets the new token there, so mail and letters carry it.
                // The re-issue is recorded: a book that cannot take the token is said, not a failure of the command.
                let book = ContactBook(keys: keys, ledgerID: ledgerID, secret: writer.voterSecret)
                let booked: Bool
                do {
                    booked = try book.replaceToken(of: try VoterIdentity.normalize(voter), place: place, with: token)
                } catch {
                    Output.note(
                        "the contact book could not take the new token (\(VoteError.describe(error))): mail and letters will skip this member"
                    )
                    booked = false
                }
                return (try await tokenWord(writer, place: place), booked)
            }
            Output.note(
                "new \(what) issued for place \(place); the previous one no longer works. Give the voter the \(what) printed on standard output, it is shown only once\(booked ? " (the contact book has it too)" : "")"
            )
        }
    }

    /// `vote voter withdraw`: a correction to the roll recorded as an event (FORMAT.md §11.29); the authorisation
    /// stays on the ledger, the voter's token stops voting and the voter leaves the electorate.
    struct Withdraw: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "withdraw", abstract: "Withdraw the authorisation of a voter who has not voted.",
            discussion: """
                Allowed until the place's voting ends, for a voter who has not voted. The voter's token no longer \
                votes, and the turnout and the electorate (a majority of it, a quorum) no longer count the voter. \
                In an anonymous place, a voter whose issuance code already bought a ballot credential cannot be \
                withdrawn: the credential votes without naming anyone.
                """)

        @OptionGroup var ledger: LedgerOptions
        @Option(help: "Place id.") var place: UInt32
        @Option(help: "Voter identity: E.164 phone number or member id.") var identity: String
        @OptionGroup var passphrase: PassphraseOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let (place, identity) = (place, identity)
            let (recorded, authorized) = try await ledger.withWriter(passphrase) { writer in
                let tag = try writer.voterSecret.tag(identity)
                let source = try await writer.source()
                let command = try VoterTokens.withdrawal(in: source, place: place, voterTag: tag)
                let recorded = try await writer.submit(command, receipt: false).event
                return (recorded, try await writer.state().place(place)?.authorized ?? 0)
            }
            guard case .voterWithdrawn(_, _, _, let weight) = recorded.event else { return }
            try Output.report(recorded: "the voter was withdrawn from place \(place)") {
                if output.json {
                    return try Output.json(
                        VoterWithdrawnJSON(
                            place: place, weight: weight, authorized: authorized, recorded: RecordedJSON(recorded)))
                }
                try Output.line(
                    "withdrew a voter from place \(place): their token no longer votes; \(authorized) voter\(authorized == 1 ? "" : "s") still authorised"
                )
            }
        }
    }

    /// `vote voter authorize`: one voter (token printed once) or a file of identities (tokens to a 0600 file).
    struct Authorize: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "authorize", abstract: "Authorise voters for a place and issue their voting tokens.",
            discussion: """
                With --voter, prints the new token once on stdout, before the authorisation is recorded (if it \
                cannot be written, nothing is recorded). With --from, reads one identity per line \
                (an E.164 phone number, an e-mail address or a member id; in a place that asks questions, \
                "identity,weight" gives the voter a weight, such as their shares), or with --identity-column a \
                table as the organisation keeps it (CSV, semicolons or TSV, a header, any columns), and writes \
                "identity,token" lines to --tokens-out (created 0600; tokens are saved before they are \
                authorised on the ledger). A refused line never stops the others; a list of which no line is \
                authorised is an error and leaves no tokens file.
                """)

        @OptionGroup var ledger: LedgerOptions
        @Option(help: "Place id.") var place: UInt32
        @Option(help: "Voter identity: E.164 phone number, e-mail address or member id.") var voter: String?
        @Option(help: "File of identities, one per line, or a table (with --identity-column).") var from: String?
        @Option(
            help: ArgumentHelp(
                "With --from: the table's column that holds each voter's identity, by its header name or number from 1.",
                discussion: "The file's first line is then its header; its other columns (names, units) are not read."))
        var identityColumn: String?
        @Option(help: "With --identity-column: the column that holds each voter's weight (shares, units).")
        var weightColumn: String?
        @Option(
            help: ArgumentHelp(
                "With --identity-column: the column of each member's name, kept in the contact book.",
                discussion:
                    "The contact book (contacts.sealed in the key directory, encrypted) is what `vote voter mail` reads; nothing of it reaches the ledger."
            ))
        var nameColumn: String?
        @Option(help: "With --identity-column: the column of each member's e-mail address (for vote voter mail).")
        var emailColumn: String?
        @Option(help: "With --identity-column: the column of each member's language (en, ko).") var languageColumn:
            String?
        @Option(help: "With --identity-column: the column of each member's postal address, one line (for letters).")
        var addressColumn: String?
        @Option(
            help:
                "With --identity-column: the column of each member's time zone (Europe/Berlin): their mail and letters give the windows in it."
        )
        var timeZoneColumn: String?
        @Option(
            help: ArgumentHelp(
                "With --voter: the voter's weight (shares, units), in a place that asks questions; default 1.",
                discussion: "Every count, the turnout and a quorum add weights; each answer shows members and weight."))
        var weight: UInt64 = 1
        @Option(help: "Where to write the issued tokens (must not exist).") var tokensOut: String?
        @Option(help: "With --tokens-out: also write each voter's link, BASE/#/booth/PLACE?t=TOKEN.") var baseURL:
            String?
        @Option(help: "Commands per block in bulk mode.") var batch = 10_000
        @OptionGroup var passphrase: PassphraseOptions
        @OptionGroup var output: JSONOption

        func validate() throws {
            switch (voter, from, tokensOut) {
            case (.some, nil, nil): break
            case (nil, .some, .some): break
            default: throw ValidationError("give either --voter IDENTITY, or --from FILE with --tokens-out FILE")
            }
            if identityColumn != nil && from == nil {
                throw ValidationError("--identity-column goes with --from (a table of voters)")
            }
            if (weightColumn ?? nameColumn ?? emailColumn ?? languageColumn ?? addressColumn ?? timeZoneColumn) != nil
                && identityColumn == nil
            {
                throw ValidationError(
                    "--weight-column, --name-column, --email-column, --language-column, --address-column and --time-zone-column go with --identity-column"
                )
            }
            if weight != 1 && voter == nil {
                throw ValidationError("--weight goes with --voter (a list gives a weight after a comma: member-7,120)")
            }
            guard (1...100_000).contains(batch) else { throw ValidationError("--batch must be 1-100000") }
            if let baseURL {
                guard tokensOut != nil else { throw ValidationError("--base-url goes with --from and --tokens-out") }
                do { _ = try VotingLink.base(baseURL) } catch { throw ValidationError(error.description) }
            }
            if output.json && voter == nil {
                throw ValidationError("--json goes with --voter (with --from the tokens go to --tokens-out)")
            }
        }

        func run() async throws {
            if let from, let tokensOut { return try await bulk(from: from, tokensOut: tokensOut) }
            let what = try await ledger.withWriter(passphrase) { try await authorizeOne($0, voter!) }
            Output.note(
                "voter authorised for place \(place); give them the \(what) printed on standard output, it is shown only once"
            )
        }

        /// One voter: the token is delivered before the authorisation is recorded (`issueToken`). Returns what
        /// the token is called in the place.
        private func authorizeOne(_ writer: LedgerWriter, _ voter: String) async throws -> String {
            let tag = try writer.voterSecret.tag(voter)
            let (place, weight) = (place, weight)
            try await issueToken(
                writer, place: place, json: output.json, what: ("authorisation", "the voter was not authorised")
            ) { token in
                .authorizeVoter(place: place, voterTag: tag, tokenHash: token.hash, weight: weight)
            }
            return try await tokenWord(writer, place: place)
        }

        /// Bulk authorisation (`VoterList.authorize`): each batch's tokens are saved durably in the tokens file
        /// before its authorisations are recorded, so a recorded authorisation never lacks its token.
        private func bulk(from: String, tokensOut: String) async throws {
            let base = try baseURL.map { try VotingLink.base($0) }
            var lines = try LineReader(path: from)
            let tokensFile = TokensFile(try OutputFile(creating: tokensOut, what: "tokens file"))
            let writer: LedgerWriter
            do { writer = try ledger.openWriter(passphrase) } catch {
                tokensFile.file.remove()
                throw error
            }
            let place = place
            let columns = identityColumn.map {
                VoterList.Columns(
                    identity: $0, weight: weightColumn, name: nameColumn, email: emailColumn, language: languageColumn,
                    address: addressColumn, timeZone: timeZoneColumn)
            }
            // The contact data goes to the officer's contact book, beside the keys, batch by batch with the tokens.
            let book =
                columns?.hasContact == true
                ? ContactBook(
                    keys: FileKeyStore(try ledger.requiredKeyDirectory()),
                    ledgerID: try ledger.reader().genesis.ledgerID,
                    secret: writer.voterSecret) : nil
            let totals: BulkTotals
            do {
                defer { Output.endProgress() }
                totals = try await VoterList.authorize(
                    &lines, place: place, writer: writer, batchSize: batch, columns: columns,
                    skippedHeader: { _ in Output.note("the first line is a header (it names a column), skipped") },
                    rejected: { Output.note("line \($0.line): \($0.reason)") },
                    beforeWriting: { issued in
                        // The tokens are on disk before their authorisations are: none is ever lost.
                        var text = ""
                        for voter in issued {
                            text += "\(VoterList.field(voter.identity)),\(voter.token.display)"
                            if let base { text += "," + VotingLink.link(base: base, place: place, token: voter.token) }
                            text += "\n"
                        }
                        tokensFile.committedSize = tokensFile.file.size
                        tokensFile.bookSize = nil
                        if let book { tokensFile.bookSize = try book.size() }
                        try tokensFile.file.appendDurably(text)
                        try book?.add(issued, place: place)
                    },
                    progress: { Output.progress("authorised \($0.accepted) voters, \($0.rejected) rejected") })
                await writer.close()
            } catch let stop as BulkStop {
                await writer.close()
                // The book loses the batch that was not recorded, as the tokens file does.
                if let book, let size = tokensFile.bookSize { try? book.truncate(to: size) }
                throw Authorize.stopped(stop, tokensFile: tokensFile, tokensOut: tokensOut)
            } catch {
                await writer.close()
                // Nothing was authorised before the failure (a header without the column, a file that cannot be
                // read): no empty tokens file is left to block the rerun.
                if tokensFile.file.size == 0 { tokensFile.file.remove() }
                throw error
            }
            guard totals.accepted > 0 else {
                tokensFile.file.remove()
                throw VoteError(
                    .refused,
                    totals.rejected == 0
                        ? "\(from) lists no voter; nothing was authorised"
                        : "no voter was authorised: \(totals.rejected == 1 ? "the one line" : "all \(totals.rejected) lines") of \(from) \(totals.rejected == 1 ? "was" : "were") refused (listed above); \(tokensOut) was not kept"
                )
            }
            tokensFile.file.close()
            try Output.report(recorded: "\(totals.accepted) voters were authorised, their tokens are in \(tokensOut)") {
                try Output.line(
                    "authorised \(Output.count(totals.accepted, "voter")) for place \(place); \(totals.rejected) rejected; tokens in \(tokensOut)"
                )
            }
            if totals.rejected > 0 {
                throw VoteError(
                    .refused,
                    "\(Output.count(totals.rejected, "line")) \(totals.rejected == 1 ? "was" : "were") rejected (listed above)"
                )
            }
        }

        /// Nothing of the failed batch was recorded: the tokens file goes back to listing exactly the
        /// authorised voters, or goes away if it lists none (so a rerun can use the same name).
        private static func stopped(_ stop: BulkStop, tokensFile: TokensFile, tokensOut: String) -> VoteError {
            let (reason, kind) = (stop.error.message, stop.error.reason)
            if stop.accepted == 0 {
                tokensFile.file.remove()
                return VoteError(kind, "\(reason); no voter was authorised and \(tokensOut) was removed")
            }
            let kept =
                (try? tokensFile.file.truncate(to: tokensFile.committedSize)) != nil
                ? "\(tokensOut) lists their tokens"
                : "\(tokensOut) also lists tokens from line \(stop.first) on, which are not valid"
            return VoteError(
                kind,
                "\(reason); \(stop.accepted) voters of lines before \(stop.first) were authorised and \(kept); lines from \(stop.first) on were not authorised"
            )
        }
    }
}

/// What a voter's token is called in `place`: an "issuance code" in an anonymous place (it buys a ballot
/// credential, it does not vote), else a "token".
private func tokenWord(_ writer: LedgerWriter, place: UInt32) async throws -> String {
    try await writer.state().place(place)?.place.isAnonymous == true ? "issuance code" : "token"
}

/// Records the command `make` builds for a new token, writing the token to standard output (and flushing it,
/// synced if it is a file) before the command's block is written, so a token that was not delivered is never
/// valid. `what` names the record and says it was not done, for the messages.
@discardableResult
private func issueToken(
    _ writer: LedgerWriter, place: UInt32, json: Bool, what: (record: String, undone: String),
    _ make: (VotingToken) throws -> Command
) async throws -> VotingToken {
    let token = try VotingToken.generate()
    let command = try make(token)
    let delivered = Locked(false)
    let outcome: BatchOutcome
    do {
        outcome = try await writer.submit(batch: [command]) { results in
            guard case .success(let receipt) = results[0] else { return }
            if json {
                try Output.json(
                    VoterAuthorizedJSON(place: place, token: token.display, recorded: RecordedJSON(receipt)))
            } else {
                try Output.line(token.display)
            }
            try Output.flush(durably: true)
            delivered.withLock { $0 = true }
        }
    } catch let error as WriteError {
        throw VoteError(
            .output,
            "\(what.undone) (nothing was recorded): the token could not be delivered, \(error.message); run the command again with a working output"
        )
    } catch  where delivered.withLock({ $0 }) {
        throw VoteError(
            VoteError(error).reason,
            "the token printed above is NOT valid: the \(what.record) was not recorded (\(VoteError.describe(error))); run the command again"
        )
    }
    if case .failure(let violation) = outcome.results[0] { throw VoteError(violation) }
    return token
}

/// The tokens file of a bulk authorisation and its size before the batch being written, shared by the
/// writer's `beforeWriting` and the run; the run awaits each batch, so one side uses it at a time.
private final class TokensFile: @unchecked Sendable {
    let file: OutputFile
    var committedSize = 0
    /// The contact book's size before the batch being written, if a book is kept.
    var bookSize: Int?

    init(_ file: OutputFile) { self.file = file }
}
