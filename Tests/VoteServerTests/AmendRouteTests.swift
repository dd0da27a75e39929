import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import VoteServer

/// `POST /api/v1/places/P/amend` (FORMAT.md §11.28): the console's correction of a place, decided by the contract.
@Suite struct AmendRouteTests {
    @Test func aPlaceIsAmendedAndWhatTheRulesRefuseIsAConflict() async throws {
        let fixture = try ServedLedger("amend by route")
        try await fixture.testRoutes { client in
            let place = try await client.executeRequest(
                uri: "/api/v1/places", method: .post, headers: fixture.auth, body: body(placeBody(from: fixture.start)))
            #expect(place.status == .created)
            let amended = try await client.executeRequest(
                uri: "/api/v1/places/1/amend", method: .post, headers: fixture.auth,
                body: body(["name": " Board of directors ", "description": "Three seats"]))
            #expect(amended.status == .ok, "\(String(buffer: amended.body))")
            #expect(object(amended.body)["name"] as? String == "Board of directors")
            let listed = try await client.execute(uri: "/api/v1/places/1", method: .get) { object($0.body) }
            #expect(listed["amendments"] as? Int == 1, "\(listed)")

            let head = try fixture.head()
            let same = try await client.executeRequest(
                uri: "/api/v1/places/1/amend", method: .post, headers: fixture.auth,
                body: body(["name": "Board of directors"]))
            #expect(same.status == .conflict)
            #expect((object(same.body)["error"] as? [String: Any])?["code"] as? String == "amendment_refused")
            let unknown = try await client.executeRequest(
                uri: "/api/v1/places/9/amend", method: .post, headers: fixture.auth, body: body(["name": "X"]))
            #expect(unknown.status == .notFound)
            let unauthorised = try await client.executeRequest(
                uri: "/api/v1/places/1/amend", method: .post, headers: [:], body: body(["name": "X"]))
            #expect(unauthorised.status == .unauthorized)
            #expect(try fixture.head() == head)
        }
    }
}
