import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import VoteServer

/// `POST /api/v1/places/P/voters/withdraw` (FORMAT.md §11.29): the authority withdraws a voter who has not voted,
/// decided by the contract; the token stops voting and the place counts one voter fewer.
@Suite struct WithdrawRouteTests {
    @Test func aVoterIsWithdrawnAndWhatTheRulesRefuseIsAConflict() async throws {
        let fixture = try ServedLedger("withdraw by route")
        try await fixture.testRoutes { client in
            let tokens = try await fixture.register(
                .router(client), candidates: ["Ada"], voters: ["member-1", "member-2", "member-3"])
            let uri = "/api/v1/places/1/voters/withdraw"
            let withdrawn = try await client.executeRequest(
                uri: uri, method: .post, headers: fixture.auth, body: body(["identity": "member-3"]))
            #expect(withdrawn.status == .ok, "\(String(buffer: withdrawn.body))")
            let answer = object(withdrawn.body)
            #expect(answer["place"] as? Int == 1 && answer["authorized"] as? Int == 2 && answer["weight"] as? Int == 1)
            let listed = try await client.execute(uri: "/api/v1/places/1", method: .get) { object($0.body) }
            #expect(listed["withdrawn"] as? Int == 1, "\(listed)")

            let head = try fixture.head()
            let twice = try await client.executeRequest(
                uri: uri, method: .post, headers: fixture.auth, body: body(["identity": "member-3"]))
            #expect(twice.status == .conflict && errorCode(twice.body) == "withdrawal_refused")
            let never = try await client.executeRequest(
                uri: uri, method: .post, headers: fixture.auth, body: body(["identity": "member-9"]))
            #expect(never.status == .conflict && errorCode(never.body) == "withdrawal_refused")
            let malformed = try await client.executeRequest(
                uri: uri, method: .post, headers: fixture.auth, body: body(["identity": "bad@@one"]))
            #expect(malformed.status == .badRequest && errorCode(malformed.body) == "invalid_identity")
            let unknown = try await client.executeRequest(
                uri: "/api/v1/places/9/voters/withdraw", method: .post, headers: fixture.auth,
                body: body(["identity": "member-1"]))
            #expect(unknown.status == .notFound)
            let unauthorised = try await client.executeRequest(
                uri: uri, method: .post, headers: [:], body: body(["identity": "member-1"]))
            #expect(unauthorised.status == .unauthorized)
            #expect(try fixture.head() == head)

            // Voting open: the withdrawn voter's token is refused; a voter who voted cannot be withdrawn.
            fixture.clock.set(fixture.start + hour + 1)
            let votes = "/api/v1/places/1/votes"
            let refused = try await client.executeRequest(
                uri: votes, method: .post, headers: jsonHeaders, body: body(["candidate": 1, "token": tokens[2]]))
            #expect(refused.status == .conflict && errorCode(refused.body) == "token_not_authorized")
            let cast = try await client.executeRequest(
                uri: votes, method: .post, headers: jsonHeaders, body: body(["candidate": 1, "token": tokens[0]]))
            #expect(cast.status == .created || cast.status == .ok, "\(String(buffer: cast.body))")
            let voted = try await client.executeRequest(
                uri: uri, method: .post, headers: fixture.auth, body: body(["identity": "member-1"]))
            #expect(voted.status == .conflict && errorCode(voted.body) == "withdrawal_refused")
            let tally = try await client.execute(uri: "/api/v1/places/1/tally", method: .get) { object($0.body) }
            #expect(tally["withdrawn"] as? Int == 1)
            #expect((tally["turnout"] as? [String: Any])?["authorized"] as? Int == 2, "\(tally)")
        }
    }
}
