import Ballots
import Election
import FileDriver
import FileStore
import Foundation
import Ledger
import LedgerCrypto
import TestSupport
import Testing

@testable import VoteLedger

/// The stores the service's tests run on, each opened through the factory (`VoteLedgerService`). A test
/// that holds for every store takes them as its arguments.
enum ServiceStore: String, CaseIterable, CustomTestStringConvertible {
    case file, memory

    var testDescription: String { rawValue }

    /// The configuration of a ledger of this kind not created yet: in a new temporary directory, or in memory.
    func configuration() -> StoreConfiguration {
        switch self {
        case .file: StoreConfiguration(.file(path: NSTemporaryDirectory() + "service-\(UUID().uuidString)"))
        case .memory: StoreConfiguration(.memory)
        }
    }
}

extension StoreConfiguration {
    /// Deletes the file store's ledger and key directories (a ledger in memory goes with the last reference
    /// to it).
    func removeLedger() {
        if let file = store as? FileDriver {
            for directory in [file.path, file.keyDirectory.path] {
                try? FileManager.default.removeItem(atPath: directory)
            }
        }
    }
}

extension ElectionLedger {
    /// Reads back what this ledger writes, also from another task once it is handed to a writer actor or
    /// closed: a new reader of the ledger directory on each call (a file store reader counts the segments when
    /// it opens), or the ledger in memory.
    func reader() throws -> @Sendable () throws -> any BlockSource {
        let source = try source()
        guard let path = (source as? FileBlockSource)?.directory.path else { return { source } }
        return { try FileBlockSource(path: path) }
    }
}

/// The application service on real ledgers, with block times passed in (no sleeping).
@Suite struct ServiceTests {
    static let t0: Int64 = 1_900_000_000_000

    /// A ledger in the directory `path` with one place, two candidates, `voters` authorised voters and
    /// `votes` votes cast.
    static func election(at path: String, voters: Int, votes: Int) throws -> (ElectionLedger, [VotingToken]) {
        try election(StoreConfiguration(.file(path: path)), voters: voters, votes: votes)
    }

    /// A ledger created by the factory from `configuration`, with one place, two candidates, `voters`
    /// authorised voters and `votes` votes cast.
    static func election(
        _ configuration: StoreConfiguration, voters: Int, votes: Int
    ) throws -> (ElectionLedger, [VotingToken]) {
        let ledger = try VoteLedgerService.create(configuration, name: "service test", now: t0)
        return (ledger, try election(through: ledger, voters: voters, votes: votes))
    }

    /// Place 1 (registration from `t0` for 1 s, then voting), two candidates, `voters` authorised voters and
    /// `votes` votes cast, written through `ledger`; the voters' tokens.
    static func election(through ledger: ElectionLedger, voters: Int, votes: Int) throws -> [VotingToken] {
        _ = try ledger.submit(
            .createPlace(
                name: "Board", description: "", registration: TimeWindow(start: t0, end: t0 + 1000),
                voting: TimeWindow(start: t0 + 1000, end: t0 + 100_000), maxCandidates: nil), now: t0)
        _ = try ledger.submit(
            [
                .registerCandidate(place: 1, name: "Alice", pledge: ""),
                .registerCandidate(place: 1, name: "Bob", pledge: ""),
            ], now: t0 + 1)
        let tokens = try (0..<voters).map { _ in try VotingToken.generate() }
        _ = try ledger.submit(
            try tokens.enumerated().map { index, token in
                .authorizeVoter(place: 1, voterTag: try ledger.voterTag("member-\(index)"), tokenHash: token.hash)
            }, now: t0 + 2)
        for (index, token) in tokens.prefix(votes).enumerated() {
            _ = try ledger.submit(
                .castVote(place: 1, candidate: UInt32(index % 2 + 1), tokenHash: token.hash),
                now: t0 + 2000 + Int64(index))
        }
        return tokens
    }

