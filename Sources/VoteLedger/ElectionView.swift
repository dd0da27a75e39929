public import Election
import Foundation
public import Ledger
public import LedgerCrypto

/// A read-only view of a ledger: the election state at a block, counts only, replayed from the newest valid
/// snapshot (or genesis) to the last complete block, or published by the ledger's writer after its last
/// durable block (`PublishedView`). Takes no lock.
public struct ElectionView: Sendable {
    package static let snapshotFile = "snapshot.bin"

    public let genesis: Genesis
    public let state: ElectionState
    /// The last block folded into `state`.
    public let head: BlockHeader
    /// Whether the replay started from a snapshot (else from genesis).
    public var fromSnapshot: Bool { snapshotHeight > 0 }
    /// Height of the snapshot the replay started from (0: genesis).
    let snapshotHeight: UInt64
    /// A public copy taken during an embargo: its withheld events per place (FORMAT.md §11.20), which `state`
    /// does not count.
    public var withheld: [UInt32: Int] = [:]

    /// The snapshot the writer saved in `derived`, if it is there, carries the seal of `key` (the ledger's
    /// `DerivedStateKey`) and decodes; whether it still matches the chain is `replay`'s check. Without the key
    /// none is used: a snapshot anyone who can write the ledger directory could have made never decides a count.
    public static func savedSnapshot(in derived: any DerivedStore, key: DerivedStateKey?) -> Snapshot? {
        guard let key, let stored = derived.read(.snapshot), let body = key.opened(stored.array) else { return nil }
        return try? Snapshot(decoding: body)
    }

    /// Replays the blocks of `source` under the rules `vote verify` applies (`RuleFold`), counts only (the
    /// state has no voter roll): from `snapshot` if the block it was taken at is still in the chain (its
    /// header hash matches), else from the genesis block. The snapshot stands in for the blocks it covers,
    /// which are neither re-decided nor re-signed; of them only the voter roll entries that the later blocks
    /// read are looked up. A ledger that breaks a rule is refused with the reason `vote verify` gives.
    /// The replay ends at the block that is last when it starts, though a writer may be appending.
    public static func replay(_ source: any BlockSource, snapshot: Snapshot? = nil) throws -> ElectionView {
        let last = try source.lastBlock().height
        var rules: RuleFold
        var first: UInt64 = 0
        var head: BlockHeader?
        if let snapshot, let header = try? source.header(at: snapshot.height), header.hash == snapshot.headerHash {
            first = snapshot.height + 1
            head = header
            rules = RuleFold(
                source.genesis, state: snapshot.state, roll: try rollEntries(of: source, from: first, through: last),
                recount: RuleFold.recounting(source))
        } else {
            rules = RuleFold(
                source.genesis, roll: VoterTable(capacity: ElectionVerifier.rollCapacity(source)),
                recount: RuleFold.recounting(source))
        }
        try source.forEachBlock(from: first) { block in
            guard block.header.height <= last else { return }
            try rules.fold(DecodedBlock(block))
            head = block.header
        }
        guard let head else {
            throw VoteError(.integrity(block: nil, offset: nil), "integrity failure: the ledger has no blocks")
        }
        return ElectionView(
            genesis: source.genesis, state: rules.state, head: head, snapshotHeight: first > 0 ? first - 1 : 0,
            withheld: rules.withheld)
    }

    /// The voter roll entries, as the blocks before `first` leave them, under the keys that the events of
    /// blocks `first` through `last` read: what re-deciding those events needs of the part a snapshot covers.
    /// Two passes over the log, one over blocks `first` through `last` (usually a few) and, only if they hold
    /// an event that reads the roll, one over the blocks before them; nothing is decoded but those kinds of event.
    private static func rollEntries(
        of source: any BlockSource, from first: UInt64, through last: UInt64
    ) throws -> VoterTable {
        // Every event that reads or writes the roll: a credential's issuance reads its code's entry as a vote reads
        // its token's, and a re-issue or an anonymous vote theirs.
        let types = Set(
            [
                ElectionEvent.Tag.voterAuthorized, .weightedVoterAuthorized, .voteCast, .voterTokenReissued,
                .credentialIssued, .anonymousVoteCast, .ballotCast, .ballotReplaced, .anonymousBallotCast,
                .voterWithdrawn,
            ].map(\.rawValue))
        func forEachRollEvent(from height: UInt64, through last: UInt64, _ body: (ElectionEvent) -> Void) throws {
            try source.forEachBlock(from: height) { block in
                guard block.header.height <= last else { return }
                for stored in block.events where types.contains(stored.type) {
                    // An event that does not decode is reported by the replay itself.
                    if let event = try? ElectionEvent(type: stored.type, payload: stored.payload) { body(event) }
                }
            }
        }
        var wanted: Set<VoterRoll.Key> = []
        try forEachRollEvent(from: first, through: last) { event in
            VoterRoll.forEachChange(of: event) { key, _ in wanted.insert(key) }
        }
        var before = VoterRoll()
        if !wanted.isEmpty, first > 1 {
            try forEachRollEvent(from: 1, through: first - 1) { event in
                var touched = false
                VoterRoll.forEachChange(of: event) { key, _ in touched = touched || wanted.contains(key) }
                if touched { before.apply(event) }
            }
        }
        let table = VoterTable(capacity: before.count)
        table.commit(before)
        return table
    }

    /// Whether the token with hash `tokenHash` has voted in `place`; `nil` if it is not authorised there.
    /// Answered from the status index (`StatusIndex`, kept in `derived`) and the blocks of `source` after it,
    /// up to this view's head.
    public func hasVoted(
        _ source: any BlockSource, place: UInt32, tokenHash: Digest, derived: any DerivedStore
    ) throws -> Bool? {
        try StatusIndex.hasVoted(source: source, head: head, place: place, tokenHash: tokenHash, derived: derived)
    }

    /// The place with `id`, or a not-found error.
    public func place(_ id: UInt32) throws -> PlaceState {
        guard let place = state.place(id) else { throw VoteError(.placeNotFound(id)) }
        return place
    }
}
