import FileStore
import Foundation
import Ledger
import LedgerCrypto
import TestSupport
import Testing

/// Fixtures shared by the store tests.
enum Fixture {
    /// RFC 8032 §7.1 TEST 1 secret key: a published, fixed key, so ledgers built in tests are reproducible.
    static let seed = Hex.decode("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")!
    static let key = try! Ed25519PrivateKey(seed: seed)
    static let ledgerID = LedgerID(bytes: Array(0..<16))!
    /// 2026-01-01T00:00:00Z in ms.
    static let epoch: Int64 = 1_767_225_600_000

    /// Application events with distinct, recognisable payloads.
    static func events(_ count: Int, from first: Int = 0, size: Int = 24) -> [LedgerEvent] {
        (first..<first + count).map { index in
            var payload = Array("event \(index) ".utf8)
            while payload.count < size { payload.append(UInt8(truncatingIfNeeded: index &* 31 &+ payload.count)) }
            return LedgerEvent(type: 0x0100, payload: payload)
        }
    }

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

/// Collects log lines for assertions.
final class LogLines: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [String] = []

    var lines: [String] { lock.withLock { stored } }

    func append(_ line: String) { lock.withLock { stored.append(line) } }
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

/// Runs `body`, which must throw a `LedgerError`, and returns it (records an issue otherwise).
func ledgerError(_ body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) -> LedgerError? {
    do {
        try body()
        Issue.record("expected a LedgerError, got success", sourceLocation: sourceLocation)
    } catch let error as LedgerError {
        return error
    } catch {
        Issue.record("expected a LedgerError, got \(error)", sourceLocation: sourceLocation)
    }
    return nil
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
