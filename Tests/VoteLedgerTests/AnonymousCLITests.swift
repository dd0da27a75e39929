import BlindRSA
import Election
import FileDriver
import Foundation
import JSONViews
import Ledger
import LedgerCrypto
import Testing
import VoteLedger

/// `vote` with an anonymous place, as real processes: `place create --ballot anonymous` keeps the place's key in
/// the key directory, and the read commands tell issuance codes and credentials issued apart from tokens and
/// votes. (Credentials are issued here through the service, as the server does; `vote ballot` is the client.)
@Suite struct AnonymousCLITests {
    @Test func anonymousPlaceThroughTheCLI() async throws {
        let election = try TestElection()
        let before = try election.fingerprint()
        let wrong = try election.vote([
            "place", "create", "--name", "X", "--registration", "a/b", "--voting", "c/d", "--ballot", "secret",
        ])
        #expect(wrong.status != 0 && wrong.err.contains("--ballot must be token or anonymous"))
        #expect(try election.fingerprint() == before)

        let start = election.now
        let opens = start.addingTimeInterval(3600)
        let formatter = ISO8601DateFormatter()
        let created = try #require(
            try json(
                try election.ok([
                    "place", "create", "--name", "Steward", "--ballot", "anonymous", "--json",
                    "--registration", "\(formatter.string(from: start))/\(formatter.string(from: opens))",
                    "--voting",
                    "\(formatter.string(from: opens))/\(formatter.string(from: opens.addingTimeInterval(3600)))",
                ])) as? [String: Any])
        #expect(created["ballot"] as? String == "anonymous")
        let der = try #require((created["ballot_key"] as? String).flatMap(Base64URL.decode))
        let key = try BlindRSAPublicKey(derRepresentation: der)
        #expect(key.modulusBits == 3072)
        let keyFile = election.keys + "/" + BallotKey.fileName(der: der)
        let attributes = try FileManager.default.attributesOfItem(atPath: keyFile)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        #expect(
            !(try FileManager.default.contentsOfDirectory(atPath: election.ledger)).contains { $0.hasPrefix("ballot-") }
        )

        try election.ok(["candidate", "register", "--place", "1", "--name", "Ada"])
        try election.ok(["candidate", "register", "--place", "1", "--name", "Min"])
        let authorized = try election.vote(["voter", "authorize", "--place", "1", "--voter", "m-1"])
        #expect(authorized.status == 0 && authorized.err.contains("issuance code"))
        let code = authorized.out.trimmingCharacters(in: .whitespacesAndNewlines)
        SecretsLog.record(code)
        #expect(try election.ok(["status", "--place", "1", "--token", code]) == "not issued\n")
        let letters = election.root + "/letters.html"
        try election.ok([
            "voter", "letters", "--place", "1", "--tokens", election.write("codes.csv", "m-1,\(code)\n"),
            "--base-url", "https://vote.example.org", "--out", letters,
        ])
        let letter = try String(contentsOfFile: letters, encoding: .utf8)
        #expect(
            letter.contains("Your issuance code") && !letter.contains("voting token") && !letter.contains("the token"))
        let shown = try election.ok(["place", "show", "1"])
        #expect(shown.contains("ballots       anonymous") && shown.contains("issued        0 ballot credentials"))
        let listed = try #require(try json(try election.ok(["place", "show", "1", "--json"])) as? [String: Any])
        #expect(listed["ballot"] as? String == "anonymous" && listed["credentials_issued"] as? Int == 0)

        // Issue and cast through the service, as the server would.
        election.advance(to: opens)
        let now = Int64(election.now.timeIntervalSince1970 * 1000)
        let writer = LedgerWriter(
            try VoteLedgerService.openLedger(StoreConfiguration(.file(path: election.ledger))), clock: { now })
        let blinding = try key.blind(try key.prepare(try SecureRandom.bytes(32)))
        let issued = try await writer.issueCredential(
            place: 1, code: try #require(VotingToken(typed: code)), blindedMessage: blinding.blindedMessage)
        let signature = try key.finalize(issued.blindSignature, blinding: blinding)
        _ = try await writer.castAnonymousBallot(
            place: 1, choice: .candidate(2), credential: blinding.preparedMessage, signature: signature)
        // Read while the writer still runs, as beside `vote serve`: the readers replay the blocks after the last
        // snapshot (the one `voter authorize` saved), whose issuance reads its code's roll entry from before it.
        #expect(try election.ok(["status", "--place", "1", "--token", code]) == "credential issued\n")
        #expect(try election.ok(["place", "show", "1"]).contains("issued        1 ballot credentials"))
        await writer.close()

        let tally = try election.ok(["tally", "--place", "1"])
        #expect(tally.contains("credentials issued: 1"))
        let tallyJSON = try #require(try json(try election.ok(["tally", "--place", "1", "--json"])) as? [String: Any])
        #expect((tallyJSON["turnout"] as? [String: Any])?["issued"] as? Int == 1)
        #expect(try election.ok(["place", "show", "1"]).contains("issued        1 ballot credentials"))
        let log = try election.ok(["log"])
        #expect(log.contains("ballot credential issued in place 1") && log.contains("anonymous vote cast in place 1"))
        try election.ok(["verify"])
    }
}
