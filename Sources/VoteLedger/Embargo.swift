public import Election
public import Ledger

/// What the public may see of the ledger while a place's results are embargoed (FORMAT.md §11.20): the
/// public routes and `vote publish` show each event the embargo withholds as a withheld event (its type, its
/// place and its leaf hash, FORMAT.md §3.8), so heads, receipts and proofs still check, and nobody can count
/// the place's votes until voting ends. Everything is public once it has.
public enum Embargo {
    /// Bytes of a withheld election event's payload that stay public: its place (the first field of every
    /// type an embargo withholds).
    public static let disclosedBytes = 4

    /// Whether the embargo of some place withholds events at `time`: a page or copy of the ledger taken now may
    /// differ from one taken after voting ends, so it must not be cached as final.
    public static func withholdsAny(_ state: ElectionState, at time: Int64) -> Bool {
        state.places.contains { $0.countsHidden(at: time) }
    }

    /// Whether the public may not see the contents of `event` at `time`, given the places of `state`.
    public static func withholds(_ event: EncodedBlock.Event, _ state: ElectionState, at time: Int64) -> Bool {
        let payload = event.payload
        guard let tag = ElectionEvent.Tag(rawValue: event.type), payload.count >= disclosedBytes else { return false }
        let place = payload.prefix(disclosedBytes).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        return state.place(place)?.withholds(tag, at: time) ?? false
    }

    /// `block` as the public sees it at `time`: every event the embargo of a place in `state` withholds
    /// replaced by its withheld event; `block` itself when nothing in it is withheld. The header and
    /// signature are unchanged (they cover the events only through the tree root, which the leaf hashes keep).
    public static func publicBlock(
        _ block: EncodedBlock, _ state: ElectionState, at time: Int64
    ) throws -> EncodedBlock {
        guard block.events.contains(where: { withholds($0, state, at: time) }) else { return block }
        let events = block.events.map { event in
            withholds(event, state, at: time)
                ? WithheldEvent(withholding: event.ledgerEvent, disclosing: disclosedBytes).event : event.ledgerEvent
        }
        return try EncodedBlock(
            decoding: Block(header: block.header, signature: block.signature, events: events).encoded)
    }

    /// The place a withheld election event discloses; nil unless it discloses exactly the 4 bytes of one.
    public static func place(of withheld: WithheldEvent) -> UInt32? {
        guard withheld.disclosed.count == disclosedBytes else { return nil }
        return withheld.disclosed.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    }
}

/// The election state a pass over the blocks in order needs to decide what an embargo withholds: the places
/// (with their flags and windows) the blocks so far created, folded from every event that decodes, unchecked.
/// `vote publish` runs it over the blocks it copies, so a place created while the copy is written is known
/// before any of its events.
public struct EmbargoFold: Sendable {
    /// The places so far.
    public private(set) var state = ElectionState(roll: nil)
    /// Events withheld so far.
    public private(set) var withheld = 0

    /// An empty fold, before block 0.
    public init() {}

    /// Folds `block`'s events, then answers the block as the public sees it at `time`.
    public mutating func publicBlock(_ block: EncodedBlock, at time: Int64) throws -> EncodedBlock {
        if block.header.height > 0 {
            for event in block.events {
                if let decoded = try? ElectionEvent(type: event.type, payload: event.payload) { state.apply(decoded) }
            }
        }
        let shown = try Embargo.publicBlock(block, state, at: time)
        if shown.bytes != block.bytes {
            withheld += shown.events.filter { $0.type == WithheldEvent.eventType }.count
        }
        return shown
    }
}

/// The check of a public copy taken during an embargo against the ledger as it is later, when every event is
/// public (FORMAT.md §11.20): each block of the copy is the ledger's block of that height (the same header,
/// so the same signature and tree), and each event the copy withholds is the ledger's event in its place (the
/// same type, leaf hash and disclosed place).
public enum EarlierCopyCheck {
    /// What the check found.
    public struct Report: Sendable {
        /// Blocks of the earlier copy, all found in the ledger.
        public var blocks: UInt64 = 0
        /// Events the copy withheld that the ledger now shows, each matching.
        public var disclosed = 0
        /// Events the copy withheld that the ledger still withholds (it is a copy taken during voting too).
        public var stillWithheld = 0
    }

    /// Checks every block of `earlier` against `ledger`; throws an integrity failure naming the first block or
    /// event that differs. Both must have been verified (`ElectionVerifier.verify`) first.
    public static func check(_ earlier: any BlockSource, against ledger: any BlockSource) throws -> Report {
        guard earlier.genesis == ledger.genesis else {
            throw VoteError(
                .integrity(block: 0, offset: nil),
                "integrity failure: the earlier copy is of another ledger (its genesis block differs)")
        }
        var report = Report()
        let last = try earlier.lastBlock().height
        try earlier.forEachBlock(from: 0) { copied in
            let height = copied.header.height
            guard height <= last else { return }
            guard let current = try ledger.block(at: height) else {
                throw VoteError(
                    .integrity(block: height, offset: nil),
                    "integrity failure: the earlier copy holds block \(height), which this ledger does not")
            }
            guard current.header.hash == copied.header.hash else {
                throw VoteError(
                    .integrity(block: height, offset: nil),
                    "integrity failure: block \(height) of the earlier copy is not this ledger's (its header differs)")
            }
            for (offset, (old, new)) in zip(copied.events, current.events).enumerated() {
                if old.encoded == new.encoded {
                    if old.type == WithheldEvent.eventType { report.stillWithheld += 1 }
                    continue
                }
                if let withheld = WithheldEvent(old.ledgerEvent), withheld.matches(new.ledgerEvent) {
                    report.disclosed += 1
                } else if let withheld = WithheldEvent(new.ledgerEvent), withheld.matches(old.ledgerEvent) {
                    report.stillWithheld += 1
                } else {
                    throw VoteError(
                        .integrity(block: height, offset: nil),
                        "integrity failure: block \(height), event \(offset) of the earlier copy is not this ledger's event"
                    )
                }
            }
            report.blocks += 1
        }
        return report
    }
}
