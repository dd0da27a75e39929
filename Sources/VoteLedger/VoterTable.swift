import Dispatch
import Election
import LedgerCrypto

#if canImport(Glibc)
    import Glibc
#endif

/// Memory a `VoterTable` keeps its slots in: zero-filled when made. The writer's is a mapped file.
protocol VoterTableMemory: AnyObject {
    /// The slot bytes: `VoterTable.slotSize` per slot.
    var slots: UnsafeMutableRawBufferPointer { get }
    /// New zero-filled memory of `slotCount` slots; the table moves its entries there and drops this one.
    func replacement(slotCount: Int) throws -> any VoterTableMemory
}

extension VoterTableMemory {
    /// Faults every page of the slots in for writing, on another thread: the kernel's work for each page's
    /// first write (a mapped file's page_mkwrite, a zero page) is then done beside the writer instead of in
    /// its path. Advice only: it changes no byte, and if the memory is gone by then it does nothing. A
    /// megabyte at a time, as the kernel holds the process's memory map meanwhile, and the writer's own
    /// changes to it (its allocator growing a heap) wait for that.
    func prefaultForWriting() {
        guard let start = slots.baseAddress else { return }
        let (address, count) = (UInt(bitPattern: start), slots.count)
        DispatchQueue.global(qos: .utility).async {
            let chunk = 1 << 20
            for offset in stride(from: 0, to: count, by: chunk) {
                let pointer = UnsafeMutableRawPointer(bitPattern: address + UInt(offset))
                guard madvise(pointer, min(chunk, count - offset), MADV_POPULATE_WRITE) == 0 else { return }
            }
        }
    }
}

/// An open-addressing hash table of roll entries in flat memory (40-byte slots, linear probing), so it
/// can live in a mapped file and be used without loading it. Keys are SHA-256 or HMAC outputs, mixed
/// with a per-table seed so crafted keys cannot pile up in one run of slots. It is the writer's and the
/// verifier's committed roll (`VoterRegistry`); `VoterRoll`, the dictionary, is the reference it must agree with.
final class VoterTable: VoterRegistry {
    typealias Key = VoterRoll.Key
    typealias Entry = VoterRoll.Entry

    /// Slot layout (native byte order; the file is a local cache): digest (32), place (u32), and a u32 of
    /// kind << 8 | entry, 0 for an empty slot.
    static let slotSize = 40
    /// The table grows (doubles) before more than this share of its slots is used.
    static let maxLoad = 0.7

    private(set) var memory: any VoterTableMemory {
        didSet { base = memory.slots.baseAddress! }
    }
    /// `memory`'s first slot, kept apart so a lookup does not go through the existential.
    private var base: UnsafeMutableRawPointer
    /// Entries in the table.
    private(set) var count: Int
    /// Hash seed, saved with a mapped table.
    let seed: UInt64
    /// Number of slots.
    private(set) var slotCount: Int

    /// A table over `memory` that already holds `count` entries hashed with `seed`.
    init(memory: any VoterTableMemory, count: Int, seed: UInt64) {
        let slotCount = memory.slots.count / VoterTable.slotSize
        precondition(slotCount > 0 && Double(count) <= Double(slotCount) * VoterTable.maxLoad, "room for the entries")
        self.memory = memory
        base = memory.slots.baseAddress!
        self.count = count
        self.seed = seed
        self.slotCount = slotCount
    }

    /// An empty in-memory table with room for `capacity` entries and a random seed.
    convenience init(capacity: Int = 256) {
        self.init(
            memory: HeapMemory(slotCount: VoterTable.slotCount(for: capacity)), count: 0, seed: VoterTable.randomSeed())
    }

    /// A new hash seed (a fixed one only if the system's random generator fails: still a correct table).
    static func randomSeed() -> UInt64 {
        var seed: UInt64 = 0
        withUnsafeMutableBytes(of: &seed) {
            $0.copyBytes(from: (try? SecureRandom.bytes(8)) ?? [UInt8](repeating: 0x5a, count: 8))
        }
        return seed
    }

    /// Slots needed to hold `capacity` entries under the maximum load (any count: a slot is found by
    /// multiplying the hash, not by a bit mask, so a table for 2M entries is not rounded up to 4M).
    static func slotCount(for capacity: Int) -> Int {
        max(64, Int((Double(capacity) / maxLoad).rounded(.up)) + 1)
    }

    /// The entry under `key`, if any.
    func entry(_ key: Key) -> Entry? {
        let (_, found) = find(key)
        return found
    }

    /// What `set` replaced: a slot and its entry word before (0: the slot was empty).
    struct Replaced {
        let slot: Int
        let word: UInt32
    }

    /// Sets the entry under `key` and returns what it replaced (for `undo`). The table must have room
    /// (`reserve`).
    @discardableResult
    func set(_ key: Key, _ entry: Entry) -> Replaced {
        let (slot, found) = find(key)
        let base = self.base + slot * VoterTable.slotSize
        let replaced = Replaced(slot: slot, word: base.load(fromByteOffset: 36, as: UInt32.self))
        if found == nil {
            precondition(Double(count + 1) <= Double(slotCount) * VoterTable.maxLoad, "reserve room first")
            key.digest.withUnsafeBytes { base.copyMemory(from: $0.baseAddress!, byteCount: 32) }
            base.storeBytes(of: key.place, toByteOffset: 32, as: UInt32.self)
            count += 1
        }
        base.storeBytes(of: key.kind.rawValue << 8 | entry.rawValue, toByteOffset: 36, as: UInt32.self)
        return replaced
    }

