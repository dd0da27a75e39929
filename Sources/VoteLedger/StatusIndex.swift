import Election
import Foundation
import Ledger
import LedgerCrypto

/// `status.idx`: where each token's authorisation and vote sit in the log, sorted by place and token hash,
/// so `vote status` answers with a binary search in a mapped file and a scan of the few blocks after it
/// instead of reading the whole log. Derived data beside `snapshot.bin`, with the same trust rule: used
/// only while the header hash of the block it was built at still matches the chain.
///
/// It is kept in a `DerivedStore` under the ledger id: for the command line, in the user's state directory
/// (where `RememberedHeads` keeps remembered heads), never in the ledger directory: readers must not modify a
/// ledger (FORMAT.md §5.8), and a reader may not be able to write there at all.
///
/// Only readers write it (the writer never touches it, so a reader never reads a file being changed):
/// built in full the first time, then rewritten to cover the tail once the tail holds more than
/// `rewriteThreshold` authorisations and votes; always replaced whole by a rename, under a temporary name
/// of its own per process. What an answer takes from the file is checked against the event it points to
/// in the log; a file that points wrong is ignored and rebuilt.
///
/// Layout (native byte order): a 64-byte header — magic "VLSTATU3", height (u64) and header hash (32 bytes)
/// of the last block covered, record count (u64), CRC-32C of the 56 bytes before it (u32), 4 zero bytes —
/// then the records, 56 bytes each, in (place, token hash) order: token hash (32), place (u32), flags (u32:
/// 1 the token was replaced by a re-issue or its voter withdrawn), leaf index of the authorisation or the re-issue
/// that issued it (u64), leaf index of the vote, or of the re-issue or withdrawal (§11.29) that took it back (u64;
/// all ones: none). (VLSTATU2 indexes did not read withdrawals, so they are rebuilt.)
enum StatusIndex {
    static let magic = Array("VLSTATU3".utf8)
    static let headerSize = 64
    static let recordSize = 56
    /// Authorisations and votes after the index a lookup scans before it rewrites the index to cover them.
    static let rewriteThreshold = 4096
    /// The indexes a lookup of this process is rewriting: one lookup rewrites an index while the others answer from
    /// it and its tail. A server's readers would otherwise each merge a copy of their own at once (64 readers
    /// beside 2,000 votes a second: a 120,000-record merge and two 6.7 MB buffers each, every two seconds).
    private static let rewriting = Locked<Set<DerivedItem>>([])
    private static let none = UInt64.max

    /// One token in one place: the leaf indexes of its authorisation and its vote.
    struct Record {
        var tokenHash: Digest
        var place: UInt32
        var authorised: UInt64 = StatusIndex.none
        var voted: UInt64 = StatusIndex.none
        /// Replaced by a re-issue or withdrawn with its voter (at leaf `voted`): no longer authorised.
        var revoked = false

        /// What `hasVoted` answers for this token.
        var hasVoted: Bool? { revoked ? nil : voted != StatusIndex.none }

        func precedes(_ place: UInt32, _ tokenHash: Digest) -> Bool {
            self.place != place ? self.place < place : self.tokenHash < tokenHash
        }

        /// Folds a later record of the same token (from the tail) into this one.
        mutating func update(with later: Record) {
            if authorised == StatusIndex.none { authorised = later.authorised }
            if later.voted != StatusIndex.none { voted = later.voted }
            if later.revoked { revoked = true }
        }
    }

    /// Whether the token with hash `tokenHash` has voted in `place` by block `head`; `nil` if it is not
    /// authorised there. The index is read from and saved to `derived`.
    static func hasVoted(
        source: any BlockSource, head: BlockHeader, place: UInt32, tokenHash: Digest, derived: any DerivedStore
    ) throws -> Bool? {
        try record(source: source, head: head, place: place, tokenHash: tokenHash, derived: derived)?.hasVoted
    }

    /// Where the token with hash `tokenHash` was authorised in `place` and where it voted (or was replaced) by
    /// block `head`; nil if it was never issued there. The index is read from and saved to `derived`.
    static func record(
        source: any BlockSource, head: BlockHeader, place: UInt32, tokenHash: Digest, derived: any DerivedStore
    ) throws -> Record? {
        let item = DerivedItem.statusIndex(source.genesis.ledgerID)
        let saved = Saved(store: derived, item: item)
        if let bytes = derived.read(item), let index = MappedIndex(bytes, source: source, head: head) {
            var record = index.record(place: place, tokenHash: tokenHash)
            if let found = record, !(try proves(found, source: source)) {
                return try rebuilt(source: source, head: head, place: place, tokenHash: tokenHash, saved: saved)
            }
            var (tail, later) = try scan(
                source: source, from: index.height + 1, to: head, place: place, tokenHash: tokenHash)
            if let later {
                if record == nil { record = later } else { record!.update(with: later) }
            }
            if tail.count > rewriteThreshold, rewriting.withLock({ $0.insert(item).inserted }) {
                defer { rewriting.withLock { _ = $0.remove(item) } }
                save(index.merged(with: &tail), head: head, saved: saved)
            }
            return record
        }
        return try rebuilt(source: source, head: head, place: place, tokenHash: tokenHash, saved: saved)
    }

