import Foundation
public import Ledger

/// What the service derives from a ledger to open and answer faster: the snapshot of the election state,
/// the writer's voter index, the readers' status index and the heads a user verified. None of it is
/// trusted: each is checked against the chain before it is used, and rebuilt from the log when it does not
/// match, so losing it only costs time. Where it is kept is the caller's choice, passed in (the command line
/// picks the user's state directory from the environment; the library reads no environment):
/// `FileDerivedStore` (the `FileDriver` target) keeps today's files, `MemoryDerivedStore` keeps it in the process.
public protocol DerivedStore: Sendable {
    /// The bytes last saved as `item`, if any.
    func read(_ item: DerivedItem) -> DerivedBytes?
    /// Saves `bytes` as `item`, replacing what was there whole (never half-written).
    func write(_ item: DerivedItem, _ bytes: [UInt8]) throws
    /// Where `item` is kept, for messages ("/home/ann/.local/state/voteledger/….head", "memory").
    func location(of item: DerivedItem) -> String
    /// The file the writer maps its voter index into (`voters.idx`), or `nil` to keep the roll in memory
    /// (built from the chain at each open).
    var voterIndexPath: String? { get }
}

/// One thing a `DerivedStore` keeps.
public enum DerivedItem: Hashable, Sendable {
    /// The election state at a block (`Snapshot`), which the writer saves and every replay starts from.
    case snapshot
    /// Where each token's authorisation and vote sit in the log of ledger `id` (`StatusIndex`).
    case statusIndex(LedgerID)
    /// The head this user last verified of ledger `id` (`RememberedHeads`).
    case head(LedgerID)
}

/// Bytes read from a `DerivedStore`, valid while this is held: a file mapped read-only, or a copy in memory.
public final class DerivedBytes: @unchecked Sendable {
    public let bytes: UnsafeRawBufferPointer
    private let release: (UnsafeRawBufferPointer) -> Void

    package init(bytes: UnsafeRawBufferPointer, release: @escaping (UnsafeRawBufferPointer) -> Void) {
        self.bytes = bytes
        self.release = release
    }

    /// A copy of `array`.
    package convenience init(copying array: [UInt8]) {
        let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: max(array.count, 1), alignment: 16)
        array.withUnsafeBytes { memory.copyMemory(from: $0) }
        self.init(bytes: UnsafeRawBufferPointer(rebasing: memory[0..<array.count])) { _ in memory.deallocate() }
    }

    deinit { release(bytes) }

    /// The bytes as an array.
    public var array: [UInt8] { Array(bytes) }
}

/// Derived state held in this process for as long as it runs: for a ledger in memory, which is never
/// reopened, and for a server, which answers many status requests from one status index.
public final class MemoryDerivedStore: DerivedStore {
    /// Each item as saved: read back without a copy (a server looks tokens up in one status index).
    private let items = Locked<[DerivedItem: DerivedBytes]>([:])

    public init() {}

    public func read(_ item: DerivedItem) -> DerivedBytes? {
        items.withLock { $0[item] }
    }

    public func write(_ item: DerivedItem, _ bytes: [UInt8]) {
        let saved = DerivedBytes(copying: bytes)
        items.withLock { $0[item] = saved }
    }

    public func location(of item: DerivedItem) -> String { "memory" }

    public var voterIndexPath: String? { nil }

    /// The items saved so far.
    public var saved: Set<DerivedItem> { items.withLock { Set($0.keys) } }
}