    /// Snapshot plus the blocks after it gives the same state as a full replay, and as the writer's state.
    @Test func snapshotPlusTailEqualsFullReplay() throws {
        let temp = NSTemporaryDirectory() + "service-\(UUID().uuidString)"
        defer { removeLedger(temp) }
        let (ledger, tokens) = try ServiceTests.election(at: temp, voters: 40, votes: 10)
        ledger.saveSnapshot()
        for (index, token) in tokens.dropFirst(10).prefix(20).enumerated() {
            _ = try ledger.submit(
                .castVote(place: 1, candidate: 1, tokenHash: token.hash), now: ServiceTests.t0 + 5000 + Int64(index))
        }
        let live = ledger.state
        let liveRoll = ledger.voterRoll.entries
        ledger.close()

        let warm = try Self.replayFromSnapshot(temp)
        #expect(warm.fromSnapshot)
        #expect(warm.state.places == live.places)
        try FileManager.default.removeItem(atPath: temp + "/snapshot.bin")
        let cold = try ElectionView.replay(FileBlockSource(path: temp))
        #expect(!cold.fromSnapshot)
        #expect(cold.state.places == live.places)
        let verified = try ElectionVerifier.verify(FileBlockSource(path: temp))
        #expect(verified.state.places == live.places)
        #expect(verified.roll.entries == liveRoll)
        #expect(liveRoll.count == 40 * 3)  // per voter: its tag, its token, and their binding
        #expect(live.place(1).map(Projections.turnout)?.voted == 30)
    }

    /// A snapshot that no longer matches the chain (another ledger's, or a rewritten block) is ignored.
    @Test func staleSnapshotIsIgnored() throws {
        let temp = NSTemporaryDirectory() + "service-\(UUID().uuidString)"
        let other = temp + "-other"
        defer {
            removeLedger(temp)
            try? FileManager.default.removeItem(atPath: other)
        }
        let (first, _) = try ServiceTests.election(at: temp, voters: 5, votes: 5)
        let expected = first.state
        first.close()
        let (second, _) = try ServiceTests.election(at: other, voters: 9, votes: 2)
        second.saveSnapshot()
        second.close()
        try FileManager.default.removeItem(atPath: temp + "/snapshot.bin")
        try FileManager.default.copyItem(atPath: other + "/snapshot.bin", toPath: temp + "/snapshot.bin")
        let view = try Self.replayFromSnapshot(temp)
        #expect(!view.fromSnapshot)
        #expect(view.state.places == expected.places)
    }

    /// The file ledger at `path` replayed as its authority's reader does: from the snapshot in its directory
    /// if it carries the seal of the key directory beside it.
    static func replayFromSnapshot(_ path: String) throws -> ElectionView {
        let source = try FileBlockSource(path: path)
        let key = try FileVoterSecret(keys: KeyDirectory(defaultFor: path))
            .derivedStateKey(ledgerID: source.genesis.ledgerID)
        return try ElectionView.replay(
            source, snapshot: ElectionView.savedSnapshot(in: FileDerivedStore(ledger: path), key: key))
    }

