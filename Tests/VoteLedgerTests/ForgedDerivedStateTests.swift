import FileDriver
import FileStore
import Foundation
import Ledger
import TestSupport
import Testing

@testable import Election
@testable import VoteLedger

/// Someone who can write the ledger directory but holds no key forges the derived state a writer keeps there
/// (`snapshot.bin`, `voters.idx`): no count shown, exported or certified is ever the forged one, the voter
/// index lets no second vote in, and `vote verify` names what was forged and rebuilds it on request.
@Suite struct ForgedDerivedStateTests {
    /// One forgery of the snapshot's counts: what it does to a decoded state.
    struct Forgery: CustomStringConvertible, Sendable {
        let description: String
        let change: @Sendable (inout PlaceState) -> Void
    }

    /// Every counter the snapshot holds, changed one at a time, and two counters swapped.
    static let forgeries: [Forgery] = [
        Forgery(description: "a candidate's votes") { $0.candidates[0].votes = 1000 },
        Forgery(description: "two candidates' votes swapped") {
            ($0.candidates[0].votes, $0.candidates[1].votes) = ($0.candidates[1].votes, $0.candidates[0].votes)
        },
        Forgery(description: "authorised voters") { $0.authorized = 999 },
        Forgery(description: "voters who voted") { $0.voted = 999 },
        Forgery(description: "credentials issued") { $0.issued = 7 },
    ]

    /// An election on the command line: place 1 with two candidates, three voters; candidate 1 has one vote,
    /// candidate 2 two. Returns the election, its voting tokens and when voting closes.
    static func election() throws -> (TestElection, [String], Date) {
        let election = try TestElection()
        let opens = try election.place(registration: 3600, voting: 3600)
        try election.ok(["candidate", "register", "--place", "1", "--name", "Ada"])
        try election.ok(["candidate", "register", "--place", "1", "--name", "Ben"])
        let tokens = try (1...3).map { try election.authorize("member-\($0)") }
        election.advance(to: opens)
        try election.ok(["cast", "--place", "1", "--candidate", "1", "--token", tokens[0]])
        try election.ok(["cast", "--place", "1", "--candidate", "2", "--token", tokens[1]])
        try election.ok(["cast", "--place", "1", "--candidate", "2", "--token", tokens[2]])
        return (election, tokens, opens.addingTimeInterval(3600))
    }

    /// The votes of candidates 1 and 2 and the turnout (authorised, voted) as `vote tally --json` shows them.
    static func tally(_ election: TestElection) throws -> [Int] {
        let tally = try #require(try json(try election.ok(["tally", "--place", "1", "--json"])) as? [String: Any])
        let rows = try #require(tally["tally"] as? [[String: Any]])
        let turnout = try #require(tally["turnout"] as? [String: Any])
        return rows.map { $0["votes"] as? Int ?? -1 } + [
            turnout["authorized"] as? Int ?? -1, turnout["voted"] as? Int ?? -1,
        ]
    }

    /// The votes per candidate `vote export --place 1` shows (its JSON), in candidate order.
    static func exported(_ election: TestElection) throws -> [Int] {
        let export = try #require(try json(try election.ok(["export", "--place", "1"])) as? [String: Any])
        let rows = try #require(export["tally"] as? [[String: Any]], "\(export)")
        return rows.map { $0["votes"] as? Int ?? -1 }
    }

    /// Writes `state`'s snapshot over `snapshot.bin`, with the seal it had (a forger cannot make a new one).
    static func forge(_ election: TestElection, _ forgery: Forgery) throws {
        let path = election.ledger + "/snapshot.bin"
        let stored = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let body = Array(stored.dropLast(DerivedStateKey.sealSize))
        var snapshot = try Snapshot(decoding: body)
        forgery.change(&snapshot.state.places[0])
        let forged = snapshot.encoded + stored.suffix(DerivedStateKey.sealSize)
        try Data(forged).write(to: URL(fileURLWithPath: path))
    }

