import ArgumentParser
import Election
import Foundation
import Ledger
import LedgerCrypto
import VoteLedger

/// `vote cast`: one vote with a token, or a file of "token,candidate" lines.
struct Cast: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Cast a vote (voting window only); prints a receipt.",
        discussion: """
            The token comes from --token-file FILE or --token - (standard input); --token VALUE also works but \
            is visible to other local users while the command runs. Every output path is claimed before the \
            vote is decided. A lost receipt can be issued again with `vote receipt`. Bulk: --from FILE with \
            "token,candidate" lines, each decided on its own; rejects are listed with line numbers.
            """)

    @OptionGroup var ledger: LedgerOptions
    @Option(help: "Place id.") var place: UInt32
    @Option(help: "Candidate id.") var candidate: UInt32?
    @OptionGroup var tokenInput: TokenOptions
    @Option(help: "File of \"token,candidate\" lines.") var from: String?
    @Option(help: "Commands per block in bulk mode.") var batch = 10_000
    @Option(help: "Write the receipt (C2SP tlog-proof) to this new file (0600).") var receiptOut: String?
    @Option(help: "Bulk: write one receipt per accepted vote into this new or empty directory (0700).") var receiptsOut: String?
    @OptionGroup var output: JSONOption
    @OptionGroup var passphrase: PassphraseOptions

    func validate() throws {
        switch (candidate != nil, tokenInput.given, from != nil) {
        case (true, true, false), (false, false, true): break
        default: throw ValidationError("give either --candidate C with --token-file FILE (or --token -), or --from FILE")
        }
        if receiptOut != nil && from != nil { throw ValidationError("--receipt-out is for one vote; use --receipts-out DIR in bulk") }
        if receiptsOut != nil && from == nil { throw ValidationError("--receipts-out is for bulk casting; use --receipt-out FILE") }
        guard (1...100_000).contains(batch) else { throw ValidationError("--batch must be 1-100000") }
    }

    static let malformedToken = VoteError(.refused, "the token is malformed (expected 32 letters A-Z and digits 2-7, dashes optional)")

    func run() throws {
        if let from { return try bulk(from) }
        let token = try tokenInput.read()
        // Claimed before the vote is decided: a path that cannot take the receipt stops the vote, not the receipt.
        let file = try receiptOut.map { try PrivateFile(creating: $0, what: "receipt") }
        var saved = false
        do {
            let writer = try ledger.openForWriting(passphrase)
            defer { writer.close() }
            let receipt = try writer.submit(.castVote(place: place, candidate: candidate!, tokenHash: token.hash))[0]
            // Recorded from here on: any failure says so, and how to get the receipt again.
            let recorded = "the vote was recorded in block \(receipt.height)"
            let recovery = "get the receipt again with `vote receipt --place \(place) --token-file FILE`"
            do {
                let proof = try writer.tlogProofs(for: [receipt])[0]
                if let file {
                    try file.appendDurably(proof.serialized)
                    file.close()
                    try PrivateFile.syncDirectory(PrivateFile.directory(of: file.path))
                    saved = true
                }
                if output.json {
                    try Output.json(ReceiptJSON(place: place, candidate: candidate!, receipt: receipt, proof: proof))
                } else {
                    try Output.line("vote recorded in block \(receipt.height)")
                    try Output.line("receipt \(receipt.eventHash.hex) (event \(receipt.index))\(receiptOut.map { ", saved to \($0)" } ?? "")")
                }
                try Output.flush()
            } catch let error as WriteError {
                let kept = saved ? " (the receipt is saved in \(file!.path))" : "; \(recovery)"
                throw VoteError(.output, "\(recorded), but \(error.message)\(kept)")
            } catch {
                throw VoteError(.output, "\(recorded), but its receipt could not be made (\(VoteError.describe(error))); \(recovery)")
            }
        } catch {
            if !saved { file?.remove() }
            throw error
        }
    }

    private func bulk(_ path: String) throws {
        var lines = try LineReader(path: path)
        if let receiptsOut { try Receipts.prepareDirectory(receiptsOut) }
        let writer = try ledger.openForWriting(passphrase)
        defer { writer.close() }
        var acceptedCount = 0
        var rejected = 0
        var pending: [(line: Int, command: Command)] = []

        /// What was and was not recorded when the run stops at the batch starting at `line`.
        func stopped(_ reason: String, batchRecorded: Bool) -> VoteError {
            let first = pending.first?.line ?? lines.lineNumber
            let last = pending.last?.line ?? first
            var text = reason
            if batchRecorded {
                text += "; the votes of lines \(first)-\(last) were recorded (\(acceptedCount) in all) but their receipts may be missing: get them again with `vote receipt`"
                text += "; lines after \(last) were not cast"
            } else {
                text += "; lines from \(first) on were not cast; \(acceptedCount) votes of earlier lines were recorded"
                if let receiptsOut { text += " with their receipts in \(receiptsOut)" }
            }
            return VoteError(.io, text)
        }

        func flush() throws {
            guard !pending.isEmpty else { return }
            var claimed: [PrivateFile] = []
            let outcome: BatchOutcome
            do {
                outcome = try writer.submit(pending.map(\.command)) { results in
                    // Every receipt file of the batch is claimed before the batch is recorded.
                    guard let receiptsOut else { return }
                    for (entry, result) in zip(pending, results) where (try? result.get()) != nil {
                        claimed.append(try PrivateFile(creating: Receipts.bulkPath(receiptsOut, line: entry.line), what: "receipt"))
                    }
                }
            } catch {
                claimed.forEach { $0.remove() }
                throw stopped(VoteError.describe(error), batchRecorded: false)
            }
            var accepted: [EventReceipt] = []
            for (entry, result) in zip(pending, outcome.results) {
                switch result {
                case .failure(let violation):
                    rejected += 1
                    Output.note("line \(entry.line): \(violation)")
                case .success(let receipts): accepted.append(receipts[0])
                }
            }
            acceptedCount += outcome.accepted
            if let receiptsOut {
                var saved = 0
                do {
                    let proofs = try writer.tlogProofs(for: accepted)
                    for (file, proof) in zip(claimed, proofs) {
                        try file.appendDurably(proof.serialized)
                        file.close()
                        saved += 1
                    }
                    try PrivateFile.syncDirectory(receiptsOut)
                } catch {
                    claimed[saved...].forEach { $0.remove() }  // no empty or partial receipt is left behind
                    let reason = (error as? WriteError)?.message ?? "the receipts could not be made (\(VoteError.describe(error)))"
                    throw stopped(reason, batchRecorded: true)
                }
            }
            pending.removeAll(keepingCapacity: true)
            Output.progress("cast \(acceptedCount) votes, \(rejected) rejected")
        }

        while let line = try lines.next() {
            let number = lines.lineNumber
            guard case .text(let text) = line else {
                rejected += 1
                Output.note("line \(number): \(line == .tooLong ? "line too long" : "not valid UTF-8")")
                continue
            }
            if text.isBlank { continue }
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
        try Output.report(recorded: "\(acceptedCount) votes were recorded") {
            try Output.line("cast \(acceptedCount) votes in place \(place); \(rejected) rejected\(receiptsOut.map { "; receipts in \($0)" } ?? "")")
        }
        if rejected > 0 {
            throw VoteError(.refused, rejected == 1 ? "1 line was rejected (listed above)" : "\(rejected) lines were rejected (listed above)")
        }
    }
}