    /// An event written around the contract (a vote with a token never authorised) fails verification
    /// with exit code 3, naming the block and the broken rule.
    @Test func verifyRedecidesEveryEvent() throws {
        let temp = NSTemporaryDirectory() + "service-\(UUID().uuidString)"
        defer { removeLedger(temp) }
        let (ledger, _) = try ServiceTests.election(at: temp, voters: 3, votes: 1)
        ledger.close()
        let store = try FileBlockStore.open(at: temp, log: { _ in })
        let forged = ElectionEvent.voteCast(place: 1, candidate: 2, tokenHash: SHA256.hash(Array("stolen".utf8)))
        let header = try store.append([forged.ledgerEvent], timestamp: ServiceTests.t0 + 3000)
        store.close()
        do {
            _ = try ElectionVerifier.verify(FileBlockSource(path: temp))
            Issue.record("a vote by an unauthorised token verified")
        } catch let error as VoteError {
            #expect(error.reason == .integrity(block: header.height, offset: nil))
            #expect(
                error.message
                    == "integrity failure: block \(header.height), event 0 breaks the rules: this token is not authorised to vote in place 1"
            )
        }
    }

    /// `beforeWriting` sees exactly the results `submit` returns, before the block is written, so bulk
    /// tokens can be saved first; if it throws, nothing is written.
    @Test(arguments: ServiceStore.allCases) func beforeWritingSeesTheResults(_ store: ServiceStore) throws {
        let configuration = store.configuration()
        defer { configuration.removeLedger() }
        let (ledger, tokens) = try ServiceTests.election(configuration, voters: 4, votes: 0)
        let commands: [Command] = [
            .castVote(place: 1, candidate: 1, tokenHash: tokens[0].hash),
            .castVote(place: 1, candidate: 2, tokenHash: tokens[0].hash),
            .castVote(place: 1, candidate: 9, tokenHash: tokens[1].hash),
            .castVote(place: 2, candidate: 1, tokenHash: tokens[2].hash),
        ]
        let now = ServiceTests.t0 + 4000
        var seen: [Result<EventReceipt, Violation>] = []
        let outcome = try ledger.submit(commands, now: now) { seen = $0 }
        #expect(seen.map { try? $0.get() } == outcome.results.map { try? $0.get() })
        #expect(outcome.accepted == 1)
        #expect(outcome.header?.eventCount == 1)
        // If the caller cannot keep what it must (bulk tokens), nothing is written.
        struct Refused: Error {}
        let height = ledger.head.height
        #expect(throws: Refused.self) {
            try ledger.submit([.castVote(place: 1, candidate: 1, tokenHash: tokens[3].hash)], now: now) { _ in
                throw Refused()
            }
        }
        #expect(ledger.head.height == height)
        #expect(ledger.voterRoll.hasVoted(tokenHash: tokens[3].hash, place: 1) == false)
        // Nor does a refused batch's authorisation stay in the roll; the next batch is decided as if it never was.
        let tag = try ledger.voterTag("member-refused")
        let token = try VotingToken.generate()
        #expect(throws: Refused.self) {
            try ledger.submit([.authorizeVoter(place: 1, voterTag: tag, tokenHash: token.hash)], now: now) { _ in
                throw Refused()
            }
        }
        #expect(!ledger.voterRoll.isAuthorized(voterTag: tag, place: 1))
        #expect(ledger.voterRoll.hasVoted(tokenHash: token.hash, place: 1) == nil)
        #expect(
            try ledger.submit([.castVote(place: 1, candidate: 1, tokenHash: tokens[3].hash)], now: now).accepted == 1)
    }

    /// The replay reads any `BlockSource`: the same events in the memory store replay to the state the file
    /// store gives, from genesis and from a snapshot that matches the chain (one that does not is ignored).
    @Test func replayReadsAnyBlockSource() throws {
        let temp = NSTemporaryDirectory() + "service-\(UUID().uuidString)"
        defer { removeLedger(temp) }
        let (ledger, _) = try ServiceTests.election(at: temp, voters: 12, votes: 7)
        let live = ledger.state
        ledger.close()
        let reader = try FileBlockSource(path: temp)
        let genesis = reader.genesis
        let key = try Ed25519PrivateKey()
        let memory = try MemoryBlockSource(
            name: genesis.name, authority: key, ledgerID: genesis.ledgerID,
            timestamp: genesis.createdAt)
        var blocks: [Block] = []
        try reader.forEachBlock(from: 1) { blocks.append($0.block) }
        #expect(blocks.count > 4)
        let writer = try memory.openWriter(authority: key)
        for block in blocks.prefix(3) { try writer.append(block.events, timestamp: block.header.timestamp) }
        let early = try ElectionView.replay(memory)
        for block in blocks.dropFirst(3) { try writer.append(block.events, timestamp: block.header.timestamp) }

        let fromFile = try ElectionView.replay(reader)
        let fromMemory = try ElectionView.replay(memory)
        #expect(fromFile.state.places == live.places)
        #expect(fromMemory.state.places == live.places)
        #expect(fromMemory.head.height == fromFile.head.height)
        #expect(fromMemory.head.treeSize == fromFile.head.treeSize)
        #expect(!fromMemory.fromSnapshot)

        let snapshot = Snapshot(height: early.head.height, headerHash: early.head.hash, state: early.state)
        let warm = try ElectionView.replay(memory, snapshot: snapshot)
        #expect(warm.fromSnapshot)
        #expect(warm.state.places == live.places)
        var foreign = snapshot
        foreign.headerHash = blocks[2].header.hash
        #expect(try !ElectionView.replay(memory, snapshot: foreign).fromSnapshot)
    }
}

