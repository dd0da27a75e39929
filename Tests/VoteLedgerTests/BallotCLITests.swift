import Foundation
import JSONViews
import Ledger
import LedgerCrypto
import TestSupport
import Testing
import VoteLedger

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

        /// `url`'s port.
        var port: Int { Int(url.split(separator: ":").last ?? "") ?? 0 }

        init(_ election: TestElection, arguments: [String] = []) throws {
            let (process, out, log) = try election.start(
                [
                    "serve", "--listen", "127.0.0.1:0", "--idle-timeout", "3600", "--head-timeout", "3600",
                    "--admin-token-file", election.root + "/admin-token",
                ] + arguments)
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
        let casts = log.split(separator: "\n").filter { $0.contains("path=/api/v1/places/1/ballots ") }
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

    /// A place that writes its ballots in batches (`--batch-size 2`), through the CLI: `vote ballot cast --no-wait`
    /// says the ballot is held; a server killed while holding it loses it, and the same credential cast again after
    /// the restart is held again; a cast that fills the batch waits for it and prints its receipt; and a cast run
    /// again once its ballot is written prints that receipt instead of a refusal. Both ballots end in one block.
    @Test(.enabled(if: VoteCLI.serverBuilt, "vote-serve is not built (VOTE_WITHOUT_SERVER=1)"))
    func aBatchedPlaceThroughTheCLI() throws {
        let election = try TestElection()
        let refused = try VoteCLI.run(
            ["place", "create", "--name", "X", "--registration", "a/b", "--voting", "c/d", "--batch-size", "2"],
            environment: election.environment, directory: election.root)
        #expect(refused.status == 2 && refused.err.contains("are for --ballot anonymous"), "\(refused.err)")
        let zero = try VoteCLI.run(
            [
                "place", "create", "--name", "X", "--registration", "a/b", "--voting", "c/d", "--ballot", "anonymous",
                "--batch-every", "0s",
            ], environment: election.environment, directory: election.root)
        #expect(zero.status == 2 && zero.err.contains("--batch-every must be a duration"), "\(zero.err)")
        let opens = try election.place(extra: ["--ballot", "anonymous", "--batch-size", "2"])
        let shown = try #require(try json(try election.ok(["place", "show", "1", "--json"])) as? [String: Any])
        #expect((shown["batches"] as? [String: Any])?["size"] as? Int == 2, "\(shown)")
        #expect(try election.ok(["place", "show", "1"]).contains("once at least 2 are held"))
        try election.ok(["candidate", "register", "--place", "1", "--name", "Ada"])
        try election.ok(["candidate", "register", "--place", "1", "--name", "Grace"])
        let codes = [try election.authorize("member-1"), try election.authorize("member-2")]
        election.advance(to: opens)
        var served = try Served(election)
        defer { _ = served.stop() }
        func vote(_ arguments: [String]) throws -> VoteCLI.Result {
            try VoteCLI.run(arguments, environment: election.environment, directory: election.root)
        }
        var credentials: [String] = []
        for (index, code) in codes.enumerated() {
            let credential = election.root + "/credential-\(index).json"
            let codeFile = election.write("code-\(index)", code + "\n")
            let requested = try vote([
                "ballot", "request", "--server", served.url, "--place", "1", "--code-file", codeFile, "--out",
                credential,
            ])
            #expect(requested.status == 0, "\(requested.err)")
            credentials.append(credential)
        }
        let head = try election.ok(["head"])
        let held = try vote([
            "ballot", "cast", "--server", served.url, "--credential", credentials[0], "--candidate", "1", "--no-wait",
        ])
        #expect(held.status == 0 && held.out.contains("held for its batch, once enough ballots are held"), "\(held)")
        // The same credential with another choice while the first is held: refused, not the held one's receipt.
        let other = try vote([
            "ballot", "cast", "--server", served.url, "--credential", credentials[0], "--candidate", "2", "--no-wait",
        ])
        #expect(other.status == 1 && other.err.contains("this credential has already voted"), "\(other)")

        // Killed while holding it: the ballot is lost, the credential unspent, and cast again after the restart.
        kill(served.process.processIdentifier, SIGKILL)
        served.process.waitUntilExit()
        #expect(try election.ok(["head"]) == head, "a held ballot was written")
        served = try Served(election)
        let again = try vote([
            "ballot", "cast", "--server", served.url, "--credential", credentials[0], "--candidate", "1", "--no-wait",
            "--json",
        ])
        let answer = try #require(try json(again.out) as? [String: Any], "\(again)")
        #expect(answer["held"] as? Bool == true && answer["batch_due"] is NSNull)

        // The second ballot fills the batch: its cast waits for it and prints the receipt.
        let filled = try vote([
            "ballot", "cast", "--server", served.url, "--credential", credentials[1], "--candidate", "2", "--json",
        ])
        #expect(filled.status == 0 && filled.err.contains("held with others"), "\(filled)")
        let second = try #require(try json(filled.out) as? [String: Any])
        // The first voter runs the cast again: its ballot is written, and its receipt printed.
        let rerun = try vote([
            "ballot", "cast", "--server", served.url, "--credential", credentials[0], "--candidate", "1", "--json",
        ])
        #expect(rerun.status == 0, "\(rerun)")
        let first = try #require(try json(rerun.out) as? [String: Any])
        #expect(first["candidate"] as? Int == 1 && second["candidate"] as? Int == 2)
        #expect(first["height"] as? Int == second["height"] as? Int, "the batch was not one block")
        let changed = try vote([
            "ballot", "cast", "--server", served.url, "--credential", credentials[0], "--candidate", "2",
        ])
        #expect(changed.status == 1 && changed.err.contains("this credential has already voted"), "\(changed)")
        #expect(served.stop().status == 0)
        try election.ok(["verify"])
        let tally = try #require(try json(try election.ok(["tally", "--place", "1", "--json"])) as? [String: Any])
        #expect((tally["tally"] as? [[String: Any]])?.map { $0["votes"] as? Int } == [1, 1])
    }

    /// `vote ballot cast` run again for a ballot of answers already written: the same answers (however typed) print
    /// its receipt, other answers are refused as the server refuses them, in one line, and nothing is written.
    @Test(.enabled(if: VoteCLI.serverBuilt, "vote-serve is not built (VOTE_WITHOUT_SERVER=1)"))
    func aBallotOfAnswersCastAgainIsItsReceiptOnlyForTheSameAnswers() throws {
        let election = try TestElection()
        let questions = election.write(
            "questions.json",
            #"{"questions": [{"title": "Adopt?", "method": "yes-no"}, {"title": "Board", "method": "choose", "min": 1, "max": 2, "options": ["Ana", "Ben", "Eun"]}]}"#
        )
        let opens = try election.place(extra: ["--questions", questions, "--ballot", "anonymous"])
        let codeFile = election.write("code", try election.authorize("member-1") + "\n")
        election.advance(to: opens)
        let served = try Served(election)
        defer { _ = served.stop() }
        func vote(_ arguments: [String]) throws -> VoteCLI.Result {
            try VoteCLI.run(arguments, environment: election.environment, directory: election.root)
        }
        let credential = election.root + "/credential.json"
        let requested = try vote([
            "ballot", "request", "--server", served.url, "--place", "1", "--code-file", codeFile, "--out", credential,
        ])
        try #require(requested.status == 0, "\(requested.err)")
        func cast(_ answers: String) throws -> VoteCLI.Result {
            try vote([
                "ballot", "cast", "--server", served.url, "--credential", credential, "--answers", answers, "--json",
            ])
        }
        let first = try cast("yes;1,3")
        try #require(first.status == 0, "\(first.err)")
        let receipt = try #require(try json(first.out) as? [String: Any])
        let again = try cast("YES; 3,1")
        #expect(again.status == 0, "\(again.err)")
        #expect((try json(again.out) as? [String: Any])?["event_hash"] as? String == receipt["event_hash"] as? String)
        let head = try election.ok(["head"])
        for other in ["no;1,3", "yes;1", "yes;1,2"] {
            let changed = try cast(other)
            #expect(changed.status == 1 && changed.err.contains("this credential has already voted"), "\(changed)")
            #expect(changed.out.isEmpty && changed.err.split(separator: "\n").count == 1, "\(changed)")
        }
        #expect(try election.ok(["head"]) == head)
    }

    /// `vote ballot request --help` says what is true of a lost credential: the code cannot be re-issued once a
    /// credential was issued for it (the authority's re-issue is refused), so the file is to be kept safe.
    @Test func helpSaysALostCredentialCannotBeReplaced() throws {
        let help = try VoteCLI.run(["ballot", "request", "--help"])
        #expect(help.status == 0)
        let text = help.out.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(text.contains("the authority cannot re-issue the code"), "\(text)")
        #expect(text.contains("Keep the file safe until the vote is cast"), "\(text)")
        #expect(!text.contains("ask the authority to re-issue"), "\(text)")
    }

    /// An anonymous place 1 with candidates Ada and Grace, voting open, and one issuance code (in the file `code`);
    /// with `other`, an anonymous place 2 as well (another ballot key on the same ledger).
    private func anonymousElection(other: Bool = false) throws -> (TestElection, codeFile: String) {
        let election = try TestElection()
        let opens = try election.place(extra: ["--ballot", "anonymous"])
        if other { _ = try election.place(name: "Other", extra: ["--ballot", "anonymous"]) }
        try election.ok(["candidate", "register", "--place", "1", "--name", "Ada"])
        try election.ok(["candidate", "register", "--place", "1", "--name", "Grace"])
        let code = try election.authorize("member-1")
        election.advance(to: opens)
        return (election, election.write("code", code + "\n"))
    }

    /// A server that hands this voter a ballot key of its own (here place 2's: a real key, but not place 1's) is
    /// refused before the code is sent, by `vote ballot request`, and before a ballot is sent, by `vote ballot
    /// cast`, each in one line: the code stays unspent (the real server then issues for it) and nothing is cast.
    /// The proof of the place's creation cannot be swapped for another place's either, and with `--key` a ledger
    /// signed under a key other than the authority's is refused.
    @Test(.enabled(if: VoteCLI.serverBuilt, "vote-serve is not built (VOTE_WITHOUT_SERVER=1)"))
    func aBallotKeyNotOnTheLedgerIsRefusedWithNothingSent() throws {
        let (election, codeFile) = try anonymousElection(other: true)
        let served = try Served(election)
        defer { _ = served.stop() }
        let place2 = try #require(try json(try election.ok(["place", "show", "2", "--json"])) as? [String: Any])
        let otherKey = try #require(place2["ballot_key"] as? String)
        // The hostile server: the real one behind it, place 1's key replaced by place 2's; with `swapsProof`, the
        // receipt of place 1's creation replaced by place 2's as well. It notes every request's method and path.
        let upstream = served.port
        let swapsProof = Locked(false)
        let seen = Locked([String]())
        let hostile = try TestHTTPListener { request in
            seen.withLock { $0.append("\(request.method) \(request.path)") }
            var forwarded = request
            if swapsProof.withLock({ $0 }), request.path == "/api/v1/places/1/created" {
                let text = String(decoding: request.raw, as: UTF8.self)
                forwarded.raw = Array(text.replacingOccurrences(of: "/places/1/", with: "/places/2/").utf8)
            }
            let answer = TestHTTPListener.forward(forwarded, to: upstream)
            guard request.method == "GET", request.path == "/api/v1/places/1", var place = answer.json else {
                return answer.bytes
            }
            place["ballot_key"] = otherKey
            return TestHTTPListener.Answer(status: answer.status, json: place).bytes
        }
        defer { hostile.stop() }
        func vote(_ arguments: [String]) throws -> VoteCLI.Result {
            try VoteCLI.run(arguments, environment: election.environment, directory: election.root)
        }
        let credential = election.root + "/credential.json"
        let request = ["ballot", "request", "--place", "1", "--code-file", codeFile, "--out", credential]

        for swapped in [false, true] {
            swapsProof.withLock { $0 = swapped }
            let refused = try vote(request + ["--server", hostile.url])
            #expect(refused.status == 3, "\(refused.err)")
            #expect(
                refused.err.contains(
                    swapped ? "is of another event" : "is not the one on its ledger")
                    && refused.err.split(separator: "\n").count == 1, "\(refused.err)")
            #expect(!FileManager.default.fileExists(atPath: credential))
        }
        #expect(!seen.withLock { $0 }.contains { $0.hasPrefix("POST") }, "\(seen.withLock { $0 })")
        #expect(try election.ok(["status", "--place", "1", "--token-file", codeFile]) == "not issued\n")

        // Given the authority's verifier key (from the election's notice), a ledger signed under another key is
        // refused too, the code unspent; under the right key the real server issues for the code.
        func verifierKey(_ election: TestElection) throws -> String {
            let head = try election.vote(["head"])
            let line = head.err.split(separator: "\n").first { $0.hasPrefix("verifier key: ") }
            return String(try #require(line).dropFirst("verifier key: ".count))
        }
        let stranger = try verifierKey(try TestElection())
        let unsigned = try vote(request + ["--server", served.url, "--key", stranger])
        #expect(unsigned.status == 3 && unsigned.err.contains("not valid under the authority key"), "\(unsigned.err)")
        #expect(try election.ok(["status", "--place", "1", "--token-file", codeFile]) == "not issued\n")
        let issued = try vote(request + ["--server", served.url, "--key", try verifierKey(election)])
        #expect(issued.status == 0, "\(issued.err)")

        // A credential issued under another key (as a booth served that key would have saved it) is not cast.
        var saved = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: credential))) as? [String: Any]
        )
        let otherHash = SHA256.hash(try #require(Base64URL.decode(otherKey))).hex
        saved["ballot_key_hash"] = otherHash
        let misled = election.write(
            "misled.json", String(decoding: try JSONSerialization.data(withJSONObject: saved), as: UTF8.self))
        let notCast = try vote(["ballot", "cast", "--server", served.url, "--credential", misled, "--candidate", "2"])
        #expect(notCast.status == 3, "\(notCast.err)")
        #expect(notCast.err.contains("not place 1's on the ledger") && notCast.err.contains("the ballot was not sent"))
        let tally = try #require(try json(try election.ok(["tally", "--place", "1", "--json"])) as? [String: Any])
        #expect((tally["turnout"] as? [String: Any])?["voted"] as? Int == 0, "a ballot went out")

        let cast = try vote(["ballot", "cast", "--server", served.url, "--credential", credential, "--candidate", "2"])
        #expect(cast.status == 0, "\(cast.err)")
    }

    /// An issuance answer without its receipt (here stripped by a proxy) is refused in one line, exit 3: the
    /// credential, whose signature is good and whose code is used, is saved all the same and votes.
    @Test(.enabled(if: VoteCLI.serverBuilt, "vote-serve is not built (VOTE_WITHOUT_SERVER=1)"))
    func anIssuanceWithoutAReceiptIsRefused() throws {
        let (election, codeFile) = try anonymousElection()
        let served = try Served(election)
        defer { _ = served.stop() }
        let upstream = served.port
        let stripping = try TestHTTPListener { request in
            let answer = TestHTTPListener.forward(request, to: upstream)
            guard request.path == "/api/v1/places/1/credentials", var issued = answer.json else { return answer.bytes }
            issued.removeValue(forKey: "receipt")
            return TestHTTPListener.Answer(status: answer.status, json: issued).bytes
        }
        defer { stripping.stop() }
        let credential = election.root + "/credential.json"
        let refused = try VoteCLI.run(
            [
                "ballot", "request", "--server", stripping.url, "--place", "1", "--code-file", codeFile, "--out",
                credential,
            ], environment: election.environment, directory: election.root)
        #expect(refused.status == 3, "\(refused.err)")
        #expect(
            refused.err.contains("holds no receipt") && refused.err.contains("the credential is saved in \(credential)")
                && refused.err.split(separator: "\n").count == 1, "\(refused.err)")
        #expect(!refused.out.contains("?"), "\(refused.out)")
        let cast = try VoteCLI.run(
            ["ballot", "cast", "--server", served.url, "--credential", credential, "--candidate", "1"],
            environment: election.environment, directory: election.root)
        #expect(cast.status == 0, "\(cast.err)")
    }

    /// While the server takes 2 s to answer, `vote ballot request` and `vote ballot cast` sleep: the CPU time the
    /// child used (its own resource usage, from wait4) is far below the wait, a bound on work done, not on speed.
    @Test func waitingForASlowServerTakesNoCPU() throws {
        let slow = try TestHTTPListener { _ in
            sleep(2)
            return TestHTTPListener.Answer(
                status: 404, json: ["error": ["code": "place_not_found", "message": "place 1 does not exist"]]
            ).bytes
        }
        defer { slow.stop() }
        let directory = TemporaryDirectory()
        let code = directory.child("code")
        try (VotingToken.generate().display + "\n").write(toFile: code, atomically: true, encoding: .utf8)
        let credential = directory.child("credential.json")
        try #"{"ballot_key_hash":"00","credential":"AA","place":1,"signature":"AA"}"#.write(
            toFile: credential, atomically: true, encoding: .utf8)
        for arguments in [
            ["ballot", "request", "--place", "1", "--code-file", code, "--out", directory.child("out.json")],
            ["ballot", "cast", "--credential", credential, "--candidate", "1"],
        ] {
            let run = try runMeasuringCPU(
                VoteCLI.path, arguments + ["--server", slow.url], environment: VoteCLI.environment())
            #expect(run.status == 1 && run.err.contains("does not exist"), "\(arguments[1]): \(run.err)")
            #expect(run.wall >= .seconds(2), "\(arguments[1]) did not wait for the answer: \(run.wall)")
            #expect(run.cpu < .milliseconds(500), "\(arguments[1]) used \(run.cpu) of CPU in \(run.wall)")
        }
    }

    /// A server with a self-signed certificate: refused as untrusted, then reached with `--cacert` its certificate,
    /// or with `SSL_CERT_FILE` naming it (OpenSSL's default paths).
    @Test(.enabled(if: VoteCLI.serverBuilt, "vote-serve is not built (VOTE_WITHOUT_SERVER=1)"))
    func aSelfSignedServerIsReachedWithItsCertificate() throws {
        let (election, codeFile) = try anonymousElection()
        let certificate = election.root + "/server.pem"
        let made = try runToCompletion(
            "/usr/bin/env",
            [
                "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-days", "2", "-subj", "/CN=vote test", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
                "-keyout", election.root + "/server.key", "-out", certificate,
            ])
        try #require(made.status == 0, "\(made.err)")
        let served = try Served(
            election, arguments: ["--tls-cert", certificate, "--tls-key", election.root + "/server.key"])
        defer { _ = served.stop() }
        #expect(served.url.hasPrefix("https://127.0.0.1:"), "\(served.url)")
        let request = ["ballot", "request", "--server", served.url, "--place", "1", "--code-file", codeFile]
        let untrusted = try VoteCLI.run(
            request + ["--out", election.root + "/a.json"], environment: election.environment,
            directory: election.root)
        #expect(untrusted.status == 1, "\(untrusted.err)")
        #expect(
            untrusted.err.contains("cannot reach 127.0.0.1: its TLS certificate is not trusted"), "\(untrusted.err)")
        #expect(!FileManager.default.fileExists(atPath: election.root + "/a.json"))
        let trusted = try VoteCLI.run(
            request + ["--out", election.root + "/b.json", "--cacert", certificate],
            environment: election.environment, directory: election.root)
        #expect(trusted.status == 0, "\(trusted.err)")
        var environment = election.environment
        environment["SSL_CERT_FILE"] = certificate
        let cast = try VoteCLI.run(
            ["ballot", "cast", "--server", served.url, "--credential", election.root + "/b.json", "--candidate", "1"],
            environment: environment, directory: election.root)
        #expect(cast.status == 0, "\(cast.err)")
    }
}