    /// Takes back sets (what they returned, in the order they were made; the table must not have grown
    /// since): the slots are as they were before, byte for byte. Slots are never emptied otherwise, so an
    /// empty slot is all zero bytes, and undoing in reverse order moves no other entry.
    func undo(_ sets: [Replaced]) {
        for replaced in sets.reversed() {
            let base = self.base + replaced.slot * VoterTable.slotSize
            if replaced.word == 0 {
                base.initializeMemory(as: UInt8.self, repeating: 0, count: VoterTable.slotSize)
                count -= 1
            } else {
                base.storeBytes(of: replaced.word, toByteOffset: 36, as: UInt32.self)
            }
        }
    }

    /// Before a batch that may write `writes` slots: when that is at least a quarter as many as the table has
    /// pages, it comes from a bulk job that will write to nearly every page, so the pages are faulted in for
    /// writing now, on another thread (once per memory). A few writes fault in only their own pages.
    func expectWrites(_ writes: Int) {
        guard writes * 4 >= memory.slots.count / 4096, prefaulted != base else { return }
        prefaulted = base
        memory.prefaultForWriting()
    }

    /// Where the memory `expectWrites` last faulted in starts. (Not a weak reference to it: an object with
    /// one takes the slow path on every retain and release, and the table's memory sees one per lookup.)
    private var prefaulted: UnsafeMutableRawPointer?

    /// Grows the table, if needed, so `additional` more entries fit. Growing a mapped table can fail.
    func reserve(_ additional: Int) throws {
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
        guard word != 0, let kind = Key.Kind(rawValue: word >> 8), let entry = Entry(rawValue: word & 0xff) else {
            return nil
        }
        let key = Key(
            digest: Digest(unsafeUninitializedReading: UnsafeRawBufferPointer(start: base, count: 32)),
            place: base.load(fromByteOffset: 32, as: UInt32.self), kind: kind)
        return (key, entry)
    }

    /// Moves `changes` (a batch that stands: written to the ledger, or verified) into the table, after
    /// `reserve(changes.count)` when the table's memory may fail to grow.
    func commit(_ changes: VoterRoll) {
        reserveInMemory(changes.count)
        let entries = Array(changes.entries)
        for start in stride(from: 0, to: entries.count, by: VoterTable.prefetchRun) {
            let run = entries[start..<min(start + VoterTable.prefetchRun, entries.count)]
            prefetch(run.lazy.map(\.key))
            for (key, entry) in run { set(key, entry) }
        }
    }

    /// Folds `event` straight into the table (a verifier folding a log that is already final).
    func apply(_ event: ElectionEvent) {
        VoterRoll.forEachChange(of: event) { key, entry in
            reserveInMemory(1)
            set(key, entry)
        }
    }

    /// `reserve` for memory that cannot fail to grow (in memory, or reserved beforehand).
    func reserveInMemory(_ additional: Int) {
        do { try reserve(additional) } catch { preconditionFailure("the voter table could not grow: \(error)") }
    }

    /// Every entry (for tests and equality; O(slots)).
    var entries: [Key: Entry] {
        var result: [Key: Entry] = [:]
        for slot in 0..<slotCount {
            if let (key, entry) = VoterTable.stored(in: memory, at: slot) { result[key] = entry }
        }
        return result
    }

    /// Touches the first slot each key hashes to, all at once: the memory system then fetches them in
    /// parallel instead of one random miss at a time when the keys are looked up one by one. Call it with
    /// the keys of the next `prefetchRun` or so lookups (a table of millions of voters does not fit in any
    /// cache, and the pages of a longer run no longer fit in the TLB when their turn comes).
    func prefetch(_ keys: some Sequence<Key>) {
        let slots = base
        var sum: UInt32 = 0
        for key in keys {
            sum &+= slots.load(fromByteOffset: home(key).slot * VoterTable.slotSize + 36, as: UInt32.self)
        }
        prefetched = sum
    }

    /// Lookups to prefetch together: enough misses to overlap, few enough pages to stay in the TLB.
    static let prefetchRun = 64

    /// Where `prefetch` leaves its reads, so they are not optimised away.
    private var prefetched: UInt32 = 0

    /// The slot `key` hashes to, and the key's words.
    private func home(_ key: Key) -> (slot: Int, words: (UInt64, UInt64, UInt64, UInt64)) {
        let words = key.digest.withUnsafeBytes {
            (
                $0.loadUnaligned(fromByteOffset: 0, as: UInt64.self),
                $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self),
                $0.loadUnaligned(fromByteOffset: 16, as: UInt64.self),
                $0.loadUnaligned(fromByteOffset: 24, as: UInt64.self)
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
        let slots = base
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
