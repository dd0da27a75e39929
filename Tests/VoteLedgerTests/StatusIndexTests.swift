import Election
import FileDriver
import FileStore
import Foundation
import Ledger
import TestSupport
import Testing

@testable import VoteLedger

/// `vote status` from `status.idx`: the same answers as the log, an index built once and extended as the
/// log grows, and a file that points wrong or belongs to another chain ignored.
@Suite struct StatusIndexTests {
    static let t0 = ServiceTests.t0

    /// The user's state directory, as `vote status` is given it.
    static let derived = FileDerivedStore(state: NSTemporaryDirectory() + "status-index-test-state")

    /// Every token's answer, asked through a fresh view as `vote status` asks it.
    static func answers(_ path: String, _ tokens: [VotingToken], place: UInt32 = 1) throws -> [Bool?] {
        let view = try ElectionView.replay(FileBlockSource(path: path))
        return try tokens.map {
            try view.hasVoted(FileBlockSource(path: path), place: place, tokenHash: $0.hash, derived: derived)
        }
    }

    /// Where this user's index of the ledger at `path` is (the state directory, not the ledger's).
    static func indexPath(_ path: String) throws -> String {
        try #require(derived.path(of: .statusIndex(try FileBlockSource(path: path).genesis.ledgerID)))
    }

    /// Height of the block the index on disk covers, or nil if there is none.
    static func indexHeight(_ path: String) -> UInt64? {
        guard let bytes = ProtectedFile.read((try? indexPath(path)) ?? ""), bytes.count >= 16 else { return nil }
        return bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self) }
    }

    @Test func answersMatchTheLogAsItGrows() throws {
        let temp = NSTemporaryDirectory() + "status-\(UUID().uuidString)"
        let (ledger, tokens) = try ServiceTests.election(at: temp, voters: 12, votes: 4)
        let index = try StatusIndexTests.indexPath(temp)
        defer { for path in [temp, index] { removeLedger(path) } }
        let before = try FileManager.default.contentsOfDirectory(atPath: temp).sorted()
        let stranger = try VotingToken.generate()
        let expected: [Bool?] = (0..<12).map { $0 < 4 } + [nil]
        #expect(StatusIndexTests.indexHeight(temp) == nil)
        #expect(try StatusIndexTests.answers(temp, tokens + [stranger]) == expected)
        // Readers write nothing into the ledger directory (FORMAT.md §5.8): the index is in the state directory.
        #expect(try FileManager.default.contentsOfDirectory(atPath: temp).sorted() == before)
        let built = try #require(StatusIndexTests.indexHeight(temp))
        #expect(built == ledger.head.height)
        // Another place: not authorised there.
        #expect(
            try ElectionView.replay(FileBlockSource(path: temp)).hasVoted(
                FileBlockSource(path: temp), place: 2, tokenHash: tokens[0].hash, derived: StatusIndexTests.derived)
                == nil)

        // A short tail is scanned, not indexed: the answers follow the log, the file stays.
        _ = try ledger.submit(
            .castVote(place: 1, candidate: 1, tokenHash: tokens[4].hash), now: StatusIndexTests.t0 + 5000)
        #expect(try StatusIndexTests.answers(temp, [tokens[4], tokens[5]]) == [true, false])
        #expect(StatusIndexTests.indexHeight(temp) == built)

        // A long tail (more authorisations than the threshold) is folded into a new index.
        let more = try (0...StatusIndex.rewriteThreshold).map { _ in try VotingToken.generate() }
        _ = try ledger.submit(
            try more.enumerated().map { index, token in
                .authorizeVoter(place: 1, voterTag: try ledger.voterTag("late-\(index)"), tokenHash: token.hash)
            }, now: StatusIndexTests.t0 + 5001)
        _ = try ledger.submit(
            .castVote(place: 1, candidate: 2, tokenHash: more[7].hash), now: StatusIndexTests.t0 + 5002)
        #expect(
            try StatusIndexTests.answers(temp, [more[7], more[8], tokens[4], tokens[0], tokens[11], stranger]) == [
                true, false, true, true, false, nil,
            ])
        #expect(StatusIndexTests.indexHeight(temp) == ledger.head.height)
        // And from the rewritten index alone (no tail) the answers are the same.
        #expect(
            try StatusIndexTests.answers(temp, [more[7], more[8], tokens[4], tokens[0], tokens[11], stranger]) == [
                true, false, true, true, false, nil,
            ])
        ledger.close()
    }

    /// An index whose record points at another token's vote is caught by checking the event it points to,
    /// and rebuilt; an index of another chain (its block hash does not match) is not used.
    @Test func aWrongIndexIsNotBelieved() throws {
        let temp = NSTemporaryDirectory() + "status-\(UUID().uuidString)"
        let other = temp + "-other"
        defer {
            removeLedger(temp)
            try? FileManager.default.removeItem(atPath: other)
        }
        let (ledger, tokens) = try ServiceTests.election(at: temp, voters: 6, votes: 3)
        ledger.close()
        _ = try StatusIndexTests.answers(temp, tokens)
        let path = try StatusIndexTests.indexPath(temp)
        var bytes = try #require(ProtectedFile.read(path))
        // Every record claims the vote of the first record that has one.
        let records = (bytes.count - StatusIndex.headerSize) / StatusIndex.recordSize
        let votes = (0..<records).map { number in
            bytes.withUnsafeBytes {
                $0.loadUnaligned(
                    fromByteOffset: StatusIndex.headerSize + number * StatusIndex.recordSize + 48, as: UInt64.self)
            }
        }
        let someVote = try #require(votes.first { $0 != UInt64.max })
        bytes.withUnsafeMutableBytes { raw in
            for number in 0..<records {
                raw.storeBytes(
                    of: someVote, toByteOffset: StatusIndex.headerSize + number * StatusIndex.recordSize + 48,
                    as: UInt64.self)
            }
        }
        try ProtectedFile.replace(path, contents: bytes)
        #expect(try StatusIndexTests.answers(temp, tokens) == [true, true, true, false, false, false])

        // Another ledger's index, copied in, is ignored (its block hash is not this chain's).
        let (second, secondTokens) = try ServiceTests.election(at: other, voters: 6, votes: 6)
        second.close()
        _ = try StatusIndexTests.answers(other, secondTokens)
        let otherIndex = try StatusIndexTests.indexPath(other)
        defer { for file in [path, otherIndex] { try? FileManager.default.removeItem(atPath: file) } }
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.copyItem(atPath: otherIndex, toPath: path)
        #expect(try StatusIndexTests.answers(temp, tokens) == [true, true, true, false, false, false])
    }
}
