import Election
import FileDriver
import FileStore
import Foundation
import Ledger
import TestSupport
import Testing

@testable import VoteLedger

/// Derived state (snapshot, voter index, status index, remembered heads) goes where the caller's
/// `DerivedStore` says, and nowhere the library would find through the environment.
@Suite struct DerivedStateTests {
    /// Every directory the library could have found through the environment ($VOTE_STATE_DIR,
    /// $XDG_STATE_HOME, $HOME), holding any file named after `id`.
    static func filesNamed(after id: LedgerID) -> [String] {
        let environment = ProcessInfo.processInfo.environment
        let directories = [
            environment["VOTE_STATE_DIR"], environment["XDG_STATE_HOME"].map { $0 + "/voteledger" },
            (environment["HOME"] ?? NSHomeDirectory()) + "/.local/state/voteledger",
            NSTemporaryDirectory() + "vote-test-state",
        ].compactMap { $0 }
        return directories.flatMap { directory in
            ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
                .filter { $0.hasPrefix("\(id)") }.map { directory + "/" + $0 }
        }
    }

    /// An election in memory with its derived state in memory: the writer's snapshot, a reader's status
    /// index and remembered head all land in the stores given, and no file is written anywhere, also when a
    /// reader is given no store at all.
    @Test func anElectionInMemoryWritesNoFile() async throws {
        let derived = MemoryDerivedStore()
        let now = Clock.now()
        let writer = try VoteLedgerService.createWriter(
            StoreConfiguration(.memory, derived: derived), name: "derived in memory", now: now)
        let token = try VotingToken.generate()
        _ = try await writer.submit(
            .createPlace(
                name: "Board", description: "", registration: TimeWindow(start: now, end: now + 3_600_000),
                voting: TimeWindow(start: now + 3_600_000, end: now + 7_200_000), maxCandidates: nil))
        _ = try await writer.submit(
            .authorizeVoter(place: 1, voterTag: try writer.voterSecret.tag("m-1"), tokenHash: token.hash))
        let source = try await writer.source()
        let key = writer.voterSecret.derivedStateKey(ledgerID: source.genesis.ledgerID)
        await writer.close()
        #expect(derived.saved == [.snapshot])

        let view = try ElectionView.replay(source, snapshot: ElectionView.savedSnapshot(in: derived, key: key))
        #expect(view.fromSnapshot)
        let reader = MemoryDerivedStore()
        #expect(try view.hasVoted(source, place: 1, tokenHash: token.hash, derived: reader) == false)
        try RememberedHeads(reader).check(try AuditedLedger(source))
        let id = source.genesis.ledgerID
        #expect(reader.saved == [.statusIndex(id), .head(id)])
        #expect(Self.filesNamed(after: id) == [])
    }

    /// A file ledger whose writer is given a store in memory leaves no snapshot or voter index in its
    /// directory; reopened with that store, it starts from the snapshot there.
    @Test func aFileLedgerKeepsDerivedStateWhereItIsTold() async throws {
        let path = NSTemporaryDirectory() + "derived-\(UUID().uuidString)"
        let derived = MemoryDerivedStore()
        let configuration = StoreConfiguration(.file(path: path), derived: derived)
        defer { configuration.removeLedger() }
        let (ledger, _) = try ServiceTests.election(configuration, voters: 3, votes: 1)
        ledger.close()
        let files = try FileManager.default.contentsOfDirectory(atPath: path)
        #expect(!files.contains(ElectionView.snapshotFile))
        #expect(!files.contains(VoterIndex.fileName))
        #expect(derived.saved == [.snapshot])
        let key = ledger.voterSecret.derivedStateKey(ledgerID: ledger.genesis.ledgerID)
        let snapshot = try #require(ElectionView.savedSnapshot(in: derived, key: key))
        let reopened = try VoteLedgerService.openLedger(configuration)
        defer { reopened.close() }
        #expect(snapshot.height == reopened.head.height)
        #expect(try !FileManager.default.contentsOfDirectory(atPath: path).contains(VoterIndex.fileName))

        // The file store's own layout, by default: both files in the ledger directory.
        let other = NSTemporaryDirectory() + "derived-\(UUID().uuidString)"
        let plain = StoreConfiguration(.file(path: other))
        defer { plain.removeLedger() }
        let (second, _) = try ServiceTests.election(plain, voters: 3, votes: 1)
        second.close()
        let kept = try FileManager.default.contentsOfDirectory(atPath: other)
        #expect(kept.contains(ElectionView.snapshotFile) && kept.contains(VoterIndex.fileName))
    }

    /// The command line (the edge) finds the user's state directory in the environment: $VOTE_STATE_DIR,
    /// else $XDG_STATE_HOME/voteledger; `vote verify` remembers the head there.
    @Test func theCommandLineFindsTheStateDirectoryInTheEnvironment() throws {
        let election = try TestElection()
        let id = try FileBlockSource(path: election.ledger).genesis.ledgerID
        let xdg = election.root + "/xdg"
        let verified = try VoteCLI.run(
            ["verify", "--ledger", election.ledger], environment: ["VOTE_STATE_DIR": "", "XDG_STATE_HOME": xdg])
        #expect(verified.status == 0, "\(verified.err)")
        #expect(FileManager.default.fileExists(atPath: xdg + "/voteledger/\(id).head"))
        let explicit = election.root + "/state"
        let again = try VoteCLI.run(
            ["verify", "--ledger", election.ledger], environment: ["VOTE_STATE_DIR": explicit, "XDG_STATE_HOME": xdg])
        #expect(again.status == 0, "\(again.err)")
        #expect(FileManager.default.fileExists(atPath: explicit + "/\(id).head"))
    }
}