    /// The answer from a scan of the whole log, saving what it found as a new index.
    private static func rebuilt(
        source: any BlockSource, head: BlockHeader, place: UInt32, tokenHash: Digest, saved: Saved
    )
        throws -> Record?
    {
        var (all, record) = try scan(source: source, from: 1, to: head, place: place, tokenHash: tokenHash)
        save(fold(&all), head: head, saved: saved)
        return record
    }

    /// Whether the events `record` points to are in the log as it says: the authorisation (or re-issue), and
    /// the vote or the re-issue that replaced the token, if any.
    private static func proves(_ record: Record, source: any BlockSource) throws -> Bool {
        func event(at leaf: UInt64) throws -> ElectionEvent? {
            guard let height = try source.height(ofEvent: leaf) else { return nil }
            guard let raw = try source.storedBlock(at: height), let block = try? EncodedBlock(decoding: raw),
                block.header.height == height
            else { return nil }
            // Only the one event is decoded, read in place.
            let stored = block.events[Int(leaf - (block.header.treeSize - UInt64(block.header.eventCount)))]
            return try? ElectionEvent(type: stored.type, payload: stored.payload)
        }
        switch try event(at: record.authorised) {
        case .voterAuthorized(record.place, _, record.tokenHash, _),
            .voterTokenReissued(record.place, _, _, record.tokenHash):
            break
        default: return false
        }
        guard record.voted != none else { return !record.revoked }
        switch try event(at: record.voted) {
        case .voteCast(record.place, _, record.tokenHash), .credentialIssued(record.place, record.tokenHash, _),
            .ballotCast(record.place, record.tokenHash, _):
            return !record.revoked
        case .voterTokenReissued(record.place, _, record.tokenHash, _),
            .voterWithdrawn(record.place, _, record.tokenHash, _):
            return record.revoked
        default: return false
        }
    }

    /// Every authorisation, re-issue and vote in blocks `first` through `head` (in log order), and what they
    /// say about the one token asked for.
    private static func scan(
        source: any BlockSource, from first: UInt64, to head: BlockHeader, place: UInt32, tokenHash: Digest
    )
        throws -> (all: [Record], record: Record?)
    {
        let authorized = ElectionEvent.Tag.voterAuthorized.rawValue
        let weighted = ElectionEvent.Tag.weightedVoterAuthorized.rawValue
        let cast = ElectionEvent.Tag.voteCast.rawValue
        let ballot = ElectionEvent.Tag.ballotCast.rawValue
        let reissued = ElectionEvent.Tag.voterTokenReissued.rawValue
        let withdrawn = ElectionEvent.Tag.voterWithdrawn.rawValue
        // In an anonymous place an issuance code is used up by its credential's issuance, as a token by its vote.
        let issued = ElectionEvent.Tag.credentialIssued.rawValue
        var all: [Record] = []
        var asked: Record?
        func found(_ record: Record) {
            all.append(record)
            guard record.place == place, record.tokenHash == tokenHash else { return }
            if asked == nil { asked = record } else { asked!.update(with: record) }
        }
        guard first <= head.height else { return (all, asked) }
        try source.forEachBlock(from: first) { block in
            guard block.header.height <= head.height else { return }
            let firstLeaf = block.header.treeSize - UInt64(block.header.eventCount)
            for (offset, event) in block.events.enumerated()
            where event.type == authorized || event.type == weighted || event.type == cast || event.type == ballot
                || event.type == reissued
                || event.type == issued || event.type == withdrawn
            {
                let leaf = firstLeaf + UInt64(offset)
                switch try? ElectionEvent(type: event.type, payload: event.payload) {
                case .voterAuthorized(let place, _, let tokenHash, _):
                    found(Record(tokenHash: tokenHash, place: place, authorised: leaf))
                case .voteCast(let place, _, let tokenHash), .credentialIssued(let place, let tokenHash, _),
                    .ballotCast(let place, let tokenHash, _):
                    found(Record(tokenHash: tokenHash, place: place, voted: leaf))
                case .voterTokenReissued(let place, _, let old, let new):
                    found(Record(tokenHash: old, place: place, voted: leaf, revoked: true))
                    found(Record(tokenHash: new, place: place, authorised: leaf))
                case .voterWithdrawn(let place, _, let tokenHash, _):
                    found(Record(tokenHash: tokenHash, place: place, voted: leaf, revoked: true))
                default: continue
                }
            }
        }
        return (all, asked)
    }

    /// `records` folded into one per token, in index order (`records` is sorted in place, not copied: at a
    /// million voters it is the largest thing a reader holds). A valid log holds at most one authorisation
    /// and one vote per token and place (the rules refuse a second), so the order they fold in is moot.
    static func fold(_ records: inout [Record]) -> [Record] {
        records.sort { $0.precedes($1.place, $1.tokenHash) }
        var folded: [Record] = []
        folded.reserveCapacity(records.count)
        for record in records {
            if let last = folded.last, last.place == record.place, last.tokenHash == record.tokenHash {
                folded[folded.count - 1].update(with: record)
            } else {
                folded.append(record)
            }
        }
        return folded
    }