/// `vote status`: whether a token has voted; nothing else is revealed.
struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Has this token voted? (Reveals nothing else.)")

    @OptionGroup var ledger: LedgerOptions
    @Option(help: "Place id.") var place: UInt32
    @OptionGroup var tokenInput: TokenOptions
    @OptionGroup var output: JSONOption

    func validate() throws {
        guard tokenInput.given else { throw ValidationError("give the token with --token-file FILE or --token -") }
    }

    func run() throws {
        let token = try tokenInput.read()
        let view = try ledger.view()
        _ = try view.place(place)
        guard let voted = try view.hasVoted(path: ledger.path, place: place, tokenHash: token.hash) else {
            throw VoteError(Violation.tokenNotAuthorized(place: place))
        }
        if output.json {
            struct StatusJSON: Encodable { var place: UInt32; var voted: Bool }
            return try Output.json(StatusJSON(place: place, voted: voted))
        }
        try Output.line(voted ? "voted" : "not voted")
    }
}

/// `vote receipt`: the receipt of a token's vote, issued again under the current head. A read command: it
/// takes no lock and writes nothing to the ledger (it needs the authority key to sign the head).
struct Receipt: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Issue again the receipt of a token's vote, under the current signed head.",
        discussion: "A receipt is a function of the ledger and the token: a lost or unsaved receipt can be issued again at any time. Check it with `vote audit`.")

    @OptionGroup var ledger: LedgerOptions
    @Option(help: "Place id.") var place: UInt32
    @OptionGroup var tokenInput: TokenOptions
    @Option(help: "Write the receipt to this new file (0600) instead of standard output.") var out: String?
    @OptionGroup var output: JSONOption
    @OptionGroup var passphrase: PassphraseOptions

    func validate() throws {
        guard tokenInput.given else { throw ValidationError("give the token with --token-file FILE or --token -") }
    }

    func run() throws {
        let token = try tokenInput.read()
        let file = try out.map { try PrivateFile(creating: $0, what: "receipt") }
        var saved = false
        do {
            let audited = try AuditedLedger(path: ledger.path)
            let (receipt, proof) = try passphrase.using {
                try audited.reissueReceipt(place: place, tokenHash: token.hash, passphrase: $0)
            }
            if let file {
                try file.appendDurably(proof.serialized)
                file.close()
                try PrivateFile.syncDirectory(PrivateFile.directory(of: file.path))
                saved = true
            }
            guard case .voteCast(_, let candidate, _) = receipt.event else { return }
            if output.json {
                try Output.json(ReceiptJSON(place: place, candidate: candidate, receipt: receipt, proof: proof))
            } else if let out {
                try Output.line("receipt of the vote in block \(receipt.height) (event \(receipt.index)) saved to \(out)")
            } else {
                try Output.write(proof.serialized)
            }
        } catch {
            if !saved { file?.remove() }
            throw error
        }
    }
}

