import ArgumentParser
import Election
import FileDriver
import FileStore
import Foundation
import JSONViews
import Ledger
import LedgerCrypto
import VoteCommandLine
import VoteLedger

/// `vote tally`: votes per candidate and turnout.
struct Tally: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tally", abstract: "Votes per candidate and turnout of a place.")

    @OptionGroup var ledger: LedgerOptions
    @Option(help: "Place id.") var place: UInt32
    @Flag(help: "Print CSV: candidate,name,votes,share.") var csv = false
    @OptionGroup var output: JSONOption

    func run() throws {
        let reader = try ledger.reader()
        let view = try ledger.view(of: reader)
        let state = try view.place(place)
        if let withheld = view.withheld[place] {
            throw VoteError(
                .refused,
                "this copy withholds \(Output.count(UInt64(withheld), "event")) of place \(place) until its voting ends (its results are embargoed): its counts are not in it"
            )
        }
        let status = state.status(at: Clock.now())
        if output.json {
            return try Output.json(TallyJSON(state, head: view.head, at: Clock.now(), source: reader))
        }
        if let counts = try view.ballotCount(reader, place: place) {
            return try BallotTally.print(state, counts: counts, ended: status == .ended, csv: csv)
        }
        let rows = Projections.tally(state)
        let turnout = Projections.turnout(state)
        if csv {
            try Output.line("candidate,name,votes,share")
            for row in rows {
                try Output.line(
                    "\(row.candidate),\(Output.csvField(row.name)),\(row.votes),\(String(format: "%.6f", row.share))")
            }
            return
        }
        try Output.line(
            "place \(place): \(state.place.name) (\(status.rawValue)\(status == .ended ? ", final" : status == .cancelled ? "" : ", so far"))"
        )
        try Output.table(
            ["ID", "CANDIDATE", "VOTES", "SHARE"],
            rows.map {
                [
                    String($0.candidate), $0.name + ($0.withdrawn ? " (withdrawn)" : ""), String($0.votes),
                    Output.percent($0.votes, of: turnout.voted),
                ]
            })
        try Output.line(
            "turnout: \(turnout.voted) of \(turnout.authorized) (\(Output.percent(turnout.voted, of: turnout.authorized))) at block \(view.head.height)"
        )
        if let issued = turnout.issued { try Output.line("credentials issued: \(issued)") }
        try PlaceCommand.printAmendments(of: state)
        try PlaceCommand.printWithdrawals(of: state)
        try PlaceCommand.printCancellation(of: state)
    }
}

