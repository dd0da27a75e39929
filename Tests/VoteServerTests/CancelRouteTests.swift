import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import VoteServer

/// `POST /api/v1/places/P/cancel` (FORMAT.md §11.30): the authority cancels a place before its voting opens,
/// decided by the contract; afterwards the place refuses every command and its status is cancelled.
@Suite struct CancelRouteTests {
    @Test func aPlaceIsCancelledAndWhatTheRulesRefuseIsAConflict() async throws {
        let fixture = try ServedLedger("cancel by route")
        try await fixture.testRoutes { client in
            let tokens = try await fixture.register(.router(client), candidates: ["Ada"], voters: ["member-1"])
            let cancelled = try await client.executeRequest(
                uri: "/api/v1/places/1/cancel", method: .post, headers: fixture.auth,
                body: body(["reason": " Merged with place 2 "]))
            #expect(cancelled.status == .ok, "\(String(buffer: cancelled.body))")
            let answer = object(cancelled.body)
            #expect(answer["status"] as? String == "cancelled" && answer["reason"] as? String == "Merged with place 2")
            let listed = try await client.execute(uri: "/api/v1/places/1", method: .get) { object($0.body) }
            #expect(listed["status"] as? String == "cancelled", "\(listed)")
            #expect(listed["cancellation_reason"] as? String == "Merged with place 2")
            let byStatus = try await client.execute(uri: "/api/v1/places?status=cancelled", method: .get) {
                String(buffer: $0.body)
            }
            #expect(byStatus.contains("Merged with place 2"), "\(byStatus)")

            let head = try fixture.head()
            let twice = try await client.executeRequest(
                uri: "/api/v1/places/1/cancel", method: .post, headers: fixture.auth, body: body([String: Any]()))
            #expect(twice.status == .conflict && errorCode(twice.body) == "cancellation_refused")
            let candidate = try await client.executeRequest(
                uri: "/api/v1/places/1/candidates", method: .post, headers: fixture.auth, body: body(["name": "Bo"]))
            #expect(candidate.status == .conflict && errorCode(candidate.body) == "place_cancelled")
            let unknown = try await client.executeRequest(
                uri: "/api/v1/places/9/cancel", method: .post, headers: fixture.auth, body: body([String: Any]()))
            #expect(unknown.status == .notFound)
            let unauthorised = try await client.executeRequest(
                uri: "/api/v1/places/1/cancel", method: .post, headers: [:], body: body([String: Any]()))
            #expect(unauthorised.status == .unauthorized)

            fixture.clock.set(fixture.start + hour + 1)
            let vote = try await client.executeRequest(
                uri: "/api/v1/places/1/votes", method: .post, headers: jsonHeaders,
                body: body(["candidate": 1, "token": tokens[0]]))
            #expect(vote.status == .conflict && errorCode(vote.body) == "place_cancelled")
            #expect(try fixture.head() == head)
            let tally = try await client.execute(uri: "/api/v1/places/1/tally", method: .get) { object($0.body) }
            #expect(tally["status"] as? String == "cancelled", "\(tally)")
        }
    }
}
