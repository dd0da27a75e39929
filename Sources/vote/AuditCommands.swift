import ArgumentParser
import Ballots
import Election
import Foundation
import JSONViews
import Ledger
import LedgerCrypto
import OutputFiles
import TlogWitness
import VoteCommandLine
import VoteLedger

/// `vote audit`: check a receipt, or that the ledger extends a published head.
struct Audit: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit", abstract: "Check a vote receipt, or that the ledger extends a previously published head.",
        discussion: """
            vote audit RECEIPT             the head's signature, the vote's inclusion, and that this ledger still extends that head
            vote audit RECEIPT --head H    also against a published head H
            vote audit --head H            this ledger extends the published head H (no rollback, no fork)
            vote audit RECEIPT --key VKEY  offline, without a ledger: signature and inclusion (VKEY from `vote head`)
            … --witness NAME=VKEY … [--quorum K]   also K of these witnesses must have cosigned the head checked:             the published head with --head (then, offline, it must be the receipt's own head), else the receipt's
            """)

    @OptionGroup var ledger: LedgerOptions
    @Argument(help: "Receipt file (C2SP tlog-proof).") var receipt: String?
    @Option(help: "A published signed head (file).") var head: String?
    @Option(help: "Offline: the authority's verifier key (name+id+key, as `vote head` prints it) or a file holding it.")
    var key: String?
    @Option(
        name: .customLong("witness"),
        help: ArgumentHelp(
            "A witness whose cosignature counts: its name and cosigner verifier key (vote witness init prints it); "
                + "repeatable.", valueName: "NAME=VKEY"))
    var witnesses: [String] = []
    @Option(help: "How many of the witnesses must have cosigned the head (default: all of them).") var quorum: Int?
    @OptionGroup var output: JSONOption

    func validate() throws {
        if receipt == nil && head == nil { throw ValidationError("give a receipt file, --head HEAD, or both") }
        if key != nil && receipt == nil { throw ValidationError("--key is for checking a receipt offline") }
        if quorum != nil && witnesses.isEmpty { throw ValidationError("--quorum needs --witness NAME=VKEY") }
    }

    struct AuditJSON: Encodable {
        var ok = true
        var height: UInt64?
        var index: UInt64?
        var receiptTreeSize: UInt64?
        var currentTreeSize: UInt64?
        var headTreeSize: UInt64?
        var cosignedBy: [String]?

        enum CodingKeys: String, CodingKey {
            case ok, height, index
            case cosignedBy = "cosigned_by"
            case receiptTreeSize = "receipt_tree_size"
            case currentTreeSize = "current_tree_size"
            case headTreeSize = "head_tree_size"
        }
    }

    func run() throws {
        let policy = witnesses.isEmpty ? nil : try WitnessPolicy(witnesses: witnesses, quorum: quorum)
        let published = try head.map(readHead)
        let audited = key == nil ? try AuditedLedger(try ledger.reader()) : nil
        var result = AuditJSON()
        var lines: [String] = []
        if let receipt {
            let report = try Auditor.audit(
                receipt: try Receipts.read(receipt), ledger: audited, key: try key.map(parseKey), head: published)
            result.height = report.height
            result.index = report.index
            result.receiptTreeSize = report.receiptTreeSize
            result.currentTreeSize = report.currentTreeSize
            switch report.event {
            case .voteCast(let place, let candidate, _):
                lines.append("receipt for a vote in place \(place) for candidate \(candidate), event \(report.index)")
            case .anonymousVoteCast(let place, let candidate, _, _):
                lines.append(
                    "receipt for an anonymous vote in place \(place) for candidate \(candidate), event \(report.index)")
            case .credentialIssued(let place, _, _):
                lines.append("receipt for a ballot credential issued in place \(place), event \(report.index)")
            case .ballotCast(let place, _, let answers):
                lines.append(
                    "receipt for a ballot in place \(place) answering \(Ballot.plainText(answers)), event \(report.index)"
                )
            case .anonymousBallotCast(let place, _, _, let answers):
                lines.append(
                    "receipt for an anonymous ballot in place \(place) answering \(Ballot.plainText(answers)), event \(report.index)"
                )
            default: break
            }
            if let current = report.currentTreeSize {
                lines.append(
                    "included at height \(report.height) and unchanged since (ledger now holds \(current) events)")
            } else {
                lines.append(
                    "included at height \(report.height) under the signed head of \(report.receiptTreeSize) events (checked offline)"
                )
            }
        } else if let published, let audited {
            let checkpoint = try SignedHead.verify(published, key: audited.key, ledgerID: audited.genesis.ledgerID)
            try audited.requireHead(checkpoint, what: "the published head")
            result.headTreeSize = checkpoint.treeSize
            result.currentTreeSize = audited.head.treeSize
            lines.append(
                "this ledger extends the published head of \(checkpoint.treeSize) events (height \(checkpoint.extensionValue("height") ?? "?")): no rollback, no fork"
            )
        }
        if let policy {
            // The cosigned head is the published one when given: against a ledger both are proven prefixes of it,
            // so it extends the receipt's; offline only the receipt's own head is proven under it.
            if let published, let receipt, audited == nil, try Receipts.read(receipt).checkpoint.text != published.text
            {
                throw VoteError(
                    .usage,
                    "offline, --witness with --head needs the receipt's own head; give the ledger to prove it extends")
            }
            let note = try published ?? Receipts.read(receipt!).checkpoint
            let cosigned = try policy.require(
                note, what: published == nil ? "the receipt's head" : "the published head")
            result.cosignedBy = cosigned
            lines.append(
                "cosigned by \(cosigned.count) of \(policy.witnesses.count) witnesses (quorum \(policy.quorum)): "
                    + cosigned.joined(separator: ", "))
        }
        if let audited { try RememberedHeads(ledger.derived).check(audited) }
        if output.json { return try Output.json(result) }
        for line in lines { try Output.line(line) }
    }

    private func readHead(_ path: String) throws -> SignedNote {
        guard let data = FileManager.default.contents(atPath: path), data.count < 1 << 16,
            let text = String(data: data, encoding: .utf8), let note = SignedNote(parsing: text)
        else { throw VoteError(.refused, "\(path): not a signed head (expected a C2SP signed note)") }
        return note
    }

    private func parseKey(_ text: String) throws -> Ed25519PublicKey {
        var value = text
        if FileManager.default.fileExists(atPath: text), let data = FileManager.default.contents(atPath: text) {
            value = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        // FORMAT.md §12.1: name+id+base64(0x01 || key), the key ID matching the name and key.
        guard let (_, key) = SignedNote.publicKey(verifierKey: value) else {
            throw VoteError(.usage, "--key must be a verifier key such as voteledger/<id>+<key id>+<base64>")
        }
        return key
    }
}

