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
        discussion: "Bulk: --from FILE with \"token,candidate\" lines, each decided on its own; rejects are listed with line numbers.")

    @OptionGroup var ledger: LedgerOptions
    @Option(help: "Place id.") var place: UInt32
    @Option(help: "Candidate id.") var candidate: UInt32?
    @Option(help: "The voter's token.") var token: String?
    @Option(help: "File of \"token,candidate\" lines.") var from: String?
    @Option(help: "Commands per block in bulk mode.") var batch = 10_000
    @Option(help: "Write the receipt (C2SP tlog-proof) to this file.") var receiptOut: String?
    @Option(help: "Bulk: write one receipt per accepted vote into this directory.") var receiptsOut: String?
    @OptionGroup var output: JSONOption
    @OptionGroup var passphrase: PassphraseOptions

    func validate() throws {
        switch (candidate, token, from) {
        case (.some, .some, nil), (nil, nil, .some): break
        default: throw ValidationError("give either --candidate C --token TOKEN, or --from FILE")
        }
        if receiptOut != nil && from != nil { throw ValidationError("--receipt-out is for one vote; use --receipts-out DIR in bulk") }
        if receiptsOut != nil && from == nil { throw ValidationError("--receipts-out is for bulk casting; use --receipt-out FILE") }
        guard (1...100_000).contains(batch) else { throw ValidationError("--batch must be 1-100000") }
    }

    func run() throws {
        if let from { return try bulk(from) }
        guard let token = VotingToken(typed: token!) else { throw Cast.malformedToken }
        let writer = try ledger.openForWriting(passphrase)
        defer { writer.close() }
        let receipt = try writer.submit(.castVote(place: place, candidate: candidate!, tokenHash: token.hash))[0]
        let proof = try writer.tlogProofs(for: [receipt])[0]
        if let receiptOut { try Receipts.write(proof, to: receiptOut) }
        if output.json {
            return try Output.json(ReceiptJSON(place: place, candidate: candidate!, receipt: receipt, proof: proof))
        }
        print("vote recorded in block \(receipt.height)")
        print("receipt \(receipt.eventHash.hex) (event \(receipt.index))\(receiptOut.map { ", saved to \($0)" } ?? "")")
    }

    static let malformedToken = VoteError(.rejected, "the token is malformed (expected 32 letters A-Z and digits 2-7, dashes optional)")

    private func bulk(_ path: String) throws {
        var lines = try LineReader(path: path)
        if let receiptsOut { try Receipts.makeDirectory(receiptsOut) }
        let writer = try ledger.openForWriting(passphrase)
        defer { writer.close() }
        var acceptedCount = 0
        var rejected = 0
        var pending: [(line: Int, command: Command)] = []

        func flush() throws {
            guard !pending.isEmpty else { return }
            let outcome = try writer.submit(pending.map(\.command))
            var accepted: [(line: Int, receipt: EventReceipt)] = []
            for (entry, result) in zip(pending, outcome.results) {
                switch result {
                case .failure(let violation):
                    rejected += 1
                    Output.note("line \(entry.line): \(violation)")
                case .success(let receipts): accepted.append((entry.line, receipts[0]))
                }
            }
            if let receiptsOut {
                let proofs = try writer.tlogProofs(for: accepted.map(\.receipt))
                for (entry, proof) in zip(accepted, proofs) {
                    try Receipts.write(proof, to: receiptsOut + "/line-\(entry.line).tlog-proof")
                }
            }
            acceptedCount += outcome.accepted
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
        print("cast \(acceptedCount) votes in place \(place); \(rejected) rejected\(receiptsOut.map { "; receipts in \($0)" } ?? "")")
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
        let view = try ledger.view()
        _ = try view.place(place)
        guard let voted = try view.hasVoted(path: ledger.path, place: place, tokenHash: token.hash) else {
            throw VoteError.init(.rejected, Violation.tokenNotAuthorized(place: place).description)
        }
        if output.json {
            struct StatusJSON: Encodable { var place: UInt32; var voted: Bool }
            return try Output.json(StatusJSON(place: place, voted: voted))
        }
        print(voted ? "voted" : "not voted")
    }
}

/// Receipt files: C2SP tlog-proof text, written durably (a receipt handed out must not vanish).
enum Receipts {
    static func write(_ proof: TlogProof, to path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw VoteError(.rejected, "cannot create receipt \(path): \(String(cString: strerror(errno)))") }
        let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        try handle.write(contentsOf: Data(proof.serialized.utf8))
        try handle.synchronize()
    }

    static func makeDirectory(_ path: String) throws {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw VoteError(.rejected, "\(path) exists and is not a directory") }
            return
        }
        do { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) } catch {
            throw VoteError(.rejected, "cannot create receipts directory \(path)")
        }
    }

    static func read(_ path: String) throws -> TlogProof {
        guard let data = FileManager.default.contents(atPath: path) else { throw VoteError(.rejected, "\(path): cannot read the receipt") }
        guard data.count < 1 << 20, let text = String(data: data, encoding: .utf8), let proof = TlogProof(parsing: text) else {
            throw VoteError(.rejected, "\(path): not a receipt (expected a c2sp.org/tlog-proof@v1 document)")
        }
        return proof
    }
}
