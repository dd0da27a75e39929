import Election
import FileStore
import Foundation
import Ledger
import Testing
import VoteLedger

/// Every replay that counts applies the rules `vote verify` does: a tally, an export or a server never
/// counts an event the rules refuse, and on a ledger that breaks one they refuse with verify's reason and
/// exit code.
@Suite struct RuleReplayTests {
    /// `vote tally` and `vote export` on every committed vector whose ledger breaks an election rule or the
    /// encoding of an election event (replayed from the genesis block: the vectors hold no snapshot) fail
    /// exactly as `vote verify` does, in one line.
    @Test func tallyAndExportRefuseEveryRuleBreakingVector() throws {
        let index = try ElectionVectorTests.index()
        let broken = index.ledgers.filter { ["rule", "event"].contains($0.expect.failure) }
        #expect(broken.count > 60)
        for vector in broken {
            for command in [["tally", "--place", "1"], ["export", "--place", "1"]] {
                let result = try ElectionVectors.vote(
                    command + ["--ledger", vector.path], in: ElectionVectorTests.vectors)
                #expect(
                    result.status == vector.expect.exit, "\(vector.name): vote \(command[0]) exits \(result.status)")
                #expect(
                    ElectionVectors.message(result) == vector.expect.message,
                    "\(vector.name): vote \(command[0]) says \(result.err)")
                #expect(result.out.isEmpty && result.err.split(separator: "\n").count == 1, "\(vector.name)")
            }
        }
    }

    /// A second vote with a used token, appended (signed by the authority, bypassing the contract) after the
    /// block a snapshot was saved at: the tally, the export and `vote serve` refuse the ledger with the
    /// reason and exit code `vote verify` gives, rather than count the vote. The snapshot stands in for the
    /// blocks before it, so the token's first vote is found there.
    @Test func replayFromSnapshotRefusesADoubleVote() throws {
        let election = try TestElection()
        let votingOpens = try election.place()
        try election.ok(["candidate", "register", "--place", "1", "--name", "Alice"])
        try election.ok(["candidate", "register", "--place", "1", "--name", "Bob"])
        let token = try election.authorize("member-1")
        election.advance(to: votingOpens)
        try election.ok(["cast", "--place", "1", "--candidate", "1", "--token", token])
        #expect(FileManager.default.fileExists(atPath: election.ledger + "/snapshot.bin"))
        let counted = try election.ok(["tally", "--place", "1", "--csv"])
        #expect(counted.contains("1,Alice,1,"), "\(counted)")

        let tokenHash = try #require(VotingToken(typed: token)).hash
        let store = try FileBlockStore.open(at: election.ledger, log: { _ in })
        let again = ElectionEvent.voteCast(place: 1, candidate: 2, tokenHash: tokenHash).ledgerEvent
        try store.append([HashedEvent(again)], timestamp: store.head.timestamp + 1)
        let height = store.head.height
        store.close()

        let verify = try election.vote(["verify"])
        let reason = "integrity failure: block \(height), event 0 breaks the rules: this token has already voted"
        #expect(verify.status == 3 && ElectionVectors.message(verify) == reason, "\(verify.err)")
        var results = [
            try election.vote(["tally", "--place", "1"]), try election.vote(["tally", "--place", "1", "--json"]),
            try election.vote(["export", "--place", "1", "--format", "csv"]),
        ]
        // `vote serve` must refuse to start; should it print its "listening on" line instead, it is stopped.
        // (The core-only build, VOTE_WITHOUT_SERVER=1, has no vote-serve to try.)
        if VoteCLI.serverBuilt {
            let (server, out, err) = try election.start([
                "serve", "--listen", "127.0.0.1:0", "--admin-token-file", election.root + "/admin.token",
            ])
            let listening = out.fileHandleForReading.availableData  // empty: it exited without listening
            if !listening.isEmpty { server.terminate() }
            results.append(VoteCLI.finish(server, out, err))
            #expect(listening.isEmpty, "vote serve started: \(String(decoding: listening, as: UTF8.self))")
        }
        for result in results {
            #expect(result.status == 3 && ElectionVectors.message(result) == reason, "\(result.err)")
            #expect(result.out.isEmpty, "\(result.out)")
        }
    }
}
