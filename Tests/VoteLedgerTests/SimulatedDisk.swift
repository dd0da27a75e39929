import FileStore
import Foundation
import Ledger
import TestSupport

/// A disk for the store's I/O seam that can fail, or lose power, at a chosen operation.
///
/// It performs writes on the real files (so the store reads back what it wrote) but keeps its own model
/// of durability: a file's durable content is what it held at its last sync. A power cut at operation
/// `n` refuses operation `n` and everything after it, then rewrites every file changed since its last
/// sync to what a real disk might hold after the cut: only the synced content, or that plus a prefix of
/// the unsynced bytes (a torn write), or that prefix followed by garbage. Syncs cost nothing, so a test
/// can cut power at every operation of a run.
final class SimulatedDisk: FileIO, @unchecked Sendable {
    enum Fault {
        /// Lose power at this operation (1-based).
        case powerCut(at: Int)
        /// This operation fails with `errno` (ENOSPC, EIO); later ones succeed ("space is back").
        case failure(at: Int, errno: Int32)
    }

    enum Aftermath: CaseIterable {
        /// Everything after the last sync is lost.
        case loseUnsynced
        /// A prefix of the unsynced bytes survives.
        case tornPrefix
        /// A prefix survives, followed by garbage up to the written length.
        case tornGarbage
    }

    private let lock = NSLock()
    private let fault: Fault?
    private var generator: SplitMix64
    private(set) var operations = 0
    private(set) var cut = false
    /// Content of each file at its last sync; absent for files never synced through this disk.
    private var durable: [String: [UInt8]] = [:]
    /// Files changed since their last sync.
    private var dirty: Set<String> = []

    init(fault: Fault? = nil, seed: UInt64 = 1) {
        self.fault = fault
        self.generator = SplitMix64(seed: seed)
    }

    // MARK: FileIO

    func write(_ bytes: [UInt8], to file: FileHandleRef, at offset: UInt64) throws(LedgerError) {
        try step("writing \(file.path)") { () throws(LedgerError) in
            remember(file.path)
            try PosixIO.shared.write(bytes, to: file, at: offset)
            dirty.insert(file.path)
        }
    }

    func sync(_ file: FileHandleRef) throws(LedgerError) {
        try step("syncing \(file.path) to disk") { () throws(LedgerError) in
            durable[file.path] = Array(FileManager.default.contents(atPath: file.path) ?? Data())
            dirty.remove(file.path)
        }
    }

    func truncate(_ file: FileHandleRef, to size: UInt64) throws(LedgerError) {
        try step("truncating \(file.path)") { () throws(LedgerError) in
            remember(file.path)
            try PosixIO.shared.truncate(file, to: size)
            dirty.insert(file.path)
        }
    }

    func syncDirectory(_ path: String) throws(LedgerError) {
        try step("syncing directory \(path)") { () throws(LedgerError) in }
    }

    func rename(_ from: String, _ to: String) throws(LedgerError) {
        try step("renaming \(from)") { () throws(LedgerError) in try PosixIO.shared.rename(from, to) }
    }

    func remove(_ path: String) throws(LedgerError) {
        try step("removing \(path)") { () throws(LedgerError) in try PosixIO.shared.remove(path) }
    }

    // MARK: Faults

    private func step(_ what: String, _ body: () throws(LedgerError) -> Void) throws(LedgerError) {
        lock.lock()
        defer { lock.unlock() }
        if cut { throw LedgerError.io("\(what): power is off") }
        operations += 1
        switch fault {
        case .powerCut(let at) where at == operations:
            cut = true
            throw LedgerError.io("\(what): power cut")
        case .failure(let at, let code) where at == operations:
            throw LedgerError.system(what, errno: code)
        default:
            try body()
        }
    }

    /// A file first touched through this disk: its content now is its durable baseline (it was durable
    /// before this disk was in use, or it is a derived index whose loss recovery must survive).
    private func remember(_ path: String) {
        if durable[path] == nil && !dirty.contains(path) {
            durable[path] = Array(FileManager.default.contents(atPath: path) ?? Data())
        }
    }

    /// Rewrites every file changed since its last sync as the power cut left it.
    func applyPowerCut(_ aftermath: Aftermath) {
        lock.lock()
        defer { lock.unlock() }
        for path in dirty {
            let now = Array(FileManager.default.contents(atPath: path) ?? Data())
            let base = durable[path] ?? []
            var survived = base
            if now.count > base.count, now.starts(with: base) {
                let unsynced = Array(now[base.count...])
                switch aftermath {
                case .loseUnsynced: break
                case .tornPrefix:
                    survived += unsynced.prefix(Int(generator.next() % UInt64(unsynced.count + 1)))
                case .tornGarbage:
                    let kept = Int(generator.next() % UInt64(unsynced.count + 1))
                    survived += unsynced.prefix(kept)
                    survived += (kept..<unsynced.count).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
                }
            } else if aftermath != .loseUnsynced {
                survived = now  // overwritten in place (indexes): the new content may have landed
            }
            _ = FileManager.default.createFile(atPath: path, contents: Data(survived))
        }
        dirty.removeAll()
    }
}