/// A replay from a snapshot loads the roll entries its later blocks read from the blocks the snapshot covers: a
/// weighted voter (FORMAT.md §11.25) authorised before the snapshot casts after it, and counts as their weight.
@Suite struct WeightedSnapshotReplayTests {
    @Test func aWeightedVoterAuthorisedBeforeASnapshotVotesAfterIt() throws {
        var script = try ElectionVectors.base(.authorized)
        try ElectionVectors.agendaCast(&script)  // voter 4 of weight 3; the ballots in the last block
        let key = try Ed25519PrivateKey()
        let memory = try MemoryBlockSource(
            name: "weights", authority: key, ledgerID: LedgerID.random(), timestamp: ElectionVectors.epoch)
        let writer = try memory.openWriter(authority: key)
        for block in script.blocks.dropLast() {
            try writer.append(block.events, timestamp: ElectionVectors.epoch + block.time)
        }
        let early = try ElectionView.replay(memory)
        let last = try #require(script.blocks.last)
        try writer.append(last.events, timestamp: ElectionVectors.epoch + last.time)
        let warm = try ElectionView.replay(
            memory, snapshot: Snapshot(height: early.head.height, headerHash: early.head.hash, state: early.state))
        #expect(warm.fromSnapshot)
        let counts = try #require(try warm.ballotCount(memory, place: 2))
        #expect(counts.first?.ballots == Weighed(members: 4, weight: 6))
    }
}

/// ISO 8601 parsing: offsets required, fractions of any length, calendar limits; found by the fuzzer:
/// a fraction of more than three digits used to trap.
@Suite struct TimestampTests {
    @Test func parsesAndRefuses() {
        let now: Int64 = 1_795_000_000_000
        #expect(Timestamp.parse("2024-02-29T23:59:59.999114+00:00", now: now) == 1_709_251_199_999)
        #expect(Timestamp.parse("2024-02-29T23:59:59.9+00:00", now: now) == 1_709_251_199_900)
        #expect(
            Timestamp.parse("2026-12-01T09:00:00+09:00", now: now) == Timestamp.parse("2026-12-01T00:00:00Z", now: now))
        #expect(Timestamp.parse("+90s", now: now) == now + 90_000)
        for bad in [
            "2024-02-29T23:59:59.999114:00", "2025-02-29T00:00:00Z", "2026-12-01T09:00:00", "2026-12-01T24:00:00Z",
            "2026-12-01T09:00:00.Z", "2026-12-01T09:00:00+9:00", "-1d", "+1y", "", "now/now",
        ] {
            #expect(Timestamp.parse(bad, now: now) == nil, "\(bad)")
        }
        #expect(Timestamp.format(1_709_251_199_999) == "2024-02-29T23:59:59.999Z")
        // Found by the fuzzer: the extremes of Int64 used to overflow while formatting.
        #expect(Timestamp.format(.min) == "-9223372036854775808 ms since 1970")
        #expect(Timestamp.format(.max) == "9223372036854775807 ms since 1970")
        #expect(Timestamp.format(-62_135_596_800_000) == "0001-01-01T00:00:00.000Z")
    }
}

extension VoteError {
    /// Whether this is an integrity failure (the CLI's exit code 3), wherever it was found.
    var isIntegrityFailure: Bool {
        if case .integrity = reason { return true }
        return false
    }
}
