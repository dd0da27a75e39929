import FileStore
import Foundation
import Ledger
import LedgerCrypto
import LedgerTestSupport
import TestSupport
import Testing

extension Fixture {
    /// A ledger with `blocks` blocks after genesis, `perBlock` events each, and quiet logging.
    static func ledger(
        at path: String, blocks: Int, perBlock: Int = 3, segmentLimit: UInt64 = FileBlockStore.defaultSegmentLimit
    ) throws -> FileBlockStore {
        let ledger = try FileBlockStore.create(
            at: path, name: "test ledger", authority: key, ledgerID: ledgerID, timestamp: epoch,
            segmentLimit: segmentLimit, log: { _ in })
        for block in 0..<blocks {
            try ledger.append(events(perBlock, from: block * perBlock), timestamp: epoch + Int64(block + 1) * 1000)
        }
        return ledger
    }
}

/// Byte-level file surgery for crash and tamper tests.
enum Bytes {
    static func read(_ path: String) -> [UInt8] { Array(FileManager.default.contents(atPath: path)!) }

    static func write(_ path: String, _ bytes: [UInt8]) {
        precondition(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
    }

    static func truncate(_ path: String, to size: Int) {
        precondition(Glibc.truncate(path, off_t(size)) == 0)
    }
}

/// The built `ledger-tool`, which sits beside the test bundle in the build directory.
enum Tool {
    static let path = builtProgram("ledger-tool")

    /// Runs the tool to completion; returns exit status, stdout and stderr.
    @discardableResult
    static func run(_ arguments: [String]) throws -> ProgramRun { try runToCompletion(path, arguments) }
}

/// Copies every file of ledger directory `from` into a new directory `to`, and its key directory beside it.
func copyLedger(_ from: String, to: String) throws {
    try FileManager.default.copyItem(atPath: from, toPath: to)
    try FileManager.default.copyItem(
        atPath: KeyDirectory(defaultFor: from).path, toPath: KeyDirectory(defaultFor: to).path)
}

/// Where each block of the ledger at `path` is stored, in height order.
func blockLocations(_ path: String) throws -> [BlockLocation] {
    var locations: [BlockLocation] = []
    _ = try FileBlockSource(path: path).forEachBlock { _, location in locations.append(location) }
    return locations
}
