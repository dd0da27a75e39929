import Election
public import Ledger

/// What `vote verify` finds of the derived state a writer of a ledger keeps and would use (the snapshot, the
/// voter index): for each, whether it is sound, stale (the next writer rebuilds it), or forged (its seal is not
/// the ledger's: someone without the key directory wrote it; nothing uses it, and it is evidence).
public struct DerivedStateCheck: Sendable {
    /// What one item is.
    public enum Verdict: Sendable, Equatable {
        /// As the chain gives it: sealed by this ledger's writer at block `height`, which is in the chain (a
        /// store's derived table, checked row by row, has no height).
        case sound(height: UInt64?)
        /// Not kept.
        case absent
        /// Not usable as it is, for the reason given; the next writer rebuilds it.
        case stale(String)
        /// Not written by this ledger's writer, for the reason given; nothing uses it.
        case forged(String)
        /// Not checked: the key directory cannot be read, so no reader of this user uses it either.
        case unchecked

        /// One word for JSON: sound, absent, stale, forged, unchecked.
        public var word: String {
            switch self {
            case .sound: "sound"
            case .absent: "absent"
            case .stale: "stale"
            case .forged: "forged"
            case .unchecked: "unchecked"
            }
        }
    }

    /// One item checked.
    public struct Item: Sendable {
        /// Its name ("snapshot", "voter index").
        public var name: String
        /// Where it is kept.
        public var location: String
        public var verdict: Verdict
    }

    public var items: [Item]

    /// Whether any item is stale or forged: what `--rebuild-derived` mends.
    public var needsRebuild: Bool {
        items.contains {
            switch $0.verdict {
            case .stale, .forged: true
            default: false
            }
        }
    }

    /// Checks the derived state of the ledger `source` reads, as kept in `derived` (a file ledger's writer) or
    /// beside the chain by the store itself (`DerivedTables`), against the chain that `verified` verified and the
    /// seal of `key` (nil: the key directory cannot be read).
    public static func check(
        _ source: any BlockSource, derived: any DerivedStore, key: DerivedStateKey?, verified: ElectionVerifier.Report
    ) throws -> DerivedStateCheck {
        var items: [Item] = []
        if derived.read(.snapshot) != nil || derived.voterIndexPath != nil {
            items.append(
                Item(
                    name: "snapshot", location: derived.location(of: .snapshot),
                    verdict: try snapshot(source, derived, key)))
        }
        if let path = derived.voterIndexPath {
            items.append(
                Item(name: "voter index", location: path, verdict: try VoterIndex.check(path, source: source, key: key))
            )
        }
        if let tables = source as? any DerivedTables {
            var groups = try groups(tables)
            var roll = try roll(tables, verified.roll)
            // Other servers may append while the tables are read: rows of blocks after the verified head are not
            // forgeries, so a check the chain moved under is not a verdict.
            if try source.lastBlock().hash != verified.chain.headHash {
                let moved = Verdict.stale("the ledger grew while it was checked: verify again when it is quiet")
                if case .forged = groups { groups = moved }
                if case .forged = roll { roll = moved }
            }
            items.append(Item(name: "tree groups", location: tables.groupTable, verdict: groups))
            items.append(Item(name: "voter roll", location: tables.rollTable, verdict: roll))
        }
        return DerivedStateCheck(items: items)
    }

    private static func groups(_ tables: any DerivedTables) throws -> Verdict {
        let wrong = try tables.groupsNotFromLeaves()
        guard let first = wrong.first else { return .sound(height: nil) }
        return .forged(
            "\(wrong.count) row\(wrong.count == 1 ? " is" : "s are") not the head of the leaves in the chain (group \(first)\(wrong.count > 1 ? " and others" : "")); proofs are made from the leaves instead"
        )
    }

    private static func roll(_ tables: any DerivedTables, _ chain: VoterTable) throws -> Verdict {
        var rows = 0
        var differing = 0
        var first = ""
        try tables.forEachRollRow { row in
            rows += 1
            let kind = VoterRoll.Key.Kind(rawValue: row.kind)
            let entry = kind.flatMap { chain.entry(VoterRoll.Key(digest: row.digest, place: row.place, kind: $0)) }
            guard entry?.rawValue != row.entry else { return }
            if differing == 0 {
                first =
                    "place \(row.place), key \(row.digest.hex.prefix(12))… of kind \(row.kind): entry \(row.entry) where the chain gives \(entry.map { "\($0.rawValue)" } ?? "none")"
            }
            differing += 1
        }
        guard differing == 0, rows == chain.count else {
            let missing = rows < chain.count ? "; \(chain.count - rows) of the chain's entries have no row" : ""
            let named =
                differing == 0 ? "" : "\(differing) row\(differing == 1 ? "" : "s") differ from the chain (\(first))"
            return .forged("\(named)\(missing); a vote whose row differs is refused")
        }
        return .sound(height: nil)
    }

    /// Rewrites the derived tables of a store that keeps them (`DerivedTables`) from the chain `verified` verified;
    /// false for a store that keeps none (a file ledger's writer rebuilds its files when it opens).
    public static func rebuildTables(of source: any BlockSource, verified: ElectionVerifier.Report) throws -> Bool {
        guard let tables = source as? any DerivedTables else { return false }
        let roll = verified.roll.entries.map { key, entry in
            RollChange(
                digest: key.digest, place: key.place, kind: key.kind.rawValue, entry: entry.rawValue, previous: 0)
        }
        try tables.rebuildDerivedTables(head: verified.chain.headHash, roll: roll)
        return true
    }

    /// The last snapshot layout written before snapshots were sealed (seals came within it).
    static let lastUnsealedLayout = "VLSNAP05"

    private static func snapshot(
        _ source: any BlockSource, _ derived: any DerivedStore, _ key: DerivedStateKey?
    ) throws -> Verdict {
        guard let stored = derived.read(.snapshot) else { return .absent }
        guard let key else { return .unchecked }
        // An earlier version's snapshot is what an upgrade finds, not evidence: sealed under this ledger's key,
        // or unsealed in a layout from before seals (up to VLSNAP05). An unsealed later layout is forged.
        if let layout = Snapshot.earlierLayout(of: stored.array),
            key.opened(stored.array) != nil || layout <= DerivedStateCheck.lastUnsealedLayout
        {
            return .stale("it is in an earlier layout (\(layout)) than this version of VoteLedger reads")
        }
        guard let body = key.opened(stored.array) else {
            return .forged("its seal is not this ledger's: it was not written by the ledger's writer")
        }
        guard let snapshot = try? Snapshot(decoding: body) else { return .forged("sealed, but it does not decode") }
        guard try source.header(at: snapshot.height)?.hash == snapshot.headerHash else {
            return .stale("block \(snapshot.height), where it was taken, is not in the chain")
        }
        return .sound(height: snapshot.height)
    }
}
