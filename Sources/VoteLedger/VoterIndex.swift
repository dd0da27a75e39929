import Election
import Foundation
import Ledger
import LedgerCrypto

/// The writer's voter roll at the head. In a ledger directory it is `voters.idx`: a `VoterTable` in a
/// mapped file, so opening a ledger of a million voters reads a 4 KiB header instead of replaying a million
/// authorisations. Derived data, kept only by the lock-holding writer: a 4096-byte header, then the table's
/// slots. A ledger without a directory (in memory) keeps the table in memory, built from the chain.
///
/// Header (native byte order): magic "VLVOTER4" (a new magic for any change to the layout or the hash,
/// so an older file is rebuilt rather than misread), state (u32: 1 closed cleanly, 2 in use), 4 zero
/// bytes, height (u64) and header hash (32 bytes) of the last block folded in, slot count (u64), entry
/// count (u64), hash seed (u64), CRC-32C of the 80 bytes before it (u32), 4 zero bytes, and the seal: the
/// HMAC-SHA256 under the ledger's `DerivedStateKey` of the first 80 header bytes and every slot.
///
/// The writer marks the file in use (and syncs that) before its first change, and marks it closed, sealed,
/// only after syncing every slot. So a file not marked closed, or closed at a block that is not in the chain,
/// may be anything and is rebuilt from the log; a closed one is exact at its block. One whose seal does not
/// verify was not written by a holder of the key directory (someone who can write the ledger directory
/// changed it, which could let a second vote in) and is rebuilt from the log, said so in the log.
package final class VoterIndex {
    package static let fileName = "voters.idx"
    static let headerSize = 4096
    static let magic = Array("VLVOTER4".utf8)
    private static let closed: UInt32 = 1
    private static let inUse: UInt32 = 2

    let table: VoterTable
    private var inUse = false

    private init(table: VoterTable) {
        self.table = table
    }

    /// The roll of the ledger `source` reads, brought up to `head`: with an index `file` (the derived store's
    /// `voterIndexPath`), from it when it is exact at a block of the chain, else rebuilt there from genesis
    /// (logged, as it reads every block); without one, built in memory from genesis.
    static func open(
        file path: String?, source: any BlockSource, head: BlockHeader, key: DerivedStateKey,
        log: (String) -> Void
    ) throws
        -> VoterIndex
    {
        let capacity = Int(min(head.treeSize, 1 << 26))
        guard let path else { return try fold(VoterIndex(table: VoterTable(capacity: capacity)), source, head) }
        if let file = try? MappedSlots(existing: path), let header = file.header(),
            header.height <= head.height, let block = try? source.header(at: header.height),
            block.hash == header.hash
        {
            guard file.seal(key: key) == header.seal else {
                log(
                    "\(path) does not carry this ledger's seal (changed by someone without the key directory): rebuilding it from the log"
                )
                return try rebuild(path, source: source, head: head, capacity: capacity)
            }
            let index = VoterIndex(table: VoterTable(memory: file, count: header.count, seed: header.seed))
            guard header.height != head.height else { return index }
            try index.markInUse()
            return try fold(index, source, head, after: header.height)
        }
        if head.treeSize > 100_000 { log("rebuilding the voter index from \(head.height) blocks …") }
        return try rebuild(path, source: source, head: head, capacity: capacity)
    }

    /// A new index file at `path` with the roll of `source` up to `head`.
    private static func rebuild(
        _ path: String, source: any BlockSource, head: BlockHeader, capacity: Int
    ) throws -> VoterIndex {
        let file = try MappedSlots(creating: path, slotCount: VoterTable.slotCount(for: capacity))
        let index = VoterIndex(table: VoterTable(memory: file, count: 0, seed: VoterTable.randomSeed()))
        index.inUse = true
        return try fold(index, source, head)
    }

    /// `index` with the voter events of `source`'s blocks after block `covered` up to `head` folded in.
    private static func fold(
        _ index: VoterIndex, _ source: any BlockSource, _ head: BlockHeader, after covered: UInt64 = 0
    ) throws -> VoterIndex {
        var changes = VoterRoll()
        try source.forEachBlock(from: covered + 1) { block in
            guard block.header.height <= head.height else { return }
            for event in block.events { changes.apply(try ElectionEvent(type: event.type, payload: event.payload)) }
            try index.table.reserve(changes.count)
            index.table.commit(changes)
            changes.removeAll()
        }
        return index
    }

    /// Marks the file in use, durably, before the first change to it (a roll in memory has no file).
    func markInUse() throws {
        guard !inUse, let file = table.memory as? MappedSlots else { return }
        try file.writeHeader(state: VoterIndex.inUse, height: 0, hash: .zero, table: table)
        inUse = true
    }

    /// Syncs every slot, then marks the file closed at block `height` with header hash `hash`, sealed with `key`.
    func close(height: UInt64, hash: Digest, key: DerivedStateKey) throws {
        guard inUse, let file = table.memory as? MappedSlots else { return }
        try file.syncSlots()
        try file.writeHeader(state: VoterIndex.closed, height: height, hash: hash, table: table, key: key)
        inUse = false
    }
}

