import Foundation
import Testing

/// `vote ballot request` and `vote ballot cast`, the voter's client of an anonymous place, against a real
/// `vote serve`: a credential is issued once per code and saved 0600, votes once, and every refusal is one line
/// with the documented exit code, leaving no credential file behind.
@Suite struct BallotCLITests {
    /// `vote serve` on `election`'s ledger and clock, until `stop()`; `url` is where it listens.
    final class Served {
        let process: Process
        let url: String
        /// Standard error: the access log.
        let log: Pipe

        init(_ election: TestElection) throws {
            let (process, out, log) = try election.start([
                "serve", "--listen", "127.0.0.1:0", "--idle-timeout", "3600", "--head-timeout", "3600",
                "--admin-token-file", election.root + "/admin-token",
            ])
            self.process = process
            self.log = log
            var text = ""
            let reader = out.fileHandleForReading
            while !text.contains("\n") {
                let chunk = reader.availableData
                if chunk.isEmpty { break }
                text += String(decoding: chunk, as: UTF8.self)
            }
            guard let line = text.split(separator: "\n").first, line.hasPrefix("listening on ") else {
                process.terminate()
                throw CancellationError()
            }
            url = String(line.dropFirst("listening on ".count))
        }

        /// Stops the server; its exit status and access log.
        func stop() -> (status: Int32, log: String) {
            process.terminate()
            let text = String(decoding: log.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return (process.terminationStatus, text)
        }
    }

    @Test(.enabled(if: VoteCLI.serverBuilt, "vote-serve is not built (VOTE_WITHOUT_SERVER=1)"))
    func requestAndCastAgainstARealServer() throws {
        let election = try TestElection()
        let opens = try election.place(extra: ["--ballot", "anonymous"])
        try election.ok(["candidate", "register", "--place", "1", "--name", "Ada"])
        try election.ok(["candidate", "register", "--place", "1", "--name", "Grace"])
        let code = try election.authorize("member-1")
        election.advance(to: opens)
        let codeFile = election.write("code", code + "\n")
        let credential = election.root + "/credential.json"

        let served = try Served(election)
        var stopped = false
        defer { if !stopped { _ = served.stop() } }
        func vote(_ arguments: [String]) throws -> VoteCLI.Result {
            try VoteCLI.run(arguments, environment: election.environment, directory: election.root)
        }

        // A mistyped code is refused before anything is sent; no file is left.
        var typo = Array(code)
        typo[0] = typo[0] == "A" ? "B" : "A"
        SecretsLog.record(String(typo))
        let mistyped = try vote([
            "ballot", "request", "--server", served.url, "--place", "1", "--code", String(typo), "--out", credential,
        ])
        #expect(mistyped.status == 1 && mistyped.err.contains("issuance code is mistyped"), "\(mistyped.err)")
        #expect(!FileManager.default.fileExists(atPath: credential))

        // Readers work beside the server: the code's state is "not issued", then "credential issued".
        #expect(try election.ok(["status", "--place", "1", "--token-file", codeFile]) == "not issued\n")
        let requested = try vote([
            "ballot", "request", "--server", served.url, "--place", "1", "--code-file", codeFile, "--out", credential,
            "--json",
        ])
        #expect(requested.status == 0, "\(requested.err)")
        let answer = try #require(try json(requested.out) as? [String: Any])
        #expect(answer["repeated"] as? Bool == false && answer["credential_file"] as? String == credential)
        let mode = try FileManager.default.attributesOfItem(atPath: credential)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let saved = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: credential))) as? [String: Any]
        )
        #expect(saved["place"] as? Int == 1 && (saved["ballot_key_hash"] as? String)?.count == 64)
        #expect((saved["credential"] as? String)?.count == 86, "64 bytes as base64url")
        #expect(!requested.out.contains(code) && !(saved.values.contains { "\($0)".contains(code) }))

        #expect(try election.ok(["status", "--place", "1", "--token-file", codeFile]) == "credential issued\n")
        let shown = try #require(try json(try election.ok(["place", "show", "1", "--json"])) as? [String: Any])
        #expect(shown["ballot"] as? String == "anonymous" && shown["credentials_issued"] as? Int == 1)

        // The code has had its credential: a second request is refused, and its file removed.
        let again = election.root + "/again.json"
        let second = try vote([
            "ballot", "request", "--server", served.url, "--place", "1", "--code-file", codeFile, "--out", again,
        ])
        #expect(second.status == 1 && second.err.contains("a credential has already been issued"), "\(second.err)")
        #expect(!FileManager.default.fileExists(atPath: again))

        // A credential altered after issuance does not verify.
        var forged = saved
        let signature = try #require(saved["signature"] as? String)
        forged["signature"] = String(signature.dropLast()) + (signature.last == "A" ? "B" : "A")
        let forgedFile = election.write(
            "forged.json", String(decoding: try JSONSerialization.data(withJSONObject: forged), as: UTF8.self))
        let refused = try vote([
            "ballot", "cast", "--server", served.url, "--credential", forgedFile, "--candidate", "2",
        ])
        #expect(refused.status == 1 && refused.err.contains("does not verify"), "\(refused.err)")

        let cast = try vote([
            "ballot", "cast", "--server", served.url, "--credential", credential, "--candidate", "2",
            "--receipt-out", election.root + "/receipt.tlog-proof", "--json",
        ])
        #expect(cast.status == 0, "\(cast.err)")
        let receipt = try #require(try json(cast.out) as? [String: Any])
        #expect(receipt["candidate"] as? Int == 2 && receipt["place"] as? Int == 1)
        let proof = try String(contentsOfFile: election.root + "/receipt.tlog-proof", encoding: .utf8)
        #expect(proof.hasPrefix("c2sp.org/tlog-proof"))
        let twice = try vote(["ballot", "cast", "--server", served.url, "--credential", credential, "--candidate", "1"])
        #expect(twice.status == 1 && twice.err.contains("this credential has already voted"), "\(twice.err)")

        let (status, log) = served.stop()
        stopped = true
        #expect(status == 0)
        // The casting route's lines: the time to the minute, no request id, no duration.
        let casts = log.split(separator: "\n").filter { $0.contains("path=/api/v1/places/1/ballots") }
        #expect(casts.count == 3)
        for line in casts {
            #expect(
                line.wholeMatch(
                    of:
                        #/\d{4}-\d\d-\d\dT\d\d:\d\dZ info vote.serve: method=POST path=\S+ status=\d+ \[VoteServer\] request/#
                ) != nil, "\(line)")
        }
        #expect(log.contains("path=/api/v1/places/1/credentials"), "the access log is not the one read")
        // Nothing listens there any more: one line, exit 1.
        let gone = try vote(["ballot", "cast", "--server", served.url, "--credential", credential, "--candidate", "1"])
        #expect(gone.status == 1 && gone.err.contains("cannot reach"), "\(gone.err)")

        try election.ok(["verify"])
        let tally = try #require(try json(try election.ok(["tally", "--place", "1", "--json"])) as? [String: Any])
        let turnout = tally["turnout"] as? [String: Any]
        #expect(turnout?["issued"] as? Int == 1 && turnout?["voted"] as? Int == 1)
        #expect((tally["tally"] as? [[String: Any]])?.map { $0["votes"] as? Int } == [0, 1])
    }
}
