import Foundation
import Testing

/// `--json` on every write command: the new ids (and the token), and where the event went (block, leaf
/// index, leaf hash), each checked against the ledger's own event export.
@Suite struct WriteJSONTests {
    /// The object `vote … --json` printed, after checking it is the only line.
    static func object(_ out: String) throws -> [String: Any] {
        #expect(out.hasSuffix("\n") && out.dropLast().split(separator: "\n").count == 1)
        return try #require(try json(out) as? [String: Any])
    }

    /// Whether `recorded`'s height, index and event_hash are those of an event in the ledger.
    static func isInLedger(_ recorded: [String: Any], _ election: TestElection) throws -> Bool {
        let lines = try election.ok(["export", "--events"]).split(separator: "\n")
        let events = try lines.map { try #require(try json(String($0)) as? [String: Any]) }
        guard let index = recorded["index"] as? Int, let hash = recorded["event_hash"] as? String, hash.count == 64
        else { return false }
        return events.contains {
            $0["index"] as? Int == index && $0["hash"] as? String == hash
                && $0["height"] as? Int == recorded["height"] as? Int
        }
    }

    @Test func everyWriteCommandReportsItsEvent() throws {
        let election = try TestElection()
        let created = try WriteJSONTests.object(
            try election.ok([
                "place", "create", "--name", "Board", "--registration", "now/+1h", "--voting", "+1h/+2h",
                "--max-candidates", "5", "--json",
            ]))
        #expect(
            created["place"] as? Int == 1 && created["name"] as? String == "Board"
                && created["max_candidates"] as? Int == 5)
        #expect(
            (created["voting"] as? [String: Any])?["start"] is String
                && (created["registration"] as? [String: Any])?["end"] is String)
        #expect(try WriteJSONTests.isInLedger(created, election))

        let ada = try WriteJSONTests.object(
            try election.ok(["candidate", "register", "--place", "1", "--name", "Ada", "--json"]))
        let bo = try WriteJSONTests.object(
            try election.ok(["candidate", "register", "--place", "1", "--name", "Bo", "--json"]))
        #expect(ada["place"] as? Int == 1 && ada["candidate"] as? Int == 1 && ada["name"] as? String == "Ada")
        #expect(bo["candidate"] as? Int == 2)
        let withdrawn = try WriteJSONTests.object(
            try election.ok(["candidate", "withdraw", "--place", "1", "--candidate", "2", "--json"]))
        #expect(withdrawn["place"] as? Int == 1 && withdrawn["candidate"] as? Int == 2 && withdrawn["name"] == nil)
        #expect(try WriteJSONTests.isInLedger(ada, election) && WriteJSONTests.isInLedger(withdrawn, election))

        let authorized = try WriteJSONTests.object(
            try election.ok(["voter", "authorize", "--place", "1", "--voter", "m-1", "--json"]))
        let token = try #require(authorized["token"] as? String)
        SecretsLog.record(token)
        #expect(authorized["place"] as? Int == 1 && token.count == 41)
        #expect(try WriteJSONTests.isInLedger(authorized, election))

        election.advance(to: election.now.addingTimeInterval(3600))
        try election.ok(["cast", "--place", "1", "--candidate", "1", "--token", token])
        election.advance(to: election.now.addingTimeInterval(3600))
        let closed = try WriteJSONTests.object(try election.ok(["place", "close", "--place", "1", "--json"]))
        #expect(closed["place"] as? Int == 1)
        #expect((closed["tally"] as? [[String: Any]])?.map { $0["votes"] as? Int } == [1, 0])
        #expect((closed["tally"] as? [[String: Any]])?.first?["name"] as? String == "Ada")
        #expect(
            (closed["turnout"] as? [String: Any])?["voted"] as? Int == 1
                && (closed["turnout"] as? [String: Any])?["authorized"] as? Int == 1)
        #expect(closed["tree_size"] as? Int == (closed["index"] as? Int))
        #expect(try WriteJSONTests.isInLedger(closed, election))

        // Bulk authorisation writes its tokens to a file: --json does not go with it.
        let voters = election.write("voters.txt", "m-2\n")
        let bulk = try election.vote([
            "voter", "authorize", "--place", "1", "--from", voters, "--tokens-out", election.root + "/t.csv", "--json",
        ])
        #expect(bulk.status == 2 && bulk.err.contains("--json goes with --voter"))
    }
}
