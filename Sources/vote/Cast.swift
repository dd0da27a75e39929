import ArgumentParser
import Ballots
import Election
import Foundation
import JSONViews
import Ledger
import LedgerCrypto
import OutputFiles
import VoteCommandLine
import VoteLedger

/// `vote cast`: one vote with a token, or a file of "token,candidate" lines.
struct Cast: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cast", abstract: "Cast a vote (voting window only); prints a receipt.",
        discussion: """
            The token comes from --token-file FILE or --token - (standard input); --token VALUE also works but \
            is visible to other local users while the command runs. Every output path is claimed before the \
            vote is decided. A lost receipt can be issued again with `vote receipt`. Bulk: --from FILE with \
            "token,candidate" lines, each decided on its own; rejects are listed with line numbers.
            """)

    @OptionGroup var ledger: LedgerOptions
    @Option(help: "Place id.") var place: UInt32
    @Option(help: "Candidate id.") var candidate: UInt32?
    @Option(
        help: ArgumentHelp(
            "The answers to a place's questions, one per question, separated by ;.",
            discussion: """
                Options are numbered from 1 as `vote place show` lists them: 1,3 chooses options 1 and 3; 2>1>3 \
                ranks 2 first; yes, no or abstain answers a yes/no question; blank leaves a question blank. \
                Example: --answers "1,3,5;yes;2>1;blank".
                """,
            valueName: "answers"))
    var answers: String?
    @OptionGroup var tokenInput: TokenOptions
    @Option(help: "File of \"token,candidate\" lines.") var from: String?
    @Option(help: "Commands per block in bulk mode.") var batch = 10_000
    @Option(help: "Write the receipt (C2SP tlog-proof) to this new file (0600).") var receiptOut: String?
    @Option(help: "Bulk: write one receipt per accepted vote into this new or empty directory (0700).") var receiptsOut:
        String?
    @OptionGroup var output: JSONOption
    @OptionGroup var passphrase: PassphraseOptions
    @OptionGroup var witnesses: WitnessOptions

    func validate() throws {
        if candidate != nil && answers != nil {
            throw ValidationError("give --candidate for a place with candidates, --answers for one with questions")
        }
        switch (candidate != nil || answers != nil, tokenInput.given, from != nil) {
        case (true, true, false), (false, false, true): break
        default:
            throw ValidationError(
                "give either --candidate C (or --answers A) with --token-file FILE (or --token -), or --from FILE")
        }
        if receiptOut != nil && from != nil {
            throw ValidationError("--receipt-out is for one vote; use --receipts-out DIR in bulk")
        }
        if receiptsOut != nil && from == nil {
            throw ValidationError("--receipts-out is for bulk casting; use --receipt-out FILE")
        }
        guard (1...100_000).contains(batch) else { throw ValidationError("--batch must be 1-100000") }
        if from != nil && receiptsOut == nil && !witnesses.witnesses.isEmpty {
            throw ValidationError("--witness in bulk cosigns the receipts: give --receipts-out DIR")
        }
    }

    func run() async throws {
        if let from { return try await bulk(from) }
        let token = try tokenInput.read()
        // Claimed before the vote is decided: a path that cannot take the receipt stops the vote, not the receipt.
        let file = try receiptOut.map { try OutputFile(creating: $0, what: "receipt") }
        var saved = false
        do {
            let command =
                try answers.map { try ballotCommand($0, tokenHash: token.hash) }
                ?? Command.castVote(place: place, candidate: candidate!, tokenHash: token.hash)
            let outcome = try await ledger.withWriter(passphrase) {
                try await $0.submit(batch: [command], proofs: true)
            }
            let receipt = try outcome.receipt(of: 0)
            // Recorded from here on: any failure says so, and how to get the receipt again.
            let recorded = "the vote was recorded in block \(receipt.height)"
            let recovery = "get the receipt again with `vote receipt --place \(place) --token-file FILE`"
            do {
                var proof = try outcome.tlogProof(for: receipt)
                proof.checkpoint = try witnesses.cosign(proof.checkpoint, source: try ledger.reader())
                if let file {
                    try Receipts.save(proof, to: file)
                    saved = true
                }
                if output.json {
                    try Output.json(ReceiptJSON(place: place, candidate: candidate, receipt: receipt, proof: proof))
                } else {
                    if case .ballotReplaced = receipt.event {
                        try Output.line(
                            "ballot recorded in block \(receipt.height); it replaces your earlier one, which no longer counts"
                        )
                    } else {
                        try Output.line("vote recorded in block \(receipt.height)")
                    }
                    try Output.line(
                        "receipt \(receipt.eventHash.hex) (event \(receipt.index))\(receiptOut.map { ", saved to \($0)" } ?? "")"
                    )
                }
                try Output.flush()
            } catch let error as WriteError {
                throw VoteError(
                    .output,
                    "\(recorded), but \(error.message)\(saved ? " (the receipt is saved in \(file!.path))" : "; \(recovery)")"
                )
            } catch let error as VoteError where error.reason == .output {
                throw VoteError(.output, "\(recorded), but \(error.message); \(recovery)")
            } catch {
                throw VoteError(
                    .output,
                    "\(recorded), but its receipt could not be made (\(VoteError.describe(error))); \(recovery)")
            }
        } catch {
            if !saved { file?.remove() }
            throw error
        }
    }

    /// The command casting `text` (the `--answers` form) to the place's questions, read against its ballot.
    private func ballotCommand(_ text: String, tokenHash: Digest) throws -> Command {
        guard let ballot = try ledger.view().place(place).place.ballot else {
            throw VoteError(.placeHasNoBallot(place: place))
        }
        switch ballot.answers(parsing: text) {
        case .success(let answers): return .castBallot(place: place, answers: answers, tokenHash: tokenHash)
        case .failure(let error): throw VoteError(.usage, "--answers: \(error)")
        }
    }

    /// Bulk casting through the writer actor: every receipt file of a batch is claimed before the batch is
    /// recorded, and written once its block is durable.
    private func bulk(_ path: String) async throws {
        var lines = try LineReader(path: path)
        if let receiptsOut { try Receipts.prepareDirectory(receiptsOut) }
        let writer = try ledger.openWriter(passphrase)
        let (place, batch, receiptsOut, witnesses, ledger) = (place, batch, receiptsOut, witnesses, ledger)
        let refusing = Locked<Set<String>>([])
        let totals = try await { () async throws -> BulkTotals in
            defer { Output.endProgress() }
            let claimed = ClaimedReceipts()
            do {
                let totals = try await BulkRun<Void>(writer: writer, batchSize: batch, proofs: receiptsOut != nil).run(
                    &lines,
                    parse: { text in
                        // A plain id is read as it is; only one with spaces around it is trimmed first.
                        let comma = text.utf8.firstIndex(of: UInt8(ascii: ","))
                        if let comma, case .failure(.mistyped) = VotingToken.parse(text[..<comma]) {
                            return .reject("the token is mistyped: its check character does not match")
                        }
                        guard let comma, let token = VotingToken(typed: text[..<comma]),
                            case let field = text[text.utf8.index(after: comma)...],
                            let candidate = UInt32(field) ?? UInt32(field.trimmingCharacters(in: .whitespaces))
                        else {
                            return .reject("expected \"token,candidate\" with a well-formed token and a candidate id")
                        }
                        return .entry((), .castVote(place: place, candidate: candidate, tokenHash: token.hash))
                    },
                    parsePlain: { bytes in
                        // The same reading from the bytes, for the lines it covers; any other line is read above.
                        guard let comma = bytes.firstIndex(of: UInt8(ascii: ",")),
                            let token = VotingToken(typed: UnsafeBufferPointer(rebasing: bytes[..<comma])),
                            let candidate = Cast.plainCandidate(UnsafeBufferPointer(rebasing: bytes[(comma + 1)...]))
                        else { return nil }
                        return .entry((), .castVote(place: place, candidate: candidate, tokenHash: token.hash))
                    },
                    rejected: { Output.note("line \($0.line): \($0.reason)") },
                    beforeWriting: { entries, results in
                        guard let receiptsOut else { return }
                        claimed.files = []
                        do {
                            for (entry, result) in zip(entries, results) where (try? result.get()) != nil {
                                claimed.files.append(
                                    try OutputFile(
                                        creating: Receipts.bulkPath(receiptsOut, line: entry.line), what: "receipt"))
                            }
                        } catch {
                            claimed.removeAll()
                            throw error
                        }
                    },
                    afterWriting: { _, outcome in
                        guard let receiptsOut else { return }
                        let accepted = outcome.results.compactMap { try? $0.get() }
                        var saved = 0
                        do {
                            var proofs = try accepted.map(outcome.tlogProof(for:))
                            // With witnesses, the batch's head (which every receipt of it shares) is cosigned.
                            if let head = proofs.first?.checkpoint, !witnesses.witnesses.isEmpty {
                                let cosigned = try witnesses.cosign(
                                    head, source: try ledger.reader(), refusing: refusing)
                                for index in proofs.indices { proofs[index].checkpoint = cosigned }
                            }
                            for (file, proof) in zip(claimed.files, proofs) {
                                try file.appendDurably(proof.serialized)
                                file.close()
                                saved += 1
                            }
                            try OutputFile.syncDirectory(receiptsOut)
                        } catch {
                            // No empty or partial receipt is left behind.
                            claimed.files[saved...].forEach { $0.remove() }
                            let typed = VoteError(error)
                            throw typed.reason == .output
                                ? typed : VoteError(.io, "the receipts could not be made (\(typed.message))")
                        }
                    },
                    progress: { Output.progress("cast \($0.accepted) votes, \($0.rejected) rejected") })
                await writer.close()
                return totals
            } catch let stop as BulkStop {
                if !stop.batchRecorded { claimed.removeAll() }
                await writer.close()
                throw Cast.stopped(stop, receiptsOut: receiptsOut)
            } catch {
                await writer.close()
                throw error
            }
        }()
        try Output.report(recorded: "\(totals.accepted) votes were recorded") {
            try Output.line(
                "cast \(Output.count(totals.accepted, "vote")) in place \(place); \(totals.rejected) rejected\(receiptsOut.map { "; receipts in \($0)" } ?? "")"
            )
        }
        if totals.rejected > 0 {
            throw VoteError(
                .refused,
                "\(Output.count(totals.rejected, "line")) \(totals.rejected == 1 ? "was" : "were") rejected (listed above)"
            )
        }
    }

    /// A candidate id of ASCII digits, maybe padded with spaces and tabs, as `UInt32(_:)` reads it once
    /// trimmed; `nil` for anything else (a sign, other padding, an overflow), which the text reading decides.
    private static func plainCandidate(_ field: UnsafeBufferPointer<UInt8>) -> UInt32? {
        var value: UInt32 = 0
        var digits = 0
        var after = false
        for byte in field {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                guard !after else { return nil }
                let (tens, overflow) = value.multipliedReportingOverflow(by: 10)
                let (sum, carry) = tens.addingReportingOverflow(UInt32(byte - UInt8(ascii: "0")))
                guard !overflow, !carry else { return nil }
                value = sum
                digits += 1
            case UInt8(ascii: " "), UInt8(ascii: "\t"): after = digits > 0
            default: return nil
            }
        }
        return digits > 0 ? value : nil
    }

    /// What was and was not recorded when a bulk run stops.
    private static func stopped(_ stop: BulkStop, receiptsOut: String?) -> VoteError {
        var text = stop.error.message
        if stop.batchRecorded {
            text +=
                "; the votes of lines \(stop.first)-\(stop.last) were recorded (\(stop.accepted) in all) but their receipts may be missing: get them again with `vote receipt`"
            text += "; lines after \(stop.last) were not cast"
        } else {
            text += "; lines from \(stop.first) on were not cast; \(stop.accepted) votes of earlier lines were recorded"
            if let receiptsOut { text += " with their receipts in \(receiptsOut)" }
        }
        return VoteError(.io, text)
    }
}

