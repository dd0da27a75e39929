import Election
import FileDriver
import Foundation
import Ledger
import LedgerCrypto
import TestSupport
import Testing

@testable import VoteLedger

extension Result {
    /// The error, if this is a failure.
    var failure: Failure? {
        if case .failure(let error) = self { error } else { nil }
    }
}

/// The writer's voter index (`voters.idx`): reused when it was closed cleanly at a block of the chain,
/// caught up when it is behind, rebuilt from the log otherwise, and never the reason a rule is broken.
@Suite struct VoterIndexTests {
    static let t0 = ServiceTests.t0

    static func temporaryPath() -> String { NSTemporaryDirectory() + "voters-\(UUID().uuidString)" }

    static func inode(_ path: String) throws -> UInt64 {
        try #require((try FileManager.default.attributesOfItem(atPath: path))[.systemFileNumber] as? UInt64)
    }

    /// Sets the state word of the header (1 closed, 2 in use), as a writer killed mid-work leaves it.
    static func setState(_ state: UInt32, of path: String) throws {
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        try handle.seek(toOffset: 8)
        try handle.write(contentsOf: withUnsafeBytes(of: state) { Data($0) })
        try handle.close()
    }

    /// Every token's state as the rules see it after a reopen: double votes refused, fresh tokens accepted.
    static func expectRulesHold(
        _ path: String, tokens: [VotingToken], voted: Int, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let ledger = try VoteLedgerService.openLedger(StoreConfiguration(.file(path: path), log: { _ in }))
        defer { ledger.close() }
        for (index, token) in tokens.enumerated() {
            #expect(
                ledger.voterRoll.hasVoted(tokenHash: token.hash, place: 1) == (index < voted),
                sourceLocation: sourceLocation)
        }
        let outcome = try ledger.submit(
            [
                .castVote(place: 1, candidate: 1, tokenHash: tokens[0].hash),
                .authorizeVoter(
                    place: 1, voterTag: try ledger.voterTag("member-0"), tokenHash: SHA256.hash(Array("fresh".utf8))),
            ], now: t0 + 50_000)
        if voted > 0 {
            #expect(outcome.results[0].failure == .alreadyVoted, sourceLocation: sourceLocation)
        }
        #expect(outcome.results[1].failure == .voterAlreadyAuthorized, sourceLocation: sourceLocation)
    }

    /// A clean close saves the index; the next writer maps the same file and decides alike.
    @Test func cleanCloseIsReused() throws {
        let path = Self.temporaryPath()
        defer { removeLedger(path) }
        let (ledger, tokens) = try ServiceTests.election(at: path, voters: 30, votes: 10)
        ledger.close()
        let before = try Self.inode(path + "/voters.idx")
        try Self.expectRulesHold(path, tokens: tokens, voted: 10)
        #expect(try Self.inode(path + "/voters.idx") == before)
    }

    /// A file left in use (the writer was killed) is rebuilt from the log, and the rules still hold.
    @Test func inUseIndexIsRebuilt() throws {
        let path = Self.temporaryPath()
        defer { removeLedger(path) }
        let (ledger, tokens) = try ServiceTests.election(at: path, voters: 30, votes: 10)
        ledger.close()
        let before = try Self.inode(path + "/voters.idx")
        try Self.setState(2, of: path + "/voters.idx")
        try Self.expectRulesHold(path, tokens: tokens, voted: 10)
        #expect(try Self.inode(path + "/voters.idx") != before)
    }

    /// An index saved at an older block is caught up from the blocks after it, not trusted as current.
    @Test func staleIndexIsCaughtUp() throws {
        let path = Self.temporaryPath()
        defer { removeLedger(path) }
        let (ledger, tokens) = try ServiceTests.election(at: path, voters: 30, votes: 10)
        ledger.close()
        let old = try Data(contentsOf: URL(fileURLWithPath: path + "/voters.idx"))
        let writer = try VoteLedgerService.openLedger(StoreConfiguration(.file(path: path), log: { _ in }))
        for (index, token) in tokens[10..<20].enumerated() {
            _ = try writer.submit(
                .castVote(place: 1, candidate: 2, tokenHash: token.hash), now: Self.t0 + 3000 + Int64(index))
        }
        writer.close()
        try old.write(to: URL(fileURLWithPath: path + "/voters.idx"))
        try Self.expectRulesHold(path, tokens: tokens, voted: 20)
    }

    /// Another ledger's index, a damaged header, a wrong size or no file at all: rebuilt, rules hold.
    @Test func foreignOrDamagedIndexIsRebuilt() throws {
        let path = Self.temporaryPath()
        let other = Self.temporaryPath()
        defer {
            removeLedger(path)
            try? FileManager.default.removeItem(atPath: other)
        }
        let (ledger, tokens) = try ServiceTests.election(at: path, voters: 30, votes: 10)
        ledger.close()
        let (otherLedger, _) = try ServiceTests.election(at: other, voters: 30, votes: 0)
        otherLedger.close()
        let index = path + "/voters.idx"
        let damages: [(String, (inout Data) -> Void)] = [
            ("foreign", { $0 = (try? Data(contentsOf: URL(fileURLWithPath: other + "/voters.idx"))) ?? Data() }),
            ("header byte", { $0[20] ^= 0x40 }),
            ("truncated", { $0 = $0.prefix($0.count - 1) }),
            ("header only", { $0 = $0.prefix(4096) }),
            ("empty", { $0 = Data() }),
        ]
        for (name, damage) in damages {
            var bytes = try Data(contentsOf: URL(fileURLWithPath: index))
            damage(&bytes)
            try bytes.write(to: URL(fileURLWithPath: index))
            try Self.expectRulesHold(path, tokens: tokens, voted: 10)
            #expect(FileManager.default.fileExists(atPath: index), "\(name)")
        }
        try FileManager.default.removeItem(atPath: index)
        try Self.expectRulesHold(path, tokens: tokens, voted: 10)
    }

    /// The table grows (a new, larger file) while a writer authorises thousands, and every entry survives.
    @Test func growsWithTheElectorate() throws {
        let path = Self.temporaryPath()
        defer { removeLedger(path) }
        let (ledger, tokens) = try ServiceTests.election(at: path, voters: 3000, votes: 0)
        let size = try #require((try FileManager.default.attributesOfItem(atPath: path + "/voters.idx"))[.size] as? Int)
        #expect(size >= 4096 + 6000 * 40)
        ledger.close()
        try Self.expectRulesHold(path, tokens: Array(tokens.prefix(1)) + tokens.suffix(50), voted: 0)
    }
}
