import Foundation
import Testing

/// `vote voter reissue` as an authority runs it: a new token for an authorised voter who has not voted; the
/// old token stops working; the ledger records it and both verifiers accept it.
@Suite struct ReissueCLITests {
    @Test func reissueReplacesTheToken() throws {
        let election = try TestElection()
        let opens = try election.place()
        try election.ok(["candidate", "register", "--place", "1", "--name", "Alice"])
        let lost = try election.authorize("member-1")
        let kept = try election.authorize("member-2")
        let reissued = try election.ok(["voter", "reissue", "--place", "1", "--voter", "MEMBER-1"])
            .trimmingCharacters(in: .whitespacesAndNewlines)
        SecretsLog.record(reissued)
        #expect(reissued.count == 41 && reissued != lost)
        let again = try #require(
            try json(try election.ok(["voter", "reissue", "--place", "1", "--voter", "member-1", "--json"]))
                as? [String: Any])
        let newest = try #require(again["token"] as? String)
        SecretsLog.record(newest)
        #expect(again["place"] as? Int == 1 && (again["event_hash"] as? String)?.count == 64)

        election.advance(to: opens)
        for old in [lost, reissued] {
            let refused = try election.vote(["cast", "--place", "1", "--candidate", "1", "--token", old])
            #expect(refused.status == 1 && refused.err == "vote: this token is not authorised to vote in place 1\n")
            let status = try election.vote(["status", "--place", "1", "--token", old])
            #expect(status.status == 1, "a replaced token is not authorised: \(status.out)")
        }
        try election.ok(["cast", "--place", "1", "--candidate", "1", "--token", newest])
        try election.ok(["cast", "--place", "1", "--candidate", "1", "--token", kept])
        #expect(try election.ok(["status", "--place", "1", "--token", newest]) == "voted\n")

        // Refusals: a voter who voted, one never authorised, a bad identity; each writes nothing.
        let before = try election.fingerprint()
        let voted = try election.vote(["voter", "reissue", "--place", "1", "--voter", "member-1"])
        #expect(voted.status == 1 && voted.err == "vote: this voter has already voted\n" && voted.out.isEmpty)
        let unknown = try election.vote(["voter", "reissue", "--place", "1", "--voter", "member-9"])
        #expect(unknown.status == 1 && unknown.err == "vote: voter not authorised in place 1\n" && unknown.out.isEmpty)
        let malformed = try election.vote(["voter", "reissue", "--place", "1", "--voter", "no@such@id"])
        #expect(malformed.status == 1 && malformed.err.hasPrefix("vote: voter identity must be"))
        #expect(try election.fingerprint() == before)

        let tally = try #require(try json(try election.ok(["tally", "--place", "1", "--json"])) as? [String: Any])
        let turnout = try #require(tally["turnout"] as? [String: Any])
        #expect(turnout["authorized"] as? Int == 2 && turnout["voted"] as? Int == 2, "re-issues count no voter twice")

        let log = try election.ok(["log"])
        #expect(log.components(separatedBy: "voter token reissued in place 1").count == 3, "\(log)")
        let exported = try election.ok(["export", "--events"]).split(separator: "\n")
            .compactMap { try? json(String($0)) as? [String: Any] }
        let kinds = exported.compactMap { ($0["event"] as? [String: Any])?["kind"] }
        #expect(kinds.compactMap { $0 as? String }.filter { $0 == "voter_token_reissued" }.count == 2, "\(exported)")

        let verify = try #require(try json(try election.ok(["verify", "--json"])) as? [String: Any])
        #expect(verify["ok"] as? Bool == true)
        let python = try IndependentVerifierTests.python([election.ledger])
        #expect(python.status == 0, "\(python.text)")
    }

    /// The new token is delivered before the re-issue is recorded: when standard output fails, nothing is
    /// recorded and the voter's current token still votes.
    @Test(arguments: DeliveryTests.Sink.allCases) func undeliveredTokenIsNotRecorded(sink: DeliveryTests.Sink) throws {
        let election = try TestElection()
        _ = try election.place()
        let token = try election.authorize("member-1")
        let before = try election.fingerprint()
        let failed = try DeliveryTests.run(
            ["voter", "reissue", "--place", "1", "--voter", "member-1", "--ledger", election.ledger], stdout: sink,
            environment: election.environment)
        #expect(failed.status == 1, "\(sink): \(failed.err)")
        #expect(failed.err.split(separator: "\n").count == 1, "\(sink): \(failed.err)")
        #expect(failed.err.contains("the token was not re-issued (nothing was recorded)"), "\(sink): \(failed.err)")
        #expect(try election.fingerprint() == before, "\(sink): the re-issue was recorded")
        #expect(try election.ok(["status", "--place", "1", "--token", token]) == "not voted\n")
    }
}
