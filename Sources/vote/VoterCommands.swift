import ArgumentParser
import Election
import Foundation
import LedgerCrypto
import VoteLedger

/// `vote voter …`: authorising voters and issuing their tokens.
struct VoterCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "voter", abstract: "Authorise voters.", subcommands: [Authorize.self])

    /// `vote voter authorize`: one voter (token printed once) or a file of identities (tokens to a 0600 file).
    struct Authorize: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Authorise voters for a place and issue their voting tokens.",
            discussion: """
                With --voter, prints the new token once on stdout, before the authorisation is recorded (if it \
                cannot be written, nothing is recorded). With --from, reads one identity per line \
                (E.164 phone number or member id) and writes "identity,token" lines to --tokens-out (created \
                0600; tokens are saved before they are authorised on the ledger).
                """)

        @OptionGroup var ledger: LedgerOptions
        @Option(help: "Place id.") var place: UInt32
        @Option(help: "Voter identity: E.164 phone number or member id.") var voter: String?
        @Option(help: "File of identities, one per line.") var from: String?
        @Option(help: "Where to write the issued tokens (must not exist).") var tokensOut: String?
        @Option(help: "Commands per block in bulk mode.") var batch = 10_000
        @OptionGroup var passphrase: PassphraseOptions
        @OptionGroup var output: JSONOption

        func validate() throws {
            switch (voter, from, tokensOut) {
            case (.some, nil, nil): break
            case (nil, .some, .some): break
            default: throw ValidationError("give either --voter IDENTITY, or --from FILE with --tokens-out FILE")
            }
            guard (1...100_000).contains(batch) else { throw ValidationError("--batch must be 1-100000") }
            if output.json && voter == nil { throw ValidationError("--json goes with --voter (with --from the tokens go to --tokens-out)") }
        }

        func run() throws {
            let writer = try ledger.openForWriting(passphrase)
            defer { writer.close() }
            if let voter { return try authorizeOne(writer, voter) }
            try bulk(writer, from: from!, tokensOut: tokensOut!)
        }

        /// One voter: the token is written to standard output (and flushed, synced if it is a file) before
        /// the authorisation is recorded, so a token that was not delivered is never valid.
        private func authorizeOne(_ writer: ElectionLedger, _ voter: String) throws {
            let token = try VotingToken.generate()
            let command = Command.authorizeVoter(place: place, voterTag: try writer.voterTag(voter), tokenHash: token.hash)
            var delivered = false
            let outcome: BatchOutcome
            do {
                outcome = try writer.submit([command]) { results in
                    guard case .success(let receipts) = results[0] else { return }
                    if output.json {
                        try Output.json(VoterAuthorizedJSON(place: place, token: token.display, recorded: RecordedJSON(receipts[0])))
                    } else {
                        try Output.line(token.display)
                    }
                    try Output.flush(durably: true)
                    delivered = true
                }
            } catch let error as WriteError {
                throw VoteError(.output, "the voter was not authorised (nothing was recorded): the token could not be delivered, \(error.message); run the command again with a working output")
            } catch where delivered {
                throw VoteError(
                    VoteError(error).reason,
                    "the token printed above is NOT valid: the authorisation was not recorded (\(VoteError.describe(error))); run the command again")
            }
            if case .failure(let violation) = outcome.results[0] { throw VoteError(violation) }
            Output.note("voter authorised for place \(place); give them the token printed on standard output, it is shown only once")
        }

        private func bulk(_ writer: ElectionLedger, from: String, tokensOut: String) throws {
            var lines = try LineReader(path: from)
            let tokensFile = try PrivateFile(creating: tokensOut, what: "tokens file")
            var accepted = 0
            var rejected = 0
            var pending: [(line: Int, identity: String, token: VotingToken, command: Command)] = []
            var tokens: [VotingToken] = []  // drawn a batch at a time: one call to the random generator

            func flush() throws {
                guard !pending.isEmpty else { return }
                var saved = 0
                let committedSize = tokensFile.size
                let outcome: BatchOutcome
                do {
                    outcome = try writer.submit(pending.map(\.command)) { results in
                        // The tokens are on disk before their authorisations are: none is ever lost.
                        var text = ""
                        for (entry, result) in zip(pending, results) {
                            switch result {
                            case .success:
                                text += "\(entry.identity),\(entry.token.display)\n"
                                saved += 1
                            case .failure(let violation):
                                rejected += 1
                                Output.note("line \(entry.line): \(violation)")
                            }
                        }
                        try tokensFile.appendDurably(text)
                    }
                } catch {
                    // Nothing of this batch was recorded: the tokens file goes back to listing exactly the
                    // authorised voters, or goes away if it lists none (so a rerun can use the same name).
                    let reason = (error as? WriteError)?.message ?? VoteError.describe(error)
                    let kind = Vote.failure(error).reason
                    let first = pending.first!.line
                    if accepted == 0 {
                        tokensFile.remove()
                        throw VoteError(kind, "\(reason); no voter was authorised and \(tokensOut) was removed")
                    }
                    let kept = (try? tokensFile.truncate(to: committedSize)) != nil
                        ? "\(tokensOut) lists their tokens" : "\(tokensOut) also lists tokens from line \(first) on, which are not valid"
                    throw VoteError(kind, "\(reason); \(accepted) voters of lines before \(first) were authorised and \(kept); lines from \(first) on were not authorised")
                }
                accepted += outcome.accepted
                pending.removeAll(keepingCapacity: true)
                Output.progress("authorised \(accepted) voters, \(rejected) rejected")
            }

            while let line = try lines.next() {
                let number = lines.lineNumber
                switch line {
                case .tooLong, .invalidUTF8:
                    rejected += 1
                    Output.note("line \(number): \(line == .tooLong ? "line too long" : "not valid UTF-8")")
                case .text(let text):
                    if text.isBlank { continue }
                    do {
                        let identity = try VoterIdentity.normalize(text)
                        if tokens.isEmpty { tokens = try VotingToken.generate(count: batch).reversed() }
                        let token = tokens.removeLast()
                        let command = Command.authorizeVoter(
                            place: place, voterTag: try writer.voterTag(identity), tokenHash: token.hash)
                        pending.append((number, identity, token, command))
                    } catch let violation as Violation {
                        rejected += 1
                        Output.note("line \(number): \(violation)")
                    }
                    if pending.count >= batch { try flush() }
                }
            }
            try flush()
            Output.endProgress()
            tokensFile.close()
            try Output.report(recorded: "\(accepted) voters were authorised, their tokens are in \(tokensOut)") {
                try Output.line("authorised \(accepted) voters for place \(place); \(rejected) rejected; tokens in \(tokensOut)")
            }
            if rejected > 0 {
                throw VoteError(.refused, rejected == 1 ? "1 line was rejected (listed above)" : "\(rejected) lines were rejected (listed above)")
            }
        }
    }
}