    /// Where an index is saved.
    struct Saved {
        let store: any DerivedStore
        let item: DerivedItem
    }

    /// Writes `records` as the index at `head`. Derived data: a reader that cannot save it just answers
    /// from the log next time too.
    private static func save(_ records: [Record], head: BlockHeader, saved: Saved) {
        var bytes = [UInt8](repeating: 0, count: headerSize + records.count * recordSize)
        bytes.withUnsafeMutableBytes { raw in
            magic.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: raw[0..<8]).copyMemory(from: $0) }
            raw.storeBytes(of: head.height, toByteOffset: 8, as: UInt64.self)
            head.hash.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: raw[16..<48]).copyMemory(from: $0) }
            raw.storeBytes(of: UInt64(records.count), toByteOffset: 48, as: UInt64.self)
            raw.storeBytes(
                of: CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[0..<56])), toByteOffset: 56, as: UInt32.self)
            for (number, record) in records.enumerated() {
                let at = headerSize + number * recordSize
                record.tokenHash.withUnsafeBytes {
                    UnsafeMutableRawBufferPointer(rebasing: raw[at..<at + 32]).copyMemory(from: $0)
                }
                raw.storeBytes(of: record.place, toByteOffset: at + 32, as: UInt32.self)
                raw.storeBytes(of: UInt32(record.revoked ? 1 : 0), toByteOffset: at + 36, as: UInt32.self)
                raw.storeBytes(of: record.authorised, toByteOffset: at + 40, as: UInt64.self)
                raw.storeBytes(of: record.voted, toByteOffset: at + 48, as: UInt64.self)
            }
        }
        try? saved.store.write(saved.item, bytes)
    }

    // MARK: - The mapped file

    /// A saved status index (a file mapped read-only, or bytes in memory), taken only if whole and built at
    /// a block of this chain at or before `head`.
    final class MappedIndex {
        let height: UInt64
        let count: Int
        private let saved: DerivedBytes
        private let base: UnsafeRawPointer
        private let length: Int

        init?(_ saved: DerivedBytes, source: any BlockSource, head: BlockHeader) {
            guard saved.bytes.count >= StatusIndex.headerSize, let base = saved.bytes.baseAddress else { return nil }
            self.saved = saved
            self.base = base
            length = saved.bytes.count
            let header = UnsafeRawBufferPointer(start: base, count: StatusIndex.headerSize)
            height = header.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
            count = Int(truncatingIfNeeded: header.loadUnaligned(fromByteOffset: 48, as: UInt64.self))
            let hash = Digest(unsafeUninitializedReading: UnsafeRawBufferPointer(rebasing: header[16..<48]))
            guard header.prefix(8).elementsEqual(StatusIndex.magic),
                header.loadUnaligned(fromByteOffset: 56, as: UInt32.self)
                    == CRC32C.checksum(UnsafeRawBufferPointer(rebasing: header[0..<56])),
                count >= 0, length == StatusIndex.headerSize + count * StatusIndex.recordSize, height <= head.height,
                let block = try? source.header(at: height), block.hash == hash
            else { return nil }
        }

        private func record(at number: Int) -> Record {
            let raw = UnsafeRawBufferPointer(
                start: base + StatusIndex.headerSize + number * StatusIndex.recordSize, count: StatusIndex.recordSize)
            return Record(
                tokenHash: Digest(unsafeUninitializedReading: raw),
                place: raw.loadUnaligned(fromByteOffset: 32, as: UInt32.self),
                authorised: raw.loadUnaligned(fromByteOffset: 40, as: UInt64.self),
                voted: raw.loadUnaligned(fromByteOffset: 48, as: UInt64.self),
                revoked: raw.loadUnaligned(fromByteOffset: 36, as: UInt32.self) & 1 != 0)
        }

        /// The record of `tokenHash` in `place`, by binary search.
        func record(place: UInt32, tokenHash: Digest) -> Record? {
            var low = 0
            var high = count
            while low < high {
                let middle = (low + high) / 2
                if record(at: middle).precedes(place, tokenHash) { low = middle + 1 } else { high = middle }
            }
            guard low < count else { return nil }
            let found = record(at: low)
            return found.place == place && found.tokenHash == tokenHash ? found : nil
        }

        /// This index's records with `tail` (the records of the blocks after it) folded in, in index order.
        func merged(with tail: inout [Record]) -> [Record] {
            let later = StatusIndex.fold(&tail)
            var merged: [Record] = []
            merged.reserveCapacity(count + later.count)
            var next = 0
            for number in 0..<count {
                var record = record(at: number)
                while next < later.count, later[next].precedes(record.place, record.tokenHash) {
                    merged.append(later[next])
                    next += 1
                }
                if next < later.count, later[next].place == record.place, later[next].tokenHash == record.tokenHash {
                    record.update(with: later[next])
                    next += 1
                }
                merged.append(record)
            }
            merged += later[next...]
            return merged
        }
    }
}
