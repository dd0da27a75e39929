import BlindRSA
import Election
import Foundation
import Hummingbird
import HummingbirdTesting
import JSONViews
import Ledger
import LedgerCrypto
import Testing
import VoteLedger

@testable import VoteServer

/// A voter whose answer was lost: a vote or an anonymous ballot retried with the same `Idempotency-Key` gets
/// the first 201 and receipt again and is recorded once; and the receipt is fetched again with the token
/// (`POST …/receipt`) or the credential (`POST …/ballots/receipt`), the same receipt, which audits.
@Suite struct VoteRetryTests {
    /// Posts `json` to `uri` with `key` as the Idempotency-Key (none if nil): the status and the body.
    static func post(
        _ client: some TestClientProtocol, _ uri: String, _ json: [String: Any], key: String? = nil
    ) async throws -> (status: HTTPResponse.Status, body: ByteBuffer) {
        var headers = jsonHeaders
        if let key { headers[.idempotencyKey] = key }
        return try await client.execute(uri: uri, method: .post, headers: headers, body: body(json)) {
            ($0.status, $0.body)
        }
    }

    /// The receipt in an answer, checked as `vote audit` checks it against the ledger: the head's signature,
    /// the event's inclusion, and that the ledger extends the head. The event it names.
    static func audit(_ answer: ByteBuffer, ledger: any BlockSource) throws -> ElectionEvent? {
        let text = try #require(object(answer)["receipt"] as? String)
        let proof = try #require(TlogProof(parsing: text))
        let audited = try AuditedLedger(ledger)
        return try Auditor.audit(receipt: proof, ledger: audited, key: nil, head: nil).event
    }

    @Test func aRetriedVoteGetsItsReceiptAgain() async throws {
        let fixture = try ServedLedger("Vote Retry")
        try await fixture.testRoutes { client in
            let tokens = try await fixture.register(
                .router(client), candidates: ["Ada", "Grace"], voters: ["member-1", "member-2", "member-3"])
            let others = try await fixture.register(.router(client), id: 2, candidates: ["Lin"], voters: ["member-1"])
            fixture.clock.set(fixture.start + hour + 1)
            let votes = "/api/v1/places/1/votes"

            // The vote, then its retry with the same key and body: the same 201 and receipt, one vote recorded.
            let first = try await Self.post(client, votes, ["candidate": 2, "token": tokens[0]], key: "vote-0001")
            #expect(first.status == .created)
            let head = try fixture.head()
            let retry = try await Self.post(client, votes, ["candidate": 2, "token": tokens[0]], key: "vote-0001")
            #expect(retry.status == .created && retry.body == first.body)
            #expect(try fixture.head() == head, "the retry recorded something")
            // The same key with another body is refused as the admin routes refuse it; without a key the retry is
            // what it always was.
            let other = try await Self.post(client, votes, ["candidate": 1, "token": tokens[0]], key: "vote-0001")
            #expect(other.status == .unprocessableContent && errorCode(other.body) == "idempotency_key_reused")
            let unkeyed = try await Self.post(client, votes, ["candidate": 2, "token": tokens[0]])
            #expect(unkeyed.status == .conflict && errorCode(unkeyed.body) == "already_voted")
            #expect(try fixture.head() == head)

            // The receipt fetched again with the token: the 201's receipt, and it audits.
            let receipt = "/api/v1/places/1/receipt"
            let fetched = try await Self.post(client, receipt, ["token": tokens[0]])
            #expect(fetched.status == .ok)
            #expect(object(fetched.body)["receipt"] as? String == object(first.body)["receipt"] as? String)
            #expect(object(fetched.body)["event_hash"] as? String == object(first.body)["event_hash"] as? String)
            #expect(object(fetched.body)["candidate"] as? Int == 2)
            guard case .success(let voter) = VotingToken.parse(tokens[0]),
                case .voteCast(1, 2, voter.hash)? = try Self.audit(fetched.body, ledger: fixture.source)
            else {
                Issue.record("the fetched receipt does not audit as the vote")
                return
            }

            // A good token that has not voted: no receipt. An unknown token and a token of another place get one
            // and the same answer, the vote route's.
            let unvoted = try await Self.post(client, receipt, ["token": tokens[1]])
            #expect(unvoted.status == .notFound && errorCode(unvoted.body) == "not_voted")
            let unknown = try VotingToken.generate().display
            SecretsLog.record([unknown])
            let strangers = [
                try await Self.post(client, receipt, ["token": unknown]),
                try await Self.post(client, receipt, ["token": others[0]]),
                try await Self.post(client, votes, ["candidate": 1, "token": unknown]),
            ]
            #expect(errorCode(strangers[0].body) == "token_not_authorized")
            #expect(strangers.allSatisfy { $0.status == strangers[0].status && $0.body == strangers[0].body })

            // Failed attempts count as on the vote route: the burst (20) less the three above, then 429; a good
            // token is still answered.
            var refused = 0
            var limited = 0
            for _ in 0..<30 {
                let answer = try await Self.post(client, receipt, ["token": unknown])
                if errorCode(answer.body) == "token_not_authorized" { refused += 1 }
                if answer.status == .tooManyRequests && errorCode(answer.body) == "rate_limited" { limited += 1 }
            }
            #expect(refused == 17 && limited == 13)
            #expect(try await Self.post(client, receipt, ["token": tokens[0]]).status == .ok)
        }
    }

