import Foundation
import Hummingbird
import HummingbirdTesting
import Ledger
import LedgerCrypto
import Testing
import VoteLedger
import VoteServer

/// `POST /api/v1/places/{place}/voters/reissue`: the way back for a voter whose token was lost (a letter, or
/// an HTTP answer that never arrived).
@Suite struct ReissueRouteTests {
    @Test func reissueReplacesTheToken() async throws {
        let fixture = try ServedLedger("Reissue Test")
        let (start, clock, auth) = (fixture.start, fixture.clock, fixture.auth)
        try await fixture.testRoutes { client in
            let tokens = try await fixture.register(.router(client), candidates: ["Ada"], voters: ["member-1"])
            let reissue = "/api/v1/places/1/voters/reissue"
            try await client.execute(
                uri: reissue, method: .post, headers: jsonHeaders, body: body(["voter": "member-1"])
            ) { #expect($0.status == .unauthorized) }
            let token = try await client.execute(
                uri: reissue, method: .post, headers: auth, body: body(["voter": "Member-1"])
            ) {
                #expect($0.status == .created)
                let answer = object($0.body)
                #expect(answer["place"] as? Int == 1 && (answer["event_hash"] as? String)?.count == 64)
                return answer["token"] as? String ?? ""
            }
            SecretsLog.record([token])
            #expect(token.count == 41 && token != tokens[0])
            try await client.execute(uri: reissue, method: .post, headers: auth, body: body(["voter": "member-2"])) {
                #expect($0.status == .conflict)
                #expect(errorCode($0.body) == "voter_not_authorized")
            }
            try await client.execute(uri: reissue, method: .post, headers: auth, body: body(["voter": "bad@@one"])) {
                #expect($0.status == .badRequest)
                #expect(errorCode($0.body) == "invalid_identity")
            }
            try await client.execute(
                uri: "/api/v1/places/9/voters/reissue", method: .post, headers: auth, body: body(["voter": "member-1"])
            ) { #expect($0.status == .notFound) }

            clock.set(start + hour + 1)
            let votes = "/api/v1/places/1/votes"
            try await client.execute(
                uri: votes, method: .post, headers: jsonHeaders, body: body(["candidate": 1, "token": tokens[0]])
            ) {
                #expect($0.status == .conflict)
                #expect(errorCode($0.body) == "token_not_authorized")
            }
            try await client.execute(
                uri: votes, method: .post, headers: jsonHeaders, body: body(["candidate": 1, "token": token])
            ) { #expect($0.status == .created) }
            try await client.execute(uri: reissue, method: .post, headers: auth, body: body(["voter": "member-1"])) {
                #expect($0.status == .conflict)
                #expect(errorCode($0.body) == "voter_already_voted")
            }
            try await client.execute(uri: "/api/v1/places/1/tally", method: .get) {
                let turnout = object($0.body)["turnout"] as? [String: Any]
                #expect(turnout?["authorized"] as? Int == 1 && turnout?["voted"] as? Int == 1)
            }
        }
    }
}