/// The receipt files a bulk cast claimed for its current batch, handed from `beforeWriting` (on the writer's
/// queue) to `afterWriting`; the run awaits each batch, so one side uses it at a time.
private final class ClaimedReceipts: @unchecked Sendable {
    var files: [OutputFile] = []

    func removeAll() {
        files.forEach { $0.remove() }
        files = []
    }
}

/// `vote status`: whether a token has voted; nothing else is revealed.
struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Has this token voted? (Reveals nothing else.)")

    @OptionGroup var ledger: LedgerOptions
    @Option(help: "Place id.") var place: UInt32
    @OptionGroup var tokenInput: TokenOptions
    @OptionGroup var output: JSONOption

    func validate() throws { try tokenInput.requireGiven() }

    func run() throws {
        let token = try tokenInput.read()
        let view = try ledger.view()
        // In an anonymous place the token is an issuance code, used up when its credential is issued.
        let anonymous = try view.place(place).place.isAnonymous
        guard let voted = try view.hasVoted(ledger, place: place, tokenHash: token.hash) else {
            throw VoteError(anonymous ? Violation.codeNotAuthorized(place: place) : .tokenNotAuthorized(place: place))
        }
        if anonymous {
            struct IssuanceJSON: Encodable {
                var place: UInt32
                var credentialIssued: Bool
                enum CodingKeys: String, CodingKey {
                    case place
                    case credentialIssued = "credential_issued"
                }
            }
            if output.json { return try Output.json(IssuanceJSON(place: place, credentialIssued: voted)) }
            return try Output.line(voted ? "credential issued" : "not issued")
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
        commandName: "receipt", abstract: "Issue again the receipt of a token's vote, under the current signed head.",
        discussion:
            "A receipt is a function of the ledger and the token: a lost or unsaved receipt can be issued again at any time. Check it with `vote audit`. With --server, the voter's own way: the election server hands the receipt it answered the vote with (POST /api/v1/places/P/receipt), no ledger or key needed."
    )

    @OptionGroup var ledger: LedgerOptions
    @Option(help: "Place id.") var place: UInt32
    @OptionGroup var tokenInput: TokenOptions
    @Option(help: "Write the receipt to this new file (0600) instead of standard output.") var out: String?
    @OptionGroup var output: JSONOption
    @OptionGroup var passphrase: PassphraseOptions
    @OptionGroup var witnesses: WitnessOptions
    @Option(help: "Ask this election server (http://host:port or https://host) instead of reading the ledger.")
    var server: String?

    func validate() throws {
        try tokenInput.requireGiven()
        if let server {
            try ServerOption.at(server).validate()
            if !witnesses.witnesses.isEmpty { throw ValidationError("--witness reads the ledger: not with --server") }
        }
    }

    func run() throws {
        let token = try tokenInput.read()
        let file = try out.map { try OutputFile(creating: $0, what: "receipt") }
        var saved = false
        if let server {
            defer { if !saved { file?.remove() } }
            let answer = try ServerOption.at(server).call("places/\(place)/receipt", body: ["token": token.display])
            guard let text = answer["receipt"] as? String else {
                throw VoteError(.io, "the server's answer holds no receipt")
            }
            if let file {
                try file.appendDurably(text)
                saved = true
            }
            if output.json {
                try Output.line(try JSONText.sorted(answer))
            } else if let out {
                try Output.line(
                    "receipt of the vote in block \(answer["height"] ?? "?") (event \(answer["index"] ?? "?")) saved to \(out)"
                )
            } else {
                try Output.write(text)
            }
            return
        }
        do {
            let audited = try AuditedLedger(ledger)
            var (receipt, proof) = try passphrase.using {
                try audited.reissueReceipt(place: place, tokenHash: token.hash, passphrase: $0)
            }
            proof.checkpoint = try witnesses.cosign(proof.checkpoint, source: try ledger.reader())
            if let file {
                try Receipts.save(proof, to: file)
                saved = true
            }
            let candidate: UInt32? = if case .voteCast(_, let candidate, _) = receipt.event { candidate } else { nil }
            if output.json {
                try Output.json(ReceiptJSON(place: place, candidate: candidate, receipt: receipt, proof: proof))
            } else if let out {
                try Output.line(
                    "receipt of the vote in block \(receipt.height) (event \(receipt.index)) saved to \(out)")
            } else {
                try Output.write(proof.serialized)
            }
        } catch {
            if !saved { file?.remove() }
            throw error
        }
    }
}
