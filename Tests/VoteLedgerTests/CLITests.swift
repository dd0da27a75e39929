import FileStore
import Foundation
import Ledger
import Testing

/// The `vote` binary as a user runs it, as real processes against temporary ledgers.
@Suite struct CLITests {
    /// A whole election: place, candidates, voters, votes (one double vote, one late vote), tally, the
    /// ended-places list with results, status, verify and the log.
    @Test func fullElection() throws {
        let election = try TestElection()
        let opens = try election.place(name: "Board election")
        try election.ok(["candidate", "register", "--place", "1", "--name", "Ada Park", "--pledge", "Fair pay"])
        try election.ok(["candidate", "register", "--place", "1", "--name", "Min-jun Lee"])
        try election.ok(["candidate", "register", "--place", "1", "--name", "Sofia Rossi"])
        try election.ok(["candidate", "withdraw", "--place", "1", "--candidate", "3"])
        let tokens = try ["m-1", "m-2", "m-3", "+821012345678"].map { try election.authorize($0) }
        #expect(tokens.allSatisfy { $0.count == 41 && $0.split(separator: "-").count == 9 })

        let candidates = try #require(
            try json(try election.ok(["candidate", "list", "--place", "1", "--json"])) as? [[String: Any]])
        #expect(candidates.map { $0["name"] as? String } == ["Ada Park", "Min-jun Lee", "Sofia Rossi"])
        #expect(candidates.map { $0["withdrawn"] as? Bool } == [false, false, true])

