#if canImport(Glibc)
import Glibc
#endif
public import LedgerCrypto

/// Who may vote where: the voter tags authorised in each place and each token's state. It is the only
/// part of the election state that grows with the electorate, so it lives apart from the places and
/// counters: changes are collected per batch (`pending`, a value, so copies of a state stay independent)
/// and moved into a shared `VoterTable` by `commit()` once they are accepted for good. The table is in
/// memory (tests, verification) or a mapped file (the writer), so a writer need not load the roll.
public struct VoterRoll: Equatable {
    /// Where committed entries live; shared by every copy of this roll.
    public let table: VoterTable
    /// Changes not yet committed, by key.
    private var pending: [VoterTable.Key: VoterTable.Entry] = [:]
    /// Whether `apply` writes straight into the table (a verifier folding a log that is already final).
    private let writesThrough: Bool

    /// A roll over `table` (a new in-memory one by default). With `writesThrough`, changes skip the
    /// pending stage: copies then share every change at once, so only a single-owner fold may use it.
    public init(table: VoterTable = VoterTable(), writesThrough: Bool = false) {
        self.table = table
        self.writesThrough = writesThrough
    }

    /// Whether the voter with `tag` is authorised in `place`.
    public func isAuthorized(voterTag tag: Digest, place: UInt32) -> Bool {
        entry(VoterTable.Key(digest: tag, place: place, kind: .voter)) != nil
    }

    /// Whether an authorised token has voted in `place`; `nil` if it is not authorised there.
    public func hasVoted(tokenHash: Digest, place: UInt32) -> Bool? {
        entry(VoterTable.Key(digest: tokenHash, place: place, kind: .token)).map { $0 == .voted }
    }

    private func entry(_ key: VoterTable.Key) -> VoterTable.Entry? {
        pending[key] ?? table.entry(key)
    }

    /// Folds one event in (pending until `commit`, unless the roll writes through).
    public mutating func apply(_ event: ElectionEvent) {
        VoterRoll.forEachChange(of: event) { key, entry in record(key, entry) }
    }

    /// The roll entries `event` sets: an authorisation its voter tag and token, a vote its token.
    private static func forEachChange(of event: ElectionEvent, _ body: (VoterTable.Key, VoterTable.Entry) -> Void) {
        switch event {
        case .voterAuthorized(let place, let tag, let token):
            body(VoterTable.Key(digest: tag, place: place, kind: .voter), .authorized)
            body(VoterTable.Key(digest: token, place: place, kind: .token), .authorized)
        case .voteCast(let place, _, let token):
            body(VoterTable.Key(digest: token, place: place, kind: .token), .voted)
        case .placeCreated, .candidateRegistered, .candidateWithdrawn, .resultsCertified, .voterSecretCommitment: break
        }
    }

    private mutating func record(_ key: VoterTable.Key, _ entry: VoterTable.Entry) {
        if writesThrough {
            table.reserveInMemory(1)
            table.set(key, entry)
        } else {
            pending[key] = entry
        }
    }

    /// The table keys `event` reads or writes (for `VoterTable.prefetch`): the ones it sets.
    public static func keys(of event: ElectionEvent, into keys: inout [VoterTable.Key]) {
        forEachChange(of: event) { key, _ in keys.append(key) }
    }

    /// Number of changes waiting for `commit`.
    public var pendingCount: Int { pending.count }

    /// Moves the pending changes into the table, where every copy of this roll sees them. Call it only
    /// for changes that stand (written to the ledger, or verified), after `table.reserve(pendingCount)`
    /// when the table's memory may fail to grow.
    public mutating func commit() {
        table.reserveInMemory(pending.count)
        for (key, entry) in pending { table.set(key, entry) }
        pending.removeAll(keepingCapacity: true)
    }

    /// Equal when they hold the same entries (committed or not), however they are written.
    public static func == (lhs: VoterRoll, rhs: VoterRoll) -> Bool {
        if lhs.table === rhs.table { return lhs.pending == rhs.pending }
        var left = lhs.table.entries
        for (key, entry) in lhs.pending { left[key] = entry }
        var right = rhs.table.entries
        for (key, entry) in rhs.pending { right[key] = entry }
        return left == right
    }
}

/// Memory a `VoterTable` keeps its slots in: zero-filled when made. The writer's is a mapped file.
public protocol VoterTableMemory: AnyObject {
    /// The slot bytes: `VoterTable.slotSize` per slot.
    var slots: UnsafeMutableRawBufferPointer { get }
    /// New zero-filled memory of `slotCount` slots; the table moves its entries there and drops this one.
    func replacement(slotCount: Int) throws -> any VoterTableMemory
}