/// `vote head`: the current head, signed by the authority.
struct Head: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "head", abstract: "Print the current head as a signed C2SP checkpoint (needs the authority key).")

    @OptionGroup var ledger: LedgerOptions
    @OptionGroup var output: JSONOption
    @OptionGroup var passphrase: PassphraseOptions
    @OptionGroup var witnesses: WitnessOptions

    struct HeadJSON: Encodable {
        var origin: String
        var treeSize: UInt64
        var root: String
        var height: UInt64
        var time: String
        var headHash: String
        var verifierKey: String
        var checkpoint: String
        /// With --witness: the witnesses whose cosignature the checkpoint carries.
        var cosignedBy: [String]?

        enum CodingKeys: String, CodingKey {
            case origin, root, height, time, checkpoint
            case treeSize = "tree_size"
            case headHash = "head_hash"
            case verifierKey = "verifier_key"
            case cosignedBy = "cosigned_by"
        }
    }

    /// A read command: it signs the last complete block's head and writes nothing to the ledger directory.
    /// With witnesses, the head carries the cosignatures of those that gave one.
    func run() throws {
        let reader = try ledger.reader()
        let (signed, head, genesis) = try passphrase.using {
            try SignedHead.sign(reader, key: try ledger.authorityKey(reader, passphrase: $0))
        }
        let note = try witnesses.cosign(signed, source: reader)
        let key = try Ed25519PublicKey(rawRepresentation: genesis.authorityKey)
        let origin = SignedHead.origin(genesis.ledgerID)
        if output.json {
            return try Output.json(
                HeadJSON(
                    origin: origin, treeSize: head.treeSize, root: Base64.encode(head.treeRoot.bytes),
                    height: head.height, time: Timestamp.format(head.timestamp),
                    headHash: head.hash.hex, verifierKey: SignedNote.verifierKey(name: origin, key: key),
                    checkpoint: note.serialized,
                    cosignedBy: witnesses.witnesses.isEmpty
                        ? nil : note.signatures.dropFirst().map(\.name)))
        }
        try Output.write(note.serialized)
        try Output.flush()  // the head first: the note below is about it
        Output.note("verifier key: \(SignedNote.verifierKey(name: origin, key: key))")
    }
}

