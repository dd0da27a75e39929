import ArgumentParser
import Election
import Foundation
import LedgerCrypto
import VoteLedger

/// `vote cast`: one vote with a token, or a file of "token,candidate" lines.
struct Cast: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Cast a vote (voting window only); prints a receipt.",
        discussion: "Bulk: --from FILE with \"token,candidate\" lines, each decided on its own; rejects are listed with line numbers.")

    @OptionGroup var ledger: LedgerOptions
    @Option(help: "Place id.") var place: UInt32
    @Option(help: "Candidate id.") var candidate: UInt32?
    @Option(help: "The voter's token.") var token: String?
    @Option(help: "File of \"token,candidate\" lines.") var from: String?
    @Option(help: "Commands per block in bulk mode.") var batch = 10_000
    @OptionGroup var output: JSONOption
    @OptionGroup var passphrase: PassphraseOptions

    func validate() throws {
        switch (candidate, token, from) {
        case (.some, .some, nil), (nil, nil, .some): break
        default: throw ValidationError("give either --candidate C --token TOKEN, or --from FILE")
        }
        guard (1...100_000).contains(batch) else { throw ValidationError("--batch must be 1-100000") }
    }

    func run() throws {
        if let from { return try bulk(from) }
        guard let token = VotingToken(typed: token!) else { throw Cast.malformedToken }
        let writer = try ledger.openForWriting(passphrase)
        defer { writer.close() }
        let receipt = try writer.submit(.castVote(place: place, candidate: candidate!, tokenHash: token.hash))[0]
        if output.json {
            return try Output.json(
                ReceiptJSON(
                    place: place, candidate: candidate!, height: receipt.height, index: receipt.index,
                    eventHash: receipt.eventHash.hex))
        }
        print("vote recorded in block \(receipt.height)")
        print("receipt \(receipt.eventHash.hex) (event \(receipt.index))")
    }

    static let malformedToken = VoteError(.rejected, "the token is malformed (expected 32 letters A-Z and digits 2-7, dashes optional)")

    private func bulk(_ path: String) throws {
        var lines = try LineReader(path: path)
        let writer = try ledger.openForWriting(passphrase)
        defer { writer.close() }
        var accepted = 0
        var rejected = 0
        var pending: [(line: Int, command: Command)] = []

        func flush() throws {
            guard !pending.isEmpty else { return }
            let outcome = try writer.submit(pending.map(\.command))
            for (entry, result) in zip(pending, outcome.results) {
                if case .failure(let violation) = result {
                    rejected += 1
                    Output.note("line \(entry.line): \(violation)")
                }
            }
            accepted += outcome.accepted
            pending.removeAll(keepingCapacity: true)
            Output.progress("cast \(accepted) votes, \(rejected) rejected")
        }

        while let line = try lines.next() {
            let number = lines.lineNumber
            guard case .text(let text) = line else {
                rejected += 1
                Output.note("line \(number): \(line == .tooLong ? "line too long" : "not valid UTF-8")")
                continue
            }
            if text.allSatisfy(\.isWhitespace) { continue }
            let fields = text.split(separator: ",", omittingEmptySubsequences: false)
            guard fields.count == 2, let token = VotingToken(typed: String(fields[0])),
                let candidate = UInt32(fields[1].trimmingCharacters(in: .whitespaces))
            else {
                rejected += 1
                Output.note("line \(number): expected \"token,candidate\" with a well-formed token and a candidate id")
                continue
            }
            pending.append((number, .castVote(place: place, candidate: candidate, tokenHash: token.hash)))
            if pending.count >= batch { try flush() }
        }
        try flush()
        Output.endProgress()
        print("cast \(accepted) votes in place \(place); \(rejected) rejected")
        if rejected > 0 {
            throw VoteError(.rejected, rejected == 1 ? "1 line was rejected (listed above)" : "\(rejected) lines were rejected (listed above)")
        }
    }
}

/// `vote status`: whether a token has voted; nothing else is revealed.
struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Has this token voted? (Reveals nothing else.)")

    @OptionGroup var ledger: LedgerOptions
    @Option(help: "Place id.") var place: UInt32
    @Option(help: "The voter's token.") var token: String
    @OptionGroup var output: JSONOption

    func run() throws {
        guard let token = VotingToken(typed: token) else { throw Cast.malformedToken }
        let state = try ledger.view().place(place)
        guard let voted = state.hasVoted(tokenHash: token.hash) else {
            throw VoteError.init(.rejected, Violation.tokenNotAuthorized(place: place).description)
        }
        if output.json {
            struct StatusJSON: Encodable { var place: UInt32; var voted: Bool }
            return try Output.json(StatusJSON(place: place, voted: voted))
        }
        print(voted ? "voted" : "not voted")
    }
}
