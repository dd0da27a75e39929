import Foundation
import TestSupport
import Testing
import VoteLedger

/// A ledger moved from a directory to a PostgreSQL database and back comes out byte for byte and verifies
/// identically; the readers (`verify`, `tally`, `audit`, `export`) answer alike from the database and from a
/// read-only streaming replica of it.
@Suite(.serialized, .timeLimit(.minutes(10))) struct DatabaseLedgerTests {
    /// `vote verify --json` without its timing, the bytes the store read, which count the store's own framing (a
    /// directory's segment headers and frames; a database's blocks alone), and the derived state, which each store
    /// keeps its own way (a directory's files, a database's tables): everything it says of the ledger.
    static func verified(_ location: [String]) throws -> String {
        let run = try VoteBinary.run(["verify", "--json"] + location, clockOffset: hour + 1000)
        #expect(run.status == 0, "\(run.err)")
        var fields = try #require(try JSONSerialization.jsonObject(with: Data(run.out.utf8)) as? [String: Any])
        for key in ["seconds", "bytes", "derived", "rebuilt"] { fields[key] = nil }
        return String(decoding: try JSONSerialization.data(withJSONObject: fields, options: .sortedKeys), as: UTF8.self)
    }

    /// The segments of a ledger directory, concatenated in order.
    static func segments(_ directory: String) throws -> Data {
        try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".vlseg") }.sorted()
            .reduce(into: Data()) { $0 += FileManager.default.contents(atPath: directory + "/" + $1)! }
    }

    @Test func aLedgerMovesToTheDatabaseAndBackByteForByte() async throws {
        let election = try ProcessLedger("Moving Union")
        let (_, tokens) = try await election.register(candidates: ["Ada", "Grace"], voters: ["m-1", "m-2", "m-3"])
        let voting = try election.serve(offset: hour + 1000)
        for token in tokens.prefix(2) {
            let cast = try await fetch(
                voting.port, "/api/v1/places/1/votes", .post, headers: jsonHeaders,
                body: body(["candidate": 1, "token": token]))
            #expect(cast.status == .created)
        }
        #expect(voting.stop().status == 0)
        let keys = ["--keys", election.ledger + ".keys"]

        let database = try PostgresServer()
        let there = try VoteBinary.run(["copy", "--from", election.ledger, "--to", database.url] + keys)
        #expect(there.status == 0, "\(there.err)")
        let back = election.root + "/back"
        let again = try VoteBinary.run(["copy", "--from", database.url, "--to", back] + keys)
        #expect(again.status == 0, "\(again.err)")
        #expect(try DatabaseLedgerTests.segments(back) == DatabaseLedgerTests.segments(election.ledger))
        let fromDirectory = try DatabaseLedgerTests.verified(["--ledger", election.ledger])
        let fromDatabase = try DatabaseLedgerTests.verified(["--store", database.url])
        #expect(fromDatabase == fromDirectory, "\(fromDatabase) \(fromDirectory)")
        #expect(try DatabaseLedgerTests.verified(["--ledger", back]) == fromDirectory)

        // A database that holds a ledger is not written over.
        let onto = try VoteBinary.run(["copy", "--from", election.ledger, "--to", database.url] + keys)
        #expect(onto.status != 0)
        #expect(onto.err.contains("holds a ledger"), "\(onto.err)")
    }

    @Test func readersAnswerAlikeFromTheDatabaseAndItsStandby() async throws {
        let database = try PostgresServer()
        let election = try ProcessLedger("Replica Union", database: database.url)
        let (_, tokens) = try await election.register(candidates: ["Ada", "Grace"], voters: ["m-1", "m-2"])
        let voting = try election.serve(offset: hour + 1000)
        let cast = try await fetch(
            voting.port, "/api/v1/places/1/votes", .post, headers: jsonHeaders,
            body: body(["candidate": 2, "token": tokens[0]]))
        #expect(cast.status == .created)
        let receipt = election.root + "/receipt.tlog-proof"
        try (object(cast.body)["receipt"] as? String ?? "").write(toFile: receipt, atomically: true, encoding: .utf8)
        #expect(voting.stop().status == 0)

        let standby = try PostgresServer(standbyOf: database)
        let head = try DatabaseLedgerTests.verified(election.location)
        // The standby replays the primary's log: wait until it holds the same head.
        try await waitFor(
            "the standby to hold the primary's head \(head)", every: .milliseconds(50),
            read: { try DatabaseLedgerTests.verified(["--store", standby.url]) }, until: { $0 == head })
        for command in [["tally", "--place", "1", "--json"], ["export", "--place", "1"], ["audit", receipt]] {
            let primary = try VoteBinary.run(command + election.location, clockOffset: hour + 1000)
            let replica = try VoteBinary.run(command + ["--store", standby.url], clockOffset: hour + 1000)
            #expect(primary.status == 0, "\(command): \(primary.err)")
            #expect(replica.status == primary.status && replica.out == primary.out, "\(command): \(replica.err)")
        }
        // Writing to the standby is refused in one line, nothing changes.
        let refused = try VoteBinary.run(
            ["candidate", "register", "--place", "1", "--name", "X", "--store", standby.url]
                + election.location.suffix(2))
        #expect(refused.status != 0)
        #expect(refused.err.split(separator: "\n").count == 1, "\(refused.err)")
    }

    /// `vote serve` on a database runs the store's connections as a service of its lifecycle: stopped by a signal,
    /// or failing to listen, it answers what is in flight, writes its last block, closes the ledger and then ends
    /// each connection as a client should (a Terminate message). A connection the process just drops when it exits is one the
    /// database logs, at DEBUG1, as an "unexpected EOF on client connection" (postgres-nio's `close()` drops it
    /// too: only its graceful close says goodbye).
    @Test func aStoppedServerEndsItsDatabaseConnections() async throws {
        let database = try PostgresServer(settings: ["log_min_messages=debug1", "log_disconnections=on"])
        let election = try ProcessLedger("Closing Union", database: database.url)
        let (_, tokens) = try await election.register(candidates: ["Ada", "Grace"], voters: ["m-1", "m-2"])
        let voting = try election.serve(offset: hour + 1000)
        for token in tokens {
            let cast = try await fetch(
                voting.port, "/api/v1/places/1/votes", .post, headers: jsonHeaders,
                body: body(["candidate": 1, "token": token]))
            #expect(cast.status == .created)
        }
        let log = database.directory.child("pg") + "/server.log"
        let before = try FileManager.default.attributesOfItem(atPath: log)[.size] as! Int
        // A second server that cannot listen (the first holds its address) shuts down the same way: it has
        // opened the ledger, so it closes it, and then its connections, and says why it stopped.
        let busy = try VoteBinary.run(
            ["serve", "--listen", "127.0.0.1:\(voting.port)"] + election.location, clockOffset: hour + 1000)
        #expect(busy.status != 0 && busy.err.contains("the server stopped"), "\(busy.status) \(busy.err)")
        let stopped = voting.stop()
        #expect(stopped.status == 0, "\(stopped.err)")
        // A session's end is logged by its backend as it goes: wait until none but this query's is left.
        try await waitFor(
            "the server's sessions to end", every: .milliseconds(50),
            read: {
                try runToCompletion(
                    "/usr/bin/psql",
                    [
                        database.url, "-tAc",
                        "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()",
                    ]
                ).out.trimmingCharacters(in: .whitespacesAndNewlines)
            }, until: { $0 == "0" })
        let during = try #require(FileManager.default.contents(atPath: log)).dropFirst(before)
        let lines = String(decoding: during, as: UTF8.self).split(separator: "\n")
        let ended = lines.filter { $0.contains("disconnection: session time") }
        #expect(!ended.isEmpty, "no session of the server's ended as it stopped: \(lines.prefix(5))")
        let dropped = lines.filter { $0.contains("unexpected EOF on client connection") }
        #expect(dropped.isEmpty, "\(dropped.count) of \(ended.count) sessions dropped: \(dropped.prefix(3))")
        // And nothing was lost: both votes are counted.
        let tally = try VoteBinary.run(
            ["tally", "--place", "1", "--json"] + election.location, clockOffset: hour + 1000)
        let counted = try JSONSerialization.jsonObject(with: Data(tally.out.utf8)) as? [String: Any]
        #expect((counted?["turnout"] as? [String: Any])?["voted"] as? Int == 2, "\(tally.out) \(tally.err)")
    }
}
