public import Election
import Foundation
public import Ledger
public import LedgerCrypto

/// A read-only view of a ledger: the election state replayed from the newest valid snapshot (or genesis)
/// to the last complete block. Takes no lock.
public struct ElectionView {
    static let snapshotFile = "snapshot.bin"

    public let genesis: Genesis
    public let state: ElectionState
    /// The last block folded into `state`.
    public let head: BlockHeader
    /// Whether the replay started from a snapshot (else from genesis).
    public var fromSnapshot: Bool { snapshotHeight > 0 }
    /// Height of the snapshot the replay started from (0: genesis).
    let snapshotHeight: UInt64

    /// Replays the file store's ledger `reader` reads, counts only (the state has no voter roll), from the
    /// snapshot saved in its directory when that still matches the chain.
    public static func replay(_ reader: LedgerReader) throws -> ElectionView {
        try replay(reader, snapshot: savedSnapshot(in: reader.directory.path))
    }

    /// The snapshot the writer saved in the ledger directory `path`, if it is there and decodes (whether it
    /// still matches the chain is `replay`'s check).
    static func savedSnapshot(in path: String) -> Snapshot? {
        ProtectedFile.read(path + "/" + snapshotFile).flatMap { try? Snapshot(decoding: $0) }
    }

    /// Replays the blocks of `source`, counts only (the state has no voter roll): from `snapshot` if the
    /// block it was taken at is still in the chain (its header hash matches), else from the genesis block.
    public static func replay(_ source: any BlockSource, snapshot: Snapshot? = nil) throws -> ElectionView {
        var state = ElectionState(roll: nil)
        var first: UInt64 = 0
        var head: BlockHeader?
        if let snapshot, let header = try? source.header(at: snapshot.height), header.hash == snapshot.headerHash {
            state = snapshot.state
            first = snapshot.height + 1
            head = header
        }
        try ElectionLedger.wrap {
            try source.forEachBlock(from: first) { block in
                let height = block.header.height
                if height > 0 {
                    for (offset, event) in block.events.enumerated() {
                        var prefix: String { "integrity failure: block \(height), event \(offset)" }
                        let decoded: ElectionEvent
                        do { decoded = try ElectionEvent(type: event.type, payload: event.payload) } catch {
                            throw VoteError(.integrity(block: height, offset: nil), "\(prefix): \(error)")
                        }
                        // Unverified files: an event naming a place or candidate that does not exist is damage.
                        guard state.canApply(decoded) else {
                            throw VoteError(
                                .integrity(block: height, offset: nil),
                                "\(prefix) names a place or candidate that does not exist")
                        }
                        state.apply(decoded)
                    }
                }
                head = block.header
            }
        }
        guard let head else {
            throw VoteError(.integrity(block: nil, offset: nil), "integrity failure: the ledger has no blocks")
        }
        return ElectionView(
            genesis: source.genesis, state: state, head: head, snapshotHeight: first > 0 ? first - 1 : 0)
    }

    /// Whether the token with hash `tokenHash` has voted in `place`; `nil` if it is not authorised there.
    /// Answered from the status index (`StatusIndex`, kept in this user's state directory) and the blocks of
    /// `source` after it, up to this view's head.
    public func hasVoted(_ source: any BlockSource, place: UInt32, tokenHash: Digest) throws -> Bool? {
        try StatusIndex.hasVoted(source: source, head: head, place: place, tokenHash: tokenHash)
    }

    /// The place with `id`, or a not-found error.
    public func place(_ id: UInt32) throws -> PlaceState {
        guard let place = state.place(id) else { throw VoteError(.placeNotFound(id)) }
        return place
    }
}