    @Test func aRetriedBallotGetsItsReceiptAgain() async throws {
        let fixture = try ServedLedger("Ballot Retry")
        try await fixture.testRoutes { client in
            let codes = try await fixture.register(
                .router(client), ballot: "anonymous", candidates: ["Ada", "Grace"], voters: ["member-1", "member-2"])
            let shown = try await client.execute(uri: "/api/v1/places/1", method: .get) { object($0.body) }
            let keyText = try #require(shown["ballot_key"] as? String)
            let key = try BlindRSAPublicKey(derRepresentation: try #require(Base64URL.decode(keyText)))
            fixture.clock.set(fixture.start + hour + 1)
            let device = try AnonymousBallotRouteTests.Device(key)
            let issued = try await Self.post(
                client, "/api/v1/places/1/credentials", device.request.merging(["code": codes[0]]) { $1 })
            #expect(issued.status == .ok)
            let signature = try device.finalize(object(issued.body))

            let ballots = "/api/v1/places/1/ballots"
            let first = try await Self.post(client, ballots, device.ballot(signature, candidate: 1), key: "ballot-1")
            #expect(first.status == .created)
            let head = try fixture.head()
            let retry = try await Self.post(client, ballots, device.ballot(signature, candidate: 1), key: "ballot-1")
            #expect(retry.status == .created && retry.body == first.body)
            #expect(try fixture.head() == head)
            let other = try await Self.post(client, ballots, device.ballot(signature, candidate: 2), key: "ballot-1")
            #expect(other.status == .unprocessableContent && errorCode(other.body) == "idempotency_key_reused")

            let receipt = "/api/v1/places/1/ballots/receipt"
            let credential = Base64URL.encode(device.blinding.preparedMessage)
            let fetched = try await Self.post(client, receipt, ["credential": credential])
            #expect(fetched.status == .ok)
            #expect(object(fetched.body)["receipt"] as? String == object(first.body)["receipt"] as? String)
            guard case .anonymousVoteCast(1, 1, _, _)? = try Self.audit(fetched.body, ledger: fixture.source) else {
                Issue.record("the fetched receipt does not audit as the ballot")
                return
            }
            let stranger = try AnonymousBallotRouteTests.Device(key)
            let unknown = try await Self.post(
                client, receipt, ["credential": Base64URL.encode(stranger.blinding.preparedMessage)])
            #expect(unknown.status == .notFound && errorCode(unknown.body) == "ballot_not_found")
            let byToken = try await Self.post(client, "/api/v1/places/1/receipt", ["token": codes[0]])
            #expect(byToken.status == .conflict && errorCode(byToken.body) == "only_anonymous_ballots")
        }
    }

    /// The real `vote serve` and `vote receipt --server`: a voter whose vote was recorded fetches its receipt
    /// from the server with the token, saves it, and `vote audit` checks it against the ledger.
    @Test func voteReceiptAsksTheServer() async throws {
        let election = try ProcessLedger("Receipt by server")
        let (_, tokens) = try await election.register(candidates: ["Ada"], voters: ["member-1", "member-2"])
        let served = try election.serve(offset: hour + 1000)
        defer { _ = served.stop() }
        let vote = try await fetch(
            served.port, "/api/v1/places/1/votes", .post, headers: jsonHeaders,
            body: body(["candidate": 1, "token": tokens[0]]))
        #expect(vote.status == .created)
        let server = ["--server", "http://127.0.0.1:\(served.port)"]
        let file = election.root + "/receipt.tlog-proof"
        let fetched = try VoteBinary.run(
            ["receipt", "--place", "1", "--token", tokens[0], "--out", file] + server, clockOffset: hour + 1000)
        #expect(fetched.status == 0, "\(fetched.err)")
        #expect(
            try String(contentsOfFile: file, encoding: .utf8) == object(vote.body)["receipt"] as? String,
            "the server's receipt is the one the vote was answered with")
        let audit = try VoteBinary.run(["audit", file] + election.location, clockOffset: hour + 1000)
        #expect(audit.status == 0, "\(audit.err)")
        // A token that has not voted: one line, exit 1 (not found), no file left behind.
        let none = try VoteBinary.run(
            ["receipt", "--place", "1", "--token", tokens[1], "--out", file + ".2"] + server, clockOffset: hour + 1000)
        #expect(none.status == 1 && none.err.contains("has cast no vote"), "\(none.err)")
        #expect(!FileManager.default.fileExists(atPath: file + ".2"))
    }
}
