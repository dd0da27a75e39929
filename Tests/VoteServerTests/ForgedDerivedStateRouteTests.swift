import Foundation
import TestSupport
import Testing

@testable import Election

/// The tables a PostgreSQL ledger derives from its chain (`vote_merkle_groups`, `vote_roll`), changed by someone
/// who can write the database but holds no key: a changed tree group costs no receipt and fakes no fork, a changed
/// roll row refuses only its own vote, `vote verify` names each, and `--rebuild-derived` rewrites them.
@Suite(.serialized, .timeLimit(.minutes(10))) struct DerivedTablesTests {
    /// Runs `sql` in the database at `url`; what psql printed (unaligned, no headers), trimmed.
    static func psql(_ url: String, _ sql: String) throws -> String {
        let run = try runToCompletion("/usr/bin/psql", [url, "-qAtc", sql])
        try #require(run.status == 0, "psql: \(run.err)")
        return run.out.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A JSON object printed by `vote --json`.
    static func json(_ text: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
    }

    /// `vote verify --json` on `location`: its derived items by name, each with its verdict.
    static func derived(_ location: [String]) throws -> [String: String] {
        let run = try VoteBinary.run(["verify", "--json"] + location, clockOffset: hour + 1000)
        try #require(run.status == 0, "vote verify: \(run.err)")
        let items = Self.json(run.out)["derived"] as? [[String: Any]] ?? []
        return Dictionary(
            uniqueKeysWithValues: items.map { ($0["name"] as? String ?? "", $0["verdict"] as? String ?? "") })
    }

    @Test func aChangedTreeGroupCostsNoReceiptAndFakesNoFork() async throws {
        let database = try PostgresServer()
        let election = try ProcessLedger("Groups Union", database: database.url)
        // More than 1024 events, so the first group of the tree has its head in vote_merkle_groups.
        let (_, tokens) = try await election.register(
            candidates: ["Ada", "Grace"], voters: (1...1100).map { "m-\($0)" })
        #expect(try Self.psql(database.url, "SELECT count(*) FROM vote_merkle_groups") == "1")
        let voting = try election.serve(offset: hour + 1000)
        let cast = try await fetch(
            voting.port, "/api/v1/places/1/votes", .post, headers: jsonHeaders,
            body: body(["candidate": 2, "token": tokens[0]]))
        #expect(cast.status == .created)
        #expect(voting.stop().status == 0)
        let receipt = election.root + "/receipt.tlog-proof"
        try (object(cast.body)["receipt"] as? String ?? "").write(toFile: receipt, atomically: true, encoding: .utf8)
        #expect(try Self.derived(election.location) == ["tree groups": "sound", "voter roll": "sound"])

        _ = try Self.psql(database.url, "UPDATE vote_merkle_groups SET head = sha256(head) WHERE group_index = 0")
        let audited = try VoteBinary.run(["audit", receipt] + election.location, clockOffset: hour + 1000)
        #expect(audited.status == 0, "\(audited.err)")
        // The head verified before is remembered: the check that the ledger still extends it passes.
        #expect(try Self.derived(election.location) == ["tree groups": "forged", "voter roll": "sound"])
        let rebuilt = try VoteBinary.run(
            ["verify", "--rebuild-derived"] + election.location, clockOffset: hour + 1000)
        #expect(rebuilt.status == 0, "\(rebuilt.err)")
        #expect(rebuilt.err.contains("tree groups vote_merkle_groups is forged"), "\(rebuilt.err)")
        #expect(try Self.derived(election.location) == ["tree groups": "sound", "voter roll": "sound"])
    }

    @Test func aChangedRollRowRefusesOnlyItsOwnVote() async throws {
        let database = try PostgresServer()
        let election = try ProcessLedger("Roll Union", database: database.url)
        let (_, tokens) = try await election.register(
            candidates: ["Ada", "Grace"], voters: (1...6).map { "m-\($0)" })
        // One token's row says it voted; the chain says it did not.
        _ = try Self.psql(
            database.url,
            "UPDATE vote_roll SET entry = 2 WHERE (place, kind, digest) = (SELECT place, kind, digest FROM vote_roll WHERE kind = 2 LIMIT 1)"
        )
        #expect(try Self.derived(election.location)["voter roll"] == "forged")

        let votes = election.root + "/votes.txt"
        try tokens.map { "\($0),1" }.joined(separator: "\n").write(toFile: votes, atomically: true, encoding: .utf8)
        let cast = try VoteBinary.run(
            ["cast", "--place", "1", "--from", votes, "--batch", "20"] + election.location, clockOffset: hour + 1000)
        let refused = cast.err.split(separator: "\n").filter { $0.contains("changed outside the ledger") }
        #expect(refused.count == 1, "\(cast.err)")
        let tally = try VoteBinary.run(
            ["tally", "--place", "1", "--json"] + election.location, clockOffset: hour + 1000)
        #expect((Self.json(tally.out)["turnout"] as? [String: Any])?["voted"] as? Int == 5, "\(tally.out) \(tally.err)")

        let rebuilt = try VoteBinary.run(
            ["verify", "--rebuild-derived"] + election.location, clockOffset: hour + 1000)
        #expect(rebuilt.status == 0, "\(rebuilt.err)")
        #expect(try Self.derived(election.location) == ["tree groups": "sound", "voter roll": "sound"])
        // The refused voter votes once the row is what the chain says.
        let again = try VoteBinary.run(
            ["cast", "--place", "1", "--from", votes, "--batch", "20"] + election.location, clockOffset: hour + 1000)
        #expect(again.err.split(separator: "\n").filter { $0.contains("already voted") }.count == 5, "\(again.err)")
        let after = try VoteBinary.run(
            ["tally", "--place", "1", "--json"] + election.location, clockOffset: hour + 1000)
        #expect((Self.json(after.out)["turnout"] as? [String: Any])?["voted"] as? Int == 6, "\(after.out)")
    }
}

/// A file ledger's `snapshot.bin` forged by someone without the key (two candidates' counters swapped): `vote serve`
/// opens past it, and the public tally route shows the chain's counts.
@Suite(.timeLimit(.minutes(10))) struct ForgedSnapshotRouteTests {
    @Test func theTallyRouteNeverShowsAForgedCount() async throws {
        let election = try ProcessLedger("Snapshot Union")
        let (_, tokens) = try await election.register(candidates: ["Ada", "Grace"], voters: ["m-1", "m-2", "m-3"])
        let voting = try election.serve(offset: hour + 1000)
        for (token, candidate) in zip(tokens, [1, 2, 2]) {
            let cast = try await fetch(
                voting.port, "/api/v1/places/1/votes", .post, headers: jsonHeaders,
                body: body(["candidate": candidate, "token": token]))
            #expect(cast.status == .created)
        }
        #expect(voting.stop().status == 0)

        let path = election.ledger + "/snapshot.bin"
        let stored = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        var snapshot = try Snapshot(decoding: Array(stored.dropLast(32)))
        let votes = snapshot.state.places[0].candidates.map(\.votes)
        #expect(votes == [1, 2])
        snapshot.state.places[0].candidates[0].votes = votes[1]
        snapshot.state.places[0].candidates[1].votes = votes[0]
        try Data(snapshot.encoded + stored.suffix(32)).write(to: URL(fileURLWithPath: path))

        let again = try election.serve(offset: hour + 1000)
        let tally = try await fetch(again.port, "/api/v1/places/1/tally", .get)
        #expect(again.stop().status == 0)
        let rows = object(tally.body)["tally"] as? [[String: Any]] ?? []
        #expect(rows.map { $0["votes"] as? Int ?? -1 } == [1, 2], "\(object(tally.body))")
    }
}