/// Receipt files: C2SP tlog-proof text, 0600, in directories of their own (0700): a receipt names the
/// voter's choice.
enum Receipts {
    /// The receipt of the vote on `line` of a bulk file.
    static func bulkPath(_ directory: String, line: Int) -> String { directory + "/line-\(line).tlog-proof" }

    /// Makes `path` ready for a bulk run's receipts before anything is cast: a new directory (0700), or an
    /// existing empty one, so that no receipt path is taken when its vote is recorded.
    static func prepareDirectory(_ path: String) throws {
        if mkdir(path, 0o700) == 0 { return }
        let reason: String
        switch errno {
        case EEXIST:
            var status = stat()
            guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else {
                throw VoteError(.refused, "receipts directory \(path) exists and is not a directory; nothing was cast")
            }
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else {
                throw VoteError(.refused, "cannot read receipts directory \(path); nothing was cast")
            }
            guard names.isEmpty else {
                throw VoteError(.refused, "receipts directory \(path) is not empty (receipts are never overwritten; give a new directory); nothing was cast")
            }
            return
        case ENOENT: reason = "its parent directory does not exist"
        default: reason = VoteError.describe(errno: errno)
        }
        throw VoteError(.io, "cannot create receipts directory \(path): \(reason); nothing was cast")
    }

    static func read(_ path: String) throws -> TlogProof {
        guard let data = FileManager.default.contents(atPath: path) else { throw VoteError(.refused, "\(path): cannot read the receipt") }
        guard data.count < 1 << 20, let text = String(data: data, encoding: .utf8), let proof = TlogProof(parsing: text) else {
            throw VoteError(.refused, "\(path): not a receipt (expected a c2sp.org/tlog-proof@v1 document)")
        }
        return proof
    }
}
