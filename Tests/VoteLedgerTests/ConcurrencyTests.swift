import Foundation
import Testing

/// Many processes at once on one ledger: each vote counts exactly once, and readers running throughout
/// only ever see consistent prefixes.
@Suite(.serialized) struct ConcurrencyTests {
    /// Starts `vote` processes for `files` at the same moment; returns their results once all finished,
    /// while a reader runs `vote verify` and `vote tally` until then.
    static func castConcurrently(
        _ election: TestElection, place: Int, files: [String]
    ) throws
        -> (results: [VoteCLI.Result], readerChecks: Int, readerFailures: [String])
    {
        let started = try files.map {
            try election.start(["cast", "--place", String(place), "--from", $0, "--batch", "100"])
        }
        var checks = 0
        var failures: [String] = []
        var lastVoted = -1
        while started.contains(where: { $0.0.isRunning }) {
            let verify = try election.vote(["verify"])
            if verify.status != 0 { failures.append("verify: \(verify.err)") }
            let tally = try election.vote(["tally", "--place", String(place), "--json"])
            if let document = try? json(tally.out) as? [String: Any],
                let voted = (document["turnout"] as? [String: Any])?["voted"] as? Int,
                let rows = document["tally"] as? [[String: Any]]
            {
                if voted < lastVoted { failures.append("voted went back from \(lastVoted) to \(voted)") }
                if rows.compactMap({ $0["votes"] as? Int }).reduce(0, +) != voted {
                    failures.append("tally does not add up")
                }
                lastVoted = voted
            } else {
                failures.append("tally: \(tally.err)")
            }
            checks += 1
        }
        return (started.map { VoteCLI.finish($0.0, $0.1, $0.2) }, checks, failures)
    }

    /// Authorises `count` voters in `place` and returns their tokens.
    static func tokens(_ election: TestElection, place: Int, count: Int, prefix: String) throws -> [String] {
        let voters = election.write("\(prefix).txt", (0..<count).map { "\(prefix)-\($0)" }.joined(separator: "\n"))
        let out = election.root + "/\(prefix)-tokens.csv"
        try election.ok(["voter", "authorize", "--place", String(place), "--from", voters, "--tokens-out", out])
        let tokens = try String(contentsOfFile: out, encoding: .utf8).split(separator: "\n").map {
            String($0.split(separator: ",")[1])
        }
        tokens.prefix(20).forEach(SecretsLog.record)
        return tokens
    }

    /// 8 processes casting 1,000 distinct tokens each: all 8,000 votes accepted exactly once.
    @Test func distinctTokensFromEightProcesses() throws {
        let election = try TestElection()
        let opens = try election.place()
        try election.ok(["candidate", "register", "--place", "1", "--name", "Alice"])
        try election.ok(["candidate", "register", "--place", "1", "--name", "Bob"])
        let tokens = try ConcurrencyTests.tokens(election, place: 1, count: 8000, prefix: "distinct")
        let files = (0..<8).map { process in
            election.write(
                "votes-\(process).txt",
                tokens[process * 1000..<(process + 1) * 1000].enumerated()
                    .map { "\($1),\($0 % 2 + 1)" }.joined(separator: "\n"))
        }
        election.advance(to: opens)
        let run = try ConcurrencyTests.castConcurrently(election, place: 1, files: files)
        for result in run.results {
            #expect(result.status == 0, "\(result.err)")
            #expect(result.out == "cast 1000 votes in place 1; 0 rejected\n")
        }
        #expect(run.readerFailures.isEmpty, "\(run.readerFailures.prefix(5))")
        #expect(run.readerChecks > 0)
        let tally = try #require(try json(try election.ok(["tally", "--place", "1", "--json"])) as? [String: Any])
        #expect((tally["turnout"] as? [String: Any])?["voted"] as? Int == 8000)
        #expect((tally["tally"] as? [[String: Any]])?.map { $0["votes"] as? Int } == [4000, 4000])
    }

    /// 8 processes casting the same 1,000 tokens: exactly 1,000 accepted, the other 7,000 rejected as
    /// already voted.
    @Test func sameTokensFromEightProcesses() throws {
        let election = try TestElection()
        let opens = try election.place()
        try election.ok(["candidate", "register", "--place", "1", "--name", "Alice"])
        try election.ok(["candidate", "register", "--place", "1", "--name", "Bob"])
        let tokens = try ConcurrencyTests.tokens(election, place: 1, count: 1000, prefix: "same")
        let files = (0..<8).map { process in
            election.write("same-\(process).txt", tokens.map { "\($0),\(process % 2 + 1)" }.joined(separator: "\n"))
        }
        election.advance(to: opens)
        let run = try ConcurrencyTests.castConcurrently(election, place: 1, files: files)
        var accepted = 0
        var rejected = 0
        for result in run.results {
            let summary = result.out.split(separator: " ")
            accepted += Int(summary[1]) ?? -1_000_000
            rejected += result.err.components(separatedBy: "this token has already voted").count - 1
        }
        #expect(accepted == 1000)
        #expect(rejected == 7000)
        #expect(run.readerFailures.isEmpty, "\(run.readerFailures.prefix(5))")
        let tally = try #require(try json(try election.ok(["tally", "--place", "1", "--json"])) as? [String: Any])
        #expect((tally["turnout"] as? [String: Any])?["voted"] as? Int == 1000)
    }
}