/// `vote verify`: the whole chain and every event re-decided by the contract.
struct Verify: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Verify hashes, tree heads, signatures, and every event against the rules at its time.",
        discussion: """
            On the writer's own ledger directory it also checks the derived state a writer would use (snapshot.bin, \
            voters.idx) against the chain and the seal of the key directory, and names what is stale or forged; \
            --rebuild-derived then rebuilds it from the log (it opens the ledger's writer, as a write command does).
            """)

    @OptionGroup var ledger: LedgerOptions
    @OptionGroup var output: JSONOption
    @Flag(help: "Rebuild the derived state (snapshot, voter index) from the log if any of it is stale or forged.")
    var rebuildDerived = false
    @OptionGroup var passphrase: PassphraseOptions
    @Option(
        name: .customLong("earlier-copy"),
        help: ArgumentHelp(
            "A copy published earlier (`vote publish`, perhaps during an embargo) to check against this ledger.",
            discussion:
                "Every block of it must be this ledger's, and every event it withheld must be this ledger's event in its place.",
            valueName: "DIR"))
    var earlierCopy: String?

    /// One item of derived state, as JSON.
    struct DerivedJSON: Encodable {
        var name: String
        var location: String
        var verdict: String
        var reason: String?
        var height: UInt64?
    }

    struct VerifyJSON: Encodable {
        var ok: Bool
        var ledgerId: String
        var blocks: UInt64
        var events: UInt64
        var bytes: UInt64
        var height: UInt64
        var headHash: String
        var treeRoot: String
        var places: Int
        var seconds: Double
        var tornTailBytes: UInt64
        /// The secret files found in the verified directory (none in a copy safe to hand out).
        var secretFiles: [String]
        /// The derived state a writer would use, each item with its verdict.
        var derived: [DerivedJSON]
        /// Whether it was rebuilt (`--rebuild-derived`).
        var rebuilt: Bool
        /// A copy taken during an embargo: its withheld events, whose contents were not re-decided (absent if none).
        var withheldEvents: Int?
        /// With `--earlier-copy`: the events of that copy that it withheld and this ledger shows, each matching.
        var earlierCopyDisclosed: Int?

        enum CodingKeys: String, CodingKey {
            case ok, blocks, events, bytes, height, places, seconds, derived, rebuilt
            case withheldEvents = "withheld_events"
            case earlierCopyDisclosed = "earlier_copy_disclosed"
            case secretFiles = "secret_files"
            case ledgerId = "ledger_id"
            case headHash = "head_hash"
            case treeRoot = "tree_root"
            case tornTailBytes = "torn_tail_bytes"
        }
    }

    func run() async throws {
        let reader = try ledger.reader()
        let report = try ElectionVerifier.verify(reader)
        let chain = report.chain
        try RememberedHeads(ledger.derived).check(try AuditedLedger(reader))
        let derived = try DerivedStateCheck.check(
            reader, derived: ledger.derived, key: ledger.derivedStateKey(reader), verified: report)
        let rebuilt = rebuildDerived && derived.needsRebuild
        // A store's own tables are rewritten from the verified chain; a file ledger's writer, on opening, rebuilds
        // a voter index it cannot use and replays past a snapshot it cannot use, and on closing saves both, sealed.
        if rebuilt, try !DerivedStateCheck.rebuildTables(of: reader, verified: report) {
            try await ledger.withWriter(passphrase) { _ in }
        }
        let items = derived.items.map { item in
            var json = DerivedJSON(name: item.name, location: item.location, verdict: item.verdict.word)
            switch item.verdict {
            case .sound(let height): json.height = height
            case .stale(let reason), .forged(let reason): json.reason = reason
            case .absent, .unchecked: break
            }
            return json
        }
        for item in items where item.reason != nil {
            Output.note(
                "\(item.verdict == "forged" ? "warning" : "note"): the \(item.name) \(item.location) is \(item.verdict): \(item.reason!); \(rebuilt ? "rebuilt from the log" : "nothing uses it (vote verify --rebuild-derived rebuilds it)")"
            )
        }
        let withheld = report.withheld.values.reduce(0, +)
        var earlier: EarlierCopyCheck.Report?
        if let earlierCopy {
            let copy = try FileBlockSource(path: earlierCopy)
            _ = try ElectionVerifier.verify(copy)
            earlier = try EarlierCopyCheck.check(copy, against: reader)
        }
        let secrets = LedgerKeys.secrets(in: ledger.path)
        if !secrets.isEmpty {
            Output.note(
                "warning: \(ledger.path) holds secrets (\(secrets.joined(separator: ", "))): do not hand this directory out; `vote publish --to DIR` writes a copy without them"
            )
        }
        if let tail = chain.tornTail {
            Output.note(
                "note: \(tail.bytes) bytes after the last block are an unfinished append (a writer is appending, or crashed; the next writer cuts them off)"
            )
        }
        if output.json {
            return try Output.json(
                VerifyJSON(
                    ok: true, ledgerId: reader.genesis.ledgerID.description, blocks: chain.blocks,
                    events: chain.events, bytes: chain.bytes, height: chain.height, headHash: chain.headHash.hex,
                    treeRoot: chain.treeRoot.hex, places: report.state.places.count, seconds: chain.seconds,
                    tornTailBytes: chain.tornTail?.bytes ?? 0, secretFiles: secrets, derived: items, rebuilt: rebuilt,
                    withheldEvents: withheld > 0 ? withheld : nil, earlierCopyDisclosed: earlier?.disclosed))
        }
        try Output.line(
            "ok: \(Output.count(chain.blocks, "block")), \(Output.count(chain.events, "event")), \(Output.count(chain.bytes, "byte")) verified in \(String(format: "%.3f", chain.seconds)) s"
        )
        if withheld > 0 {
            let places = report.withheld.keys.sorted().map { "place \($0): \(report.withheld[$0]!)" }
            try Output.line(
                "every hash, tree head and signature checks out; every event shown obeys the rules at its block time")
            try Output.line(
                "withheld: \(Output.count(UInt64(withheld), "event")) of embargoed places (\(places.joined(separator: ", "))) could not be re-decided and are not counted; check this copy against a later one with `vote verify --ledger LATER --earlier-copy THIS`"
            )
        } else {
            try Output.line(
                "every hash, tree head and signature checks out; every event obeys the rules at its block time")
        }
        if let earlier, let earlierCopy {
            try Output.line(
                "earlier copy \(earlierCopy): its \(Output.count(earlier.blocks, "block")) are this ledger's; \(Output.count(UInt64(earlier.disclosed), "event")) it withheld \(earlier.disclosed == 1 ? "is" : "are") this ledger's"
                    + (earlier.stillWithheld > 0 ? " (\(earlier.stillWithheld) still withheld here)" : ""))
        }
        try Output.line("head \(chain.headHash.hex) at height \(chain.height), tree root \(chain.treeRoot.hex)")
        for item in items {
            let state = item.height.map { "sound at block \($0)" } ?? item.verdict
            try Output.line("derived state: \(item.name) \(state)\(rebuilt && item.reason != nil ? ", rebuilt" : "")")
        }
    }
}

/// `vote log`: the history, human-readable.
struct Log: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log", abstract: "Show the ledger's history, block by block.")

    @OptionGroup var ledger: LedgerOptions
    @Option(help: "First block height.") var from: UInt64 = 0
    @Option(help: "Last block height.") var to: UInt64?

    func validate() throws {
        if let to, to < from { throw ValidationError("--to must not be less than --from") }
    }

    func run() throws {
        var index: UInt64?
        try ledger.reader().forEachBlock(from: from) { block in
            let header = block.header
            if let to, header.height > to { return }
            if index == nil { index = header.treeSize - UInt64(header.eventCount) }
            try Output.line(
                "block \(header.height)  \(Timestamp.format(header.timestamp))  \(header.eventCount) event\(header.eventCount == 1 ? "" : "s")  \(header.hash.hex.prefix(16))"
            )
            for event in block.events {
                try Output.line("  #\(index!)  \(EventDescription.sentence(event.ledgerEvent))")
                index! += 1
            }
        }
    }
}