    /// Each counter of the snapshot forged in turn: tally and export show the chain's counts, `vote verify`
    /// names the snapshot forged, and `--rebuild-derived` replaces it with a sealed one; then the results are
    /// certified over a forged snapshot with the chain's counts.
    @Test func aForgedSnapshotNeverDecidesACount() throws {
        let (election, _, closes) = try Self.election()
        let truth = try Self.tally(election)
        #expect(truth == [1, 2, 3, 3])
        for forgery in Self.forgeries {
            try Self.forge(election, forgery)
            #expect(try Self.tally(election) == truth, "tally after forging \(forgery)")
            #expect(try Self.exported(election) == [1, 2], "export after forging \(forgery)")
            let verified = try #require(try json(try election.ok(["verify", "--json"])) as? [String: Any])
            let derived = try #require(verified["derived"] as? [[String: Any]])
            #expect(derived.first { $0["name"] as? String == "snapshot" }?["verdict"] as? String == "forged")
        }
        let rebuilt = try election.ok(["verify", "--rebuild-derived"])
        #expect(rebuilt.contains("derived state: snapshot forged, rebuilt"), "\(rebuilt)")
        #expect(try election.ok(["verify"]).contains("derived state: snapshot sound at block"))

        try Self.forge(election, Self.forgeries[1])
        election.advance(to: closes)
        try election.ok(["place", "close", "--place", "1"])
        let log = try election.ok(["log"])
        #expect(
            log.contains("results of place 1 certified over") && log.contains(": 1: 1, 2: 2; 3 of 3 voted"), "\(log)")
        try election.ok(["verify"])
    }

    /// A snapshot an earlier version saved, as an upgrade finds it (an earlier layout, unsealed as before seals
    /// existed, or sealed by the ledger's writer): `vote verify` calls it stale, not forged, and the counts come
    /// from the chain; an earlier layout without the ledger's seal, from after seals existed, is forged.
    @Test func anEarlierVersionsSnapshotIsStaleNotForged() throws {
        let (election, _, _) = try Self.election()
        let truth = try Self.tally(election)
        let path = election.ledger + "/snapshot.bin"
        try Data(Array("VLSNAP05".utf8) + [UInt8](repeating: 7, count: 120)).write(to: URL(fileURLWithPath: path))
        #expect(try Self.tally(election) == truth)
        let verified = try #require(try json(try election.ok(["verify", "--json"])) as? [String: Any])
        let derived = try #require(verified["derived"] as? [[String: Any]])
        let snapshot = try #require(derived.first { $0["name"] as? String == "snapshot" })
        #expect(snapshot["verdict"] as? String == "stale", "\(snapshot)")
        #expect((snapshot["reason"] as? String)?.contains("earlier layout (VLSNAP05)") == true, "\(snapshot)")
        // A later layout sealed under the ledger's key (an earlier version's writer) is stale too; the same bytes
        // unsealed are not an earlier version's: forged.
        let later = Array("VLSNAP08".utf8) + [UInt8](repeating: 7, count: 120)
        let keys = KeyDirectory(defaultFor: election.ledger)
        let ledgerID = try FileBlockSource(path: election.ledger).genesis.ledgerID
        let sealed = try FileVoterSecret(keys: keys).derivedStateKey(ledgerID: ledgerID).sealed(later)
        for (bytes, verdict) in [(sealed, "stale"), (later + [UInt8](repeating: 0, count: 32), "forged")] {
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let checked = try #require(try json(try election.ok(["verify", "--json"])) as? [String: Any])
            let item = try #require(
                (checked["derived"] as? [[String: Any]])?.first { $0["name"] as? String == "snapshot" })
            #expect(item["verdict"] as? String == verdict, "\(item)")
        }
        let rebuilt = try election.ok(["verify", "--rebuild-derived"])
        #expect(rebuilt.contains("derived state: snapshot forged, rebuilt"), "\(rebuilt)")
        #expect(try election.ok(["verify"]).contains("derived state: snapshot sound at block"))
    }

    /// A voter index forged to say that voters who voted did not (its slots from before their votes under the
    /// header of after): the writer does not use it, so the second vote is refused, and `vote verify` names it.
    @Test func aForgedVoterIndexLetsNoSecondVoteIn() throws {
        let election = try TestElection()
        let opens = try election.place(registration: 3600, voting: 3600)
        try election.ok(["candidate", "register", "--place", "1", "--name", "Ada"])
        let tokens = try (1...3).map { try election.authorize("member-\($0)") }
        election.advance(to: opens)
        let index = election.ledger + "/voters.idx"
        let before = try Data(contentsOf: URL(fileURLWithPath: index))
        for token in tokens { try election.ok(["cast", "--place", "1", "--candidate", "1", "--token", token]) }
        let after = try Data(contentsOf: URL(fileURLWithPath: index))
        try #require(before.count == after.count)
        // The header that says "closed at the head", over the slots of before the votes.
        try (after.prefix(VoterIndex.headerSize) + before.dropFirst(VoterIndex.headerSize))
            .write(to: URL(fileURLWithPath: index))
        let verified = try #require(try json(try election.ok(["verify", "--json"])) as? [String: Any])
        let derived = try #require(verified["derived"] as? [[String: Any]])
        #expect(derived.first { $0["name"] as? String == "voter index" }?["verdict"] as? String == "forged")

        let second = try election.vote(["cast", "--place", "1", "--candidate", "1", "--token", tokens[0]])
        #expect(second.status == 1 && second.err.contains("already voted"), "\(second.err)")
        #expect(second.err.contains("voters.idx does not carry this ledger's seal"), "\(second.err)")
        #expect(try Self.tally(election) == [3, 3, 3])
        try election.ok(["verify"])
    }

    /// A snapshot forged by a holder of the key (a bug, or the key directory lost to the forger) reaches the
    /// writer's state, but certification recounts the log and refuses to sign it.
    @Test func certificationRecountsTheLog() throws {
        let path = NSTemporaryDirectory() + "forged-\(UUID().uuidString)"
        defer { removeLedger(path) }
        let (ledger, _) = try ServiceTests.election(at: path, voters: 4, votes: 3)
        ledger.close()
        let source = try FileBlockSource(path: path)
        let key = try FileVoterSecret(keys: KeyDirectory(defaultFor: path))
            .derivedStateKey(ledgerID: source.genesis.ledgerID)
        let derived = FileDerivedStore(ledger: path)
        var snapshot = try #require(ElectionView.savedSnapshot(in: derived, key: key))
        Self.forgeries[1].change(&snapshot.state.places[0])
        try derived.write(.snapshot, key.sealed(snapshot.encoded))

        let reopened = try VoteLedgerService.openLedger(StoreConfiguration(.file(path: path)))
        defer { reopened.close() }
        #expect(reopened.state.place(1)?.candidates.map(\.votes) == [1, 2])
        #expect(throws: VoteError.self) {
            _ = try reopened.submit(.certifyResults(place: 1, treeSize: 0), now: ServiceTests.t0 + 200_000)
        }
        #expect(reopened.state.place(1)?.certified == nil)
    }
}