/// An open-addressing hash table of roll entries in flat memory (40-byte slots, linear probing), so it
/// can live in a mapped file and be used without loading it. Keys are SHA-256 or HMAC outputs, mixed
/// with a per-table seed so crafted keys cannot pile up in one run of slots.
public final class VoterTable {
    /// What a key names: a voter tag or a token hash, in one place.
    public struct Key: Hashable, Sendable {
        public enum Kind: UInt32, Sendable {
            case voter = 1
            case token = 2
        }
        public var digest: Digest
        public var place: UInt32
        public var kind: Kind

        public init(digest: Digest, place: UInt32, kind: Kind) {
            self.digest = digest
            self.place = place
            self.kind = kind
        }

        /// Digests are uniformly random: one word of it (with the place and kind) is hash enough.
        public func hash(into hasher: inout Hasher) {
            hasher.combine(digest.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) } ^ UInt64(place) << 32 ^ UInt64(kind.rawValue))
        }
    }

    /// A key's state: authorised, or (tokens only) voted.
    public enum Entry: UInt32, Sendable {
        case authorized = 1
        case voted = 2
    }

    /// Slot layout (native byte order; the file is a local cache): digest (32), place (u32), and a u32 of
    /// kind << 8 | entry, 0 for an empty slot.
    public static let slotSize = 40
    /// The table grows (doubles) before more than this share of its slots is used.
    public static let maxLoad = 0.7

    public private(set) var memory: any VoterTableMemory
    /// Entries in the table.
    public private(set) var count: Int
    /// Hash seed, saved with a mapped table.
    public let seed: UInt64
    /// Number of slots.
    public private(set) var slotCount: Int

    /// A table over `memory` that already holds `count` entries hashed with `seed`.
    public init(memory: any VoterTableMemory, count: Int, seed: UInt64) {
        let slotCount = memory.slots.count / VoterTable.slotSize
        precondition(slotCount > 0 && Double(count) <= Double(slotCount) * VoterTable.maxLoad, "room for the entries")
        self.memory = memory
        self.count = count
        self.seed = seed
        self.slotCount = slotCount
    }

    /// An empty in-memory table with room for `capacity` entries and a random seed.
    public convenience init(capacity: Int = 256) {
        self.init(memory: HeapMemory(slotCount: VoterTable.slotCount(for: capacity)), count: 0, seed: VoterTable.randomSeed())
    }

    /// A new hash seed (a fixed one only if the system's random generator fails: still a correct table).
    public static func randomSeed() -> UInt64 {
        var seed: UInt64 = 0
        withUnsafeMutableBytes(of: &seed) { $0.copyBytes(from: (try? SecureRandom.bytes(8)) ?? [UInt8](repeating: 0x5a, count: 8)) }
        return seed
    }

    /// Slots needed to hold `capacity` entries under the maximum load (any count: a slot is found by
    /// multiplying the hash, not by a bit mask, so a table for 2M entries is not rounded up to 4M).
    public static func slotCount(for capacity: Int) -> Int {
        max(64, Int((Double(capacity) / maxLoad).rounded(.up)) + 1)
    }

    /// The entry under `key`, if any.
    public func entry(_ key: Key) -> Entry? {
        let (_, found) = find(key)
        return found
    }

    /// Sets the entry under `key`. The table must have room (`reserve`).
    public func set(_ key: Key, _ entry: Entry) {
        let (slot, found) = find(key)
        let base = memory.slots.baseAddress! + slot * VoterTable.slotSize
        if found == nil {
            precondition(Double(count + 1) <= Double(slotCount) * VoterTable.maxLoad, "reserve room first")
            key.digest.withUnsafeBytes { base.copyMemory(from: $0.baseAddress!, byteCount: 32) }
            base.storeBytes(of: key.place, toByteOffset: 32, as: UInt32.self)
            count += 1
        }
        base.storeBytes(of: key.kind.rawValue << 8 | entry.rawValue, toByteOffset: 36, as: UInt32.self)
    }

    /// Grows the table, if needed, so `additional` more entries fit. Growing a mapped table can fail.
    public func reserve(_ additional: Int) throws {
        let needed = VoterTable.slotCount(for: count + additional)
        guard needed > slotCount else { return }
        let old = memory
        let oldSlotCount = slotCount
        let grown = max(needed, slotCount * 2)  // doubling keeps growth amortised O(1)
        memory = try old.replacement(slotCount: grown)
        slotCount = grown
        count = 0
        for slot in 0..<oldSlotCount {
            if let (key, entry) = VoterTable.stored(in: old, at: slot) { set(key, entry) }
        }
    }

    /// The entry stored in `slot` of `memory`, if the slot holds a well-formed one.
    private static func stored(in memory: any VoterTableMemory, at slot: Int) -> (Key, Entry)? {
        let base = memory.slots.baseAddress! + slot * VoterTable.slotSize
        let word = base.load(fromByteOffset: 36, as: UInt32.self)
        guard word != 0, let kind = Key.Kind(rawValue: word >> 8), let entry = Entry(rawValue: word & 0xff) else { return nil }
        let key = Key(
            digest: Digest(unsafeUninitializedReading: UnsafeRawBufferPointer(start: base, count: 32)),
            place: base.load(fromByteOffset: 32, as: UInt32.self), kind: kind)
        return (key, entry)
    }

    /// `reserve` for memory that cannot fail to grow (in memory, or reserved beforehand).
    func reserveInMemory(_ additional: Int) {
        do { try reserve(additional) } catch { preconditionFailure("the voter table could not grow: \(error)") }
    }

    /// Every entry (for tests and equality; O(slots)).
    public var entries: [Key: Entry] {
        var result: [Key: Entry] = [:]
        for slot in 0..<slotCount {
            if let (key, entry) = VoterTable.stored(in: memory, at: slot) { result[key] = entry }
        }
        return result
    }

    /// Touches the first slot each key hashes to, all at once: the memory system then fetches them in
    /// parallel instead of one random miss at a time when the keys are looked up one by one. Call it with a
    /// block's keys before deciding them (a table of millions of voters does not fit in any cache).
    public func prefetch(_ keys: [Key]) {
        let slots = memory.slots.baseAddress!
        var sum: UInt32 = 0
        for key in keys { sum &+= slots.load(fromByteOffset: home(key).slot * VoterTable.slotSize + 36, as: UInt32.self) }
        prefetched = sum
    }

    /// Where `prefetch` leaves its reads, so they are not optimised away.
    private var prefetched: UInt32 = 0

    /// The slot `key` hashes to, and the key's words.
    private func home(_ key: Key) -> (slot: Int, words: (UInt64, UInt64, UInt64, UInt64)) {
        let words = key.digest.withUnsafeBytes {
            (
                $0.loadUnaligned(fromByteOffset: 0, as: UInt64.self), $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self),
                $0.loadUnaligned(fromByteOffset: 16, as: UInt64.self), $0.loadUnaligned(fromByteOffset: 24, as: UInt64.self)
            )
        }
        var hash = seed ^ (UInt64(key.place) &* 0x9E37_79B9_7F4A_7C15) ^ UInt64(key.kind.rawValue)
        func mix(_ word: UInt64) {
            hash = (hash ^ word) &* 0xBF58_476D_1CE4_E5B9
            hash ^= hash >> 31
        }
        mix(words.0)
        mix(words.1)
        mix(words.2)
        mix(words.3)
        return (Int(truncatingIfNeeded: hash.multipliedFullWidth(by: UInt64(slotCount)).high), words)
    }

    /// The slot holding `key`, or the empty slot where it would go.
    private func find(_ key: Key) -> (slot: Int, entry: Entry?) {
        var (slot, words) = home(key)
        let slots = memory.slots.baseAddress!
        let slotCount = self.slotCount  // a local: no exclusivity check per probe
        while true {
            let base = slots + slot * VoterTable.slotSize
            let word = base.load(fromByteOffset: 36, as: UInt32.self)
            if word == 0 { return (slot, nil) }
            if word >> 8 == key.kind.rawValue, base.load(fromByteOffset: 32, as: UInt32.self) == key.place,
                base.loadUnaligned(fromByteOffset: 0, as: UInt64.self) == words.0,
                base.loadUnaligned(fromByteOffset: 8, as: UInt64.self) == words.1,
                base.loadUnaligned(fromByteOffset: 16, as: UInt64.self) == words.2,
                base.loadUnaligned(fromByteOffset: 24, as: UInt64.self) == words.3
            {
                // An unknown entry value (a damaged file) reads as authorised-and-voted: refuse, never allow.
                return (slot, Entry(rawValue: word & 0xff) ?? .voted)
            }
            slot += 1
            if slot == slotCount { slot = 0 }
        }
    }
}

/// Zero-filled anonymous memory for an in-memory table, in huge pages where the kernel allows: probes
/// land on random slots, and with 4 KiB pages nearly every one would also miss the TLB.
final class HeapMemory: VoterTableMemory {
    let slots: UnsafeMutableRawBufferPointer

    init(slotCount: Int) {
        let bytes = slotCount * VoterTable.slotSize
        guard let pointer = mmap(nil, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
            pointer != MAP_FAILED
        else { fatalError("out of memory for \(slotCount) voter slots") }
        _ = madvise(pointer, bytes, MADV_HUGEPAGE)  // advice only: without it the table still works
        slots = UnsafeMutableRawBufferPointer(start: pointer, count: bytes)
    }

    func replacement(slotCount: Int) throws -> any VoterTableMemory { HeapMemory(slotCount: slotCount) }

    deinit { munmap(slots.baseAddress, slots.count) }
}