        election.advance(to: opens)
        let receipt = try #require(
            try json(try election.ok(["cast", "--place", "1", "--candidate", "1", "--token", tokens[0], "--json"]))
                as? [String: Any])
        #expect((receipt["event_hash"] as? String)?.count == 64)
        #expect(receipt["height"] as? Int != nil && receipt["index"] as? Int != nil)
        try election.ok(["cast", "--place", "1", "--candidate", "2", "--token", tokens[1]])
        try election.ok(["cast", "--place", "1", "--candidate", "1", "--token", tokens[2].lowercased()])

        let double = try election.vote(["cast", "--place", "1", "--candidate", "2", "--token", tokens[0]])
        #expect(double.status == 1 && double.err == "vote: this token has already voted\n")
        let withdrawn = try election.vote(["cast", "--place", "1", "--candidate", "3", "--token", tokens[3]])
        #expect(withdrawn.status == 1 && withdrawn.err == "vote: candidate 3 has withdrawn\n")
        #expect(try election.ok(["status", "--place", "1", "--token", tokens[0]]) == "voted\n")
        #expect(try election.ok(["status", "--place", "1", "--token", tokens[3]]) == "not voted\n")

        election.advance(to: opens.addingTimeInterval(3600))
        let late = try election.vote(["cast", "--place", "1", "--candidate", "2", "--token", tokens[3]])
        #expect(late.status == 1 && late.err == "vote: voting in place 1 is not open (the place is ended)\n")

        let tally = try #require(try json(try election.ok(["tally", "--place", "1", "--json"])) as? [String: Any])
        let rows = try #require(tally["tally"] as? [[String: Any]])
        #expect(rows.map { $0["votes"] as? Int } == [2, 1, 0])
        #expect(abs((rows[0]["share"] as? Double ?? 0) - 2.0 / 3.0) < 1e-9)
        let turnout = try #require(tally["turnout"] as? [String: Any])
        #expect(turnout["authorized"] as? Int == 4 && turnout["voted"] as? Int == 3)
        #expect(tally["status"] as? String == "ended")
        #expect(
            try election.ok(["tally", "--place", "1", "--csv"]).hasPrefix(
                "candidate,name,votes,share\n1,Ada Park,2,0.666667\n"))

        let ended = try #require(
            try json(try election.ok(["place", "list", "--status", "ended", "--json"])) as? [[String: Any]])
        #expect(ended.count == 1)
        let results = try #require(ended.first?["results"] as? [String: Any])
        #expect((results["tally"] as? [[String: Any]])?.map { $0["votes"] as? Int } == [2, 1, 0])
        #expect(try election.ok(["place", "list", "--status", "voting"]) == "no places with status voting\n")

        let verify = try #require(try json(try election.ok(["verify", "--json"])) as? [String: Any])
        #expect(verify["ok"] as? Bool == true && verify["places"] as? Int == 1)
        #expect(verify["events"] as? Int == 1 + 1 + 1 + 3 + 1 + 4 + 3)
        let log = try election.ok(["log"])
        #expect(log.contains("  #1  voter secret bound to this ledger (commitment "))
        #expect(log.contains("place 1 created: Board election"))
        #expect(log.contains("vote cast in place 1 for candidate 1"))
        #expect(!log.contains(tokens[0]) && !log.contains("m-1") && !log.contains("821012345678"))
    }

    /// Each rule violation and usage error ends with its documented exit code and one line on stderr,
    /// and writes nothing.
    @Test func rejectionsAreClearAndWriteNothing() throws {
        let election = try TestElection()
        let opens = try election.place(extra: ["--max-candidates", "1"])
        try election.ok(["candidate", "register", "--place", "1", "--name", "Alice"])
        let token = try election.authorize("voter-1")
        let before = try election.fingerprint()

        let cases: [([String], Int32, String)] = [
            (["candidate", "register", "--place", "9", "--name", "Bob"], 1, "place 9 does not exist"),
            (
                ["candidate", "register", "--place", "1", "--name", "ALICE"], 1,
                "a candidate named \"ALICE\" is already registered"
            ),
            (
                ["candidate", "register", "--place", "1", "--name", "Bob"], 1,
                "the place already has its maximum of 1 candidates"
            ),
            (
                ["candidate", "withdraw", "--place", "1", "--candidate", "7"], 1,
                "candidate 7 does not exist in place 1"
            ),
            (["voter", "authorize", "--place", "1", "--voter", "voter-1"], 1, "voter already authorised"),
            (["voter", "authorize", "--place", "1", "--voter", "not@an@id"], 1, "voter identity must be"),
            (
                ["cast", "--place", "1", "--candidate", "1", "--token", token], 1,
                "voting in place 1 is not open (the place is registration)"
            ),
            (["cast", "--place", "1", "--candidate", "1", "--token", "not-a-token"], 1, "the token is malformed"),
            (
                ["status", "--place", "1", "--token", String(repeating: "A", count: 32)], 1,
                "this token is not authorised to vote in place 1"
            ),
            (["place", "show", "4"], 1, "place 4 does not exist"),
            (
                [
                    "place", "create", "--name", "X", "--registration", "2030-01-01T00:00:00/2030-01-02T00:00:00Z",
                    "--voting", "+1d/+2d",
                ], 2, "invalid --registration"
            ),
            (
                ["place", "create", "--name", "X", "--registration", "+2d/+1d", "--voting", "+3d/+4d"], 1,
                "invalid windows: registration must start before it ends"
            ),
            (
                ["place", "create", "--name", "X", "--registration=-1d/now", "--voting", "now/+1d"], 2,
                "invalid --registration"
            ),
            (
                ["place", "create", "--name", "   ", "--registration", "now/+1d", "--voting", "+1d/+2d"], 1,
                "place name must not be empty"
            ),
            (["place", "list", "--status", "finished"], 2, "--status must be one of"),
            (["tally", "--place", "4294967296"], 2, "4294967296"),
            (["cast", "--place", "1"], 2, "give either"),
        ]
        for (arguments, status, message) in cases {
            let result = try election.vote(arguments)
            #expect(result.status == status, "\(arguments): \(result.err)")
            #expect(result.err.hasPrefix("vote: ") && result.err.contains(message), "\(arguments): \(result.err)")
            #expect(result.err.split(separator: "\n").count == 1, "\(arguments): \(result.err)")
        }
        let unknown = try VoteCLI.run(["frobnicate"])
        #expect(unknown.status == 2 && unknown.err.contains("frobnicate"))
        #expect(try election.fingerprint() == before)
        election.advance(to: opens)
        try election.ok(["cast", "--place", "1", "--candidate", "1", "--token", token])
    }

    /// Another writer holding the lock makes a command wait, then fail with exit code 4.
    @Test func busyLedgerExitsWithFour() throws {
        let election = try TestElection()
        let holder = try FileBlockStore.open(at: election.ledger, log: { _ in })
        let result = try election.vote([
            "place", "create", "--name", "X", "--registration", "now/+1d", "--voting", "+1d/+2d",
        ])
        holder.close()
        #expect(result.status == 4)
        #expect(result.err == "vote: ledger is in use by process \(getpid())\n")
    }

    /// Two processes casting the same token at the same moment: exactly one vote counts.
    @Test func simultaneousDoubleVote() throws {
        let election = try TestElection()
        let opens = try election.place()
        try election.ok(["candidate", "register", "--place", "1", "--name", "Alice"])
        try election.ok(["candidate", "register", "--place", "1", "--name", "Bob"])
        let token = try election.authorize("twice")
        election.advance(to: opens)
        for _ in 0..<3 {
            let fresh = try election.authorize(UUID().uuidString.prefix(12).lowercased())
            let a = try election.start(["cast", "--place", "1", "--candidate", "1", "--token", fresh])
            let b = try election.start(["cast", "--place", "1", "--candidate", "2", "--token", fresh])
            let results = [VoteCLI.finish(a.0, a.1, a.2), VoteCLI.finish(b.0, b.1, b.2)]
            #expect(results.map(\.status).sorted() == [0, 1])
            #expect(results.contains { $0.err == "vote: this token has already voted\n" })
        }
        try election.ok(["cast", "--place", "1", "--candidate", "1", "--token", token])
        let tally = try #require(try json(try election.ok(["tally", "--place", "1", "--json"])) as? [String: Any])
        #expect((tally["turnout"] as? [String: Any])?["voted"] as? Int == 4)
    }

    /// Changing one byte of the ledger makes `vote verify` fail with exit code 3 naming the block.
    @Test func verifyFailsAfterTampering() throws {
        let election = try TestElection()
        _ = try election.place()
        try election.ok(["candidate", "register", "--place", "1", "--name", "Alice"])
        try election.ok(["candidate", "register", "--place", "1", "--name", "Bob"])
        try election.ok(["verify"])
        let segment = election.ledger + "/segment-00000000.vlseg"
        var bytes = [UInt8](try #require(FileManager.default.contents(atPath: segment)))
        let locations = try blockLocations(election.ledger)
        bytes[Int(locations[2].offset) + 150] ^= 0x01
        #expect(FileManager.default.createFile(atPath: segment, contents: Data(bytes)))
        let result = try election.vote(["verify"])
        #expect(result.status == 3)
        #expect(
            result.err
                == "vote: integrity failure: block 2: frame checksum mismatch (segment-00000000.vlseg, byte offset \(locations[2].offset))\n"
        )
    }

    /// Bulk: 10,000 identities authorised and 10,000 votes cast from files, with bad lines listed.
    @Test func bulkAuthorizeAndCast() throws {
        let election = try TestElection()
        let opens = try election.place()
        for name in ["Alice", "Bob", "Carol"] {
            try election.ok(["candidate", "register", "--place", "1", "--name", name])
        }
        var identities = (0..<10_000).map { "member-\($0)" }
        identities.insert("bad@@id", at: 5_000)
        identities.insert("member-7", at: 9_000)
        let input = election.write("voters.txt", identities.joined(separator: "\r\n") + "\n")
        let tokensPath = election.root + "/tokens.csv"
        let authorized = try election.vote([
            "voter", "authorize", "--place", "1", "--from", input, "--tokens-out", tokensPath, "--batch", "3000",
        ])
        #expect(authorized.status == 1)
        #expect(authorized.out.hasPrefix("authorised 10000 voters for place 1; 2 rejected"))
        #expect(authorized.err.contains("line 5001: voter identity must be"))
        #expect(authorized.err.contains("line 9001: voter already authorised"))
        let attributes = try FileManager.default.attributesOfItem(atPath: tokensPath)
        #expect(attributes[.posixPermissions] as? Int == 0o600)
        let tokenLines = try String(contentsOfFile: tokensPath, encoding: .utf8).split(separator: "\n")
        #expect(tokenLines.count == 10_000)

        election.advance(to: opens)
        // Every fifth line as a person might type it: the token in lower case, the candidate id padded.
        var votes = tokenLines.enumerated().map { index, line in
            let token = line.split(separator: ",")[1]
            return index % 5 == 0 ? "\(token.lowercased()), \(index % 3 + 1)\t" : "\(token),\(index % 3 + 1)"
        }
        votes.append(String(votes[0]))
        votes.append("garbage")
        let castFile = election.write("votes.txt", votes.joined(separator: "\n"))
        let cast = try election.vote(["cast", "--place", "1", "--from", castFile])
        #expect(cast.status == 1)
        #expect(cast.out == "cast 10000 votes in place 1; 2 rejected\n")
        #expect(cast.err.contains("line 10001: this token has already voted"))
        #expect(cast.err.contains("line 10002: expected \"token,candidate\""))
        let tally = try #require(try json(try election.ok(["tally", "--place", "1", "--json"])) as? [String: Any])
        #expect((tally["tally"] as? [[String: Any]])?.map { $0["votes"] as? Int } == [3334, 3333, 3333])
        try election.ok(["verify"])
    }

    /// Bulk cast lines as people and spreadsheets write them: plain ASCII lines are read from their bytes,
    /// any other line as text, and both readings agree (CRLF, blank and whitespace-only lines, padding, a
    /// sign, a no-break space, trailing junk, a line that is not UTF-8, a last line without a newline).
    @Test func bulkCastReadsEveryLineForm() throws {
        let election = try TestElection()
        let opens = try election.place()
        for name in ["Alice", "Bob", "Carol"] {
            try election.ok(["candidate", "register", "--place", "1", "--name", name])
        }
        let tokens = try (0..<10).map { try election.authorize("member-\($0)") }
        election.advance(to: opens)
        let lines: [[UInt8]] =
            [
                "\(tokens[0]),1\r", "", " \t", "\u{00A0}", "\(tokens[1].lowercased()), 2\t", "\(tokens[2]),+3",
                "\(tokens[3]),\u{00A0}2", "\(tokens[4]),2\r\r", "\(tokens[5]),4294967296", "\(tokens[6]),007",
                "\(tokens[7]), 1 2",
            ].map { Array($0.utf8) } + [
                [0xFF, 0xFE, 0x2C, 0x31], Array("\(tokens[8])é,1".utf8), Array("\(tokens[9]),3".utf8),
            ]
        let path = election.root + "/votes.txt"
        #expect(FileManager.default.createFile(atPath: path, contents: Data(lines.joined(separator: [0x0A]))))
        let cast = try election.vote(["cast", "--place", "1", "--from", path])
        #expect(cast.status == 1)
        #expect(cast.out == "cast 5 votes in place 1; 6 rejected\n")
        let malformed = "expected \"token,candidate\" with a well-formed token and a candidate id"
        #expect(
            cast.err.split(separator: "\n") == [
                "line 8: \(malformed)", "line 9: \(malformed)", "line 11: \(malformed)", "line 12: not valid UTF-8",
                "line 13: \(malformed)", "line 10: candidate 7 does not exist in place 1",
                "vote: 6 lines were rejected (listed above)",
            ])
        let tally = try #require(try json(try election.ok(["tally", "--place", "1", "--json"])) as? [String: Any])
        #expect((tally["tally"] as? [[String: Any]])?.map { $0["votes"] as? Int } == [1, 2, 2])
    }

    /// Hostile input: empty, huge, invalid UTF-8, control characters, bad dates, unknown and negative
    /// ids, missing files and directories: each a one-line error, a non-zero exit, nothing written.
    @Test func hostileInputIsRejectedCleanly() throws {
        let election = try TestElection()
        _ = try election.place()
        try election.ok(["candidate", "register", "--place", "1", "--name", "Alice"])
        let hugeLine = election.write("huge.txt", String(repeating: "x", count: 10_000_000) + "\n")
        let before = try election.fingerprint()
        let big = String(repeating: "N", count: 100_000)
        let cases: [[String]] = [
            ["candidate", "register", "--place", "1", "--name", ""],
            ["candidate", "register", "--place", "1", "--name", big],
            ["candidate", "register", "--place", "1", "--name", "evil\u{202E}txt.exe"],
            ["candidate", "register", "--place", "1", "--name", "bell\u{07}"],
            [
                "candidate", "register", "--place", "1", "--name", "Bob", "--pledge",
                String(repeating: "p", count: 2001),
            ],
            ["candidate", "register", "--place", "-3", "--name", "Bob"],
            ["candidate", "register", "--place=-3", "--name", "Bob"],
            ["candidate", "register", "--place", "0", "--name", "Bob"],
            ["candidate", "register", "--place", "99999999999999999999", "--name", "Bob"],
            ["place", "create", "--name", "P", "--registration", "2026-13-01T00:00:00Z/+1d", "--voting", "+1d/+2d"],
            ["place", "create", "--name", "P", "--registration", "2026-02-30T00:00:00Z/+1d", "--voting", "+1d/+2d"],
            ["place", "create", "--name", "P", "--registration", "2026-12-01 10:00/+1d", "--voting", "+1d/+2d"],
            ["place", "create", "--name", "P", "--registration", "now", "--voting", "+1d/+2d"],
            ["voter", "authorize", "--place", "1", "--voter", ""],
            [
                "voter", "authorize", "--place", "1", "--from", election.root + "/missing.txt", "--tokens-out",
                election.root + "/t1",
            ],
            ["voter", "authorize", "--place", "1", "--from", election.root, "--tokens-out", election.root + "/t2"],
            ["voter", "authorize", "--place", "1", "--from", hugeLine, "--tokens-out", election.root + "/t3"],
            ["cast", "--place", "1", "--from", hugeLine],
            ["cast", "--place", "1", "--candidate", "1", "--token", ""],
        ]
        for arguments in cases {
            let result = try election.vote(arguments)
            #expect(result.status != 0, "\(arguments.map { $0.prefix(40) })")
            // Bulk commands list each rejected line before the final error line; every line stays short.
            let lines = result.err.split(separator: "\n")
            let bulk = arguments.contains("--from")
            #expect(
                lines.last?.hasPrefix("vote: ") == true && (bulk || lines.count == 1),
                "\(arguments.map { $0.prefix(40) }): \(result.err.prefix(300))")
            #expect(lines.allSatisfy { $0.count < 400 }, "\(arguments.map { $0.prefix(40) }): error line too long")
        }
        let file = election.write("not-a-ledger", "hello")
        let notLedger = try VoteCLI.run(["tally", "--place", "1", "--ledger", file])
        #expect(notLedger.status == 1 && notLedger.err.contains("not a ledger: it is not a directory"))
        #expect(try election.fingerprint() == before)
    }
}

/// Where each block of the ledger at `path` is stored.
func blockLocations(_ path: String) throws -> [BlockLocation] {
    var locations: [BlockLocation] = []
    try FileBlockSource(path: path).forEachBlock { _, location in locations.append(location) }
    return locations
}