/// A file of table slots behind a 4 KiB header, mapped shared: what the table writes is the file.
final class MappedSlots: VoterTableMemory {
    struct Header {
        var height: UInt64
        var hash: Digest
        var count: Int
        var seed: UInt64
        var seal: Digest
    }

    let path: String
    private let descriptor: Int32
    private let mapping: UnsafeMutableRawPointer
    private let length: Int
    let slots: UnsafeMutableRawBufferPointer

    /// Maps an existing index file; fails if it is missing or its size is not a header plus whole slots.
    convenience init(existing path: String) throws {
        // Never through a symbolic link: a planted one is not opened, and the rebuild renames over it.
        let fd = Glibc.open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw VoteError(.io, "cannot open \(path)") }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_size > VoterIndex.headerSize,
            (Int(info.st_size) - VoterIndex.headerSize) % VoterTable.slotSize == 0
        else {
            Glibc.close(fd)
            throw VoteError(.refused, "\(path) has the wrong size")
        }
        try self.init(path: path, descriptor: fd, length: Int(info.st_size))
    }

    /// Creates (replacing any old one) a zero-filled index file of `slotCount` slots, marked in use.
    convenience init(creating path: String, slotCount: Int) throws {
        let temporary = path + ".new"
        unlink(temporary)
        let fd = Glibc.open(temporary, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw VoteError(.io, "cannot create \(temporary): \(String(cString: strerror(errno)))") }
        let length = VoterIndex.headerSize + slotCount * VoterTable.slotSize
        // Allocate every block now: a write to a mapped page the disk has no room for is a SIGBUS.
        let status = posix_fallocate(fd, 0, off_t(length))
        guard status == 0 else {
            Glibc.close(fd)
            unlink(temporary)
            throw VoteError.system("cannot create \(temporary)", errno: status)
        }
        try self.init(path: path, descriptor: fd, length: length)
        header(state: 2, height: 0, hash: .zero, slotCount: slotCount, count: 0, seed: 0)
        guard msync(mapping, VoterIndex.headerSize, MS_SYNC) == 0, Glibc.rename(temporary, path) == 0 else {
            unlink(temporary)
            throw VoteError(.io, "cannot create \(path): \(String(cString: strerror(errno)))")
        }
    }

    private init(path: String, descriptor: Int32, length: Int) throws {
        guard let mapping = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, descriptor, 0), mapping != MAP_FAILED
        else {
            Glibc.close(descriptor)
            throw VoteError(.io, "cannot map \(path): \(String(cString: strerror(errno)))")
        }
        self.path = path
        self.descriptor = descriptor
        self.mapping = mapping
        self.length = length
        slots = UnsafeMutableRawBufferPointer(
            start: mapping + VoterIndex.headerSize, count: length - VoterIndex.headerSize)
    }

    deinit {
        munmap(mapping, length)
        Glibc.close(descriptor)
    }

    func replacement(slotCount: Int) throws -> any VoterTableMemory {
        try MappedSlots(creating: path, slotCount: slotCount)
    }

    /// The header, if the file was closed cleanly and the header is whole and consistent with the file.
    func header() -> Header? {
        let bytes = UnsafeRawBufferPointer(start: mapping, count: MappedSlots.sealEnd)
        guard Array(bytes[0..<8]) == VoterIndex.magic, bytes.load(fromByteOffset: 8, as: UInt32.self) == 1,
            bytes.load(fromByteOffset: 80, as: UInt32.self)
                == CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<80]))
        else { return nil }
        let slotCount = bytes.load(fromByteOffset: 56, as: UInt64.self)
        let count = bytes.load(fromByteOffset: 64, as: UInt64.self)
        guard slotCount == UInt64(slots.count / VoterTable.slotSize),
            Double(count) <= Double(slotCount) * VoterTable.maxLoad
        else { return nil }
        return Header(
            height: bytes.load(fromByteOffset: 16, as: UInt64.self),
            hash: Digest(unsafeUninitializedReading: UnsafeRawBufferPointer(rebasing: bytes[24..<56])),
            count: Int(count), seed: bytes.load(fromByteOffset: 72, as: UInt64.self),
            seal: Digest(unsafeUninitializedReading: UnsafeRawBufferPointer(rebasing: bytes[88..<MappedSlots.sealEnd])))
    }

    /// Where the header's seal ends.
    private static let sealEnd = 88 + Digest.byteCount

    /// The seal under `key` of the header's first 80 bytes and every slot, as they are now.
    func seal(key: DerivedStateKey) -> Digest {
        key.seal { hasher in
            hasher.update(UnsafeRawBufferPointer(start: mapping, count: 80))
            hasher.update(UnsafeRawBufferPointer(slots))
        }
    }

    /// Writes the header, sealed with `key` if one is given (else the seal is zeros), and syncs it.
    func writeHeader(
        state: UInt32, height: UInt64, hash: Digest, table: VoterTable, key: DerivedStateKey? = nil
    ) throws {
        header(
            state: state, height: height, hash: hash, slotCount: table.slotCount, count: table.count, seed: table.seed)
        let seal = key.map(seal(key:)) ?? .zero
        seal.withUnsafeBytes {
            UnsafeMutableRawBufferPointer(start: mapping + 88, count: Digest.byteCount).copyMemory(from: $0)
        }
        guard msync(mapping, VoterIndex.headerSize, MS_SYNC) == 0 else {
            throw VoteError(.io, "cannot sync \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// Syncs the slots to disk.
    func syncSlots() throws {
        guard msync(mapping, length, MS_SYNC) == 0 else {
            throw VoteError(.io, "cannot sync \(path): \(String(cString: strerror(errno)))")
        }
    }

    private func header(state: UInt32, height: UInt64, hash: Digest, slotCount: Int, count: Int, seed: UInt64) {
        let bytes = UnsafeMutableRawBufferPointer(start: mapping, count: 84)
        bytes.copyBytes(from: VoterIndex.magic)
        bytes.storeBytes(of: state, toByteOffset: 8, as: UInt32.self)
        bytes.storeBytes(of: 0, toByteOffset: 12, as: UInt32.self)
        bytes.storeBytes(of: height, toByteOffset: 16, as: UInt64.self)
        hash.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: bytes[24..<56]).copyMemory(from: $0) }
        bytes.storeBytes(of: UInt64(slotCount), toByteOffset: 56, as: UInt64.self)
        bytes.storeBytes(of: UInt64(count), toByteOffset: 64, as: UInt64.self)
        bytes.storeBytes(of: seed, toByteOffset: 72, as: UInt64.self)
        bytes.storeBytes(
            of: CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<80])), toByteOffset: 80, as: UInt32.self)
    }
}

extension VoterIndex {
    /// What `vote verify` says of the index file at `path` (`DerivedStateCheck`): sound when it is closed, sealed
    /// under `key` and at a block of the chain `source` reads.
    static func check(
        _ path: String, source: any BlockSource, key: DerivedStateKey?
    ) throws -> DerivedStateCheck.Verdict {
        guard access(path, F_OK) == 0 else { return .absent }
        guard let file = try? MappedSlots(existing: path) else {
            return .stale("it cannot be opened, or its size is wrong")
        }
        guard let header = file.header() else {
            return .stale("it is not marked closed (a writer has it open, or stopped without closing it)")
        }
        guard let key else { return .unchecked }
        guard file.seal(key: key) == header.seal else {
            return .forged("its seal is not this ledger's: it was changed by someone without the key directory")
        }
        guard try source.header(at: header.height)?.hash == header.hash else {
            return .stale("block \(header.height), where it was closed, is not in the chain")
        }
        return .sound(height: header.height)
    }
}