/// `vote export`: results with the signed block they derive from, or the whole event log as JSON lines.
struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export a place's results (CSV or JSON) or the event log (JSON lines), streaming.")

    @OptionGroup var ledger: LedgerOptions
    @Option(help: "Place whose results to export.") var place: UInt32?
    @Option(help: "csv or json.") var format = "json"
    @Flag(help: "Export every event as JSON lines.") var events = false
    @Option(help: "With --events: first block height.") var from: UInt64 = 0

    func validate() throws {
        guard (place != nil) != events else { throw ValidationError("give either --place P or --events") }
        guard format == "csv" || format == "json" else { throw ValidationError("--format must be csv or json") }
    }

    func run() throws {
        if events { return try exportEvents() }
        let view = try ledger.view()
        let state = try view.place(place!)
        // The signed block the results derive from: the head the view replayed to.
        var signature = ""
        _ = try ledger.reader().scanBlocks(from: view.head.height) { raw, _ in
            signature = Hex.encode(try EncodedBlock(decoding: raw).signature)
            return false
        }
        let rows = Projections.tally(state)
        let turnout = Projections.turnout(state)
        let status = state.status(at: Clock.now())
        let head = view.head
        if format == "csv" {
            try Output.line(
                "# place \(place!): \(state.place.name) (\(status.rawValue)\(state.certifiedAt != nil ? ", certified" : ""))"
            )
            try Output.line(
                "# head height \(head.height), tree size \(head.treeSize), root \(head.treeRoot.hex), header hash \(head.hash.hex)"
            )
            try Output.line("# authority key \(Hex.encode(view.genesis.authorityKey)), header signature \(signature)")
            try Output.line("candidate,name,votes,share,withdrawn")
            for row in rows {
                try Output.line(
                    "\(row.candidate),\(Output.csvField(row.name)),\(row.votes),\(String(format: "%.6f", row.share)),\(row.withdrawn)"
                )
            }
            try Output.line("# turnout \(turnout.voted) of \(turnout.authorized)")
            return
        }
        struct ResultsExport: Encodable {
            var place: UInt32
            var name: String
            var status: String
            var certified: Bool
            var tally: [TallyRowJSON]
            var turnout: TurnoutJSON
            var head: [String: String]
        }
        try Output.json(
            ResultsExport(
                place: place!, name: state.place.name, status: status.rawValue, certified: state.certifiedAt != nil,
                tally: rows.map(TallyRowJSON.init), turnout: TurnoutJSON(turnout),
                head: [
                    "height": String(head.height), "tree_size": String(head.treeSize), "tree_root": head.treeRoot.hex,
                    "header_hash": head.hash.hex, "header": Hex.encode(head.encoded), "signature": signature,
                    "authority_key": Hex.encode(view.genesis.authorityKey),
                ]))
    }

    private func exportEvents() throws {
        try ledger.reader().forEachBlock(from: from) { block in
            try Output.write(try EventLineJSON.lines(of: block))
        }
    }
}
