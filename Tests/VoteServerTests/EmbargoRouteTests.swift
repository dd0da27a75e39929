import Foundation
import Hummingbird
import HummingbirdTesting
import Ledger
import Testing
import VoteServer

/// A place created with `"results": "after-close"` shows no counts on the public routes until voting ends, then
/// shows them; the events themselves stay public.
@Suite struct EmbargoRouteTests {
    @Test func countsHiddenUntilVotingEnds() async throws {
        let fixture = try ServedLedger("Embargo Test")
        let (start, clock, auth) = (fixture.start, fixture.clock, fixture.auth)
        try await fixture.testRoutes { client in
            // A results choice that is neither live nor after-close is refused, and writes nothing.
            let before = try fixture.head()
            var bad = placeBody(from: start)
            bad["results"] = "sometimes"
            try await client.execute(uri: "/api/v1/places", method: .post, headers: auth, body: body(bad)) {
                #expect($0.status == .badRequest)
                #expect(String(buffer: $0.body).contains("results must be live or after-close"))
            }
            #expect(try fixture.head() == before)

            var embargoed = placeBody(from: start)
            embargoed["results"] = "after-close"
            try await client.execute(uri: "/api/v1/places", method: .post, headers: auth, body: body(embargoed)) {
                #expect($0.status == .created)
            }
            try await client.execute(
                uri: "/api/v1/places", method: .post, headers: auth, body: body(placeBody("Open", from: start))
            ) {
                #expect($0.status == .created)
            }
            var tokens: [Int: String] = [:]
            for place in [1, 2] {
                for name in ["Ada", "Grace"] {
                    try await client.execute(
                        uri: "/api/v1/places/\(place)/candidates", method: .post, headers: auth,
                        body: body(["name": name])
                    ) { #expect($0.status == .created) }
                }
                tokens[place] = try await client.execute(
                    uri: "/api/v1/places/\(place)/voters", method: .post, headers: auth,
                    body: body(["voter": "member-\(place)"])
                ) { object($0.body)["token"] as? String ?? "" }
            }
            SecretsLog.record(Array(tokens.values))
            clock.set(start + hour + 1)
            for place in [1, 2] {
                try await client.execute(
                    uri: "/api/v1/places/\(place)/votes", method: .post, headers: jsonHeaders,
                    body: body(["candidate": 2, "token": tokens[place]!])
                ) { #expect($0.status == .created) }
            }

            // Voting: the embargoed place's tally has no rows and says why; the other place counts live.
            try await client.execute(uri: "/api/v1/places/1/tally", method: .get) {
                let tally = object($0.body)
                #expect(tally["embargoed"] as? Bool == true)
                #expect((tally["tally"] as? [Any])?.isEmpty == true)
                #expect(!String(buffer: $0.body).contains("\"votes\""))
            }
            try await client.execute(uri: "/api/v1/places/2/tally", method: .get) {
                let tally = object($0.body)
                #expect(tally["embargoed"] as? Bool == false)
                #expect((tally["tally"] as? [[String: Any]])?.map { $0["votes"] as? Int } == [0, 1])
            }
            try await client.execute(uri: "/api/v1/places/1", method: .get) {
                #expect(object($0.body)["results_after_close"] as? Bool == true)
                #expect(object($0.body)["results"] == nil)
            }
            try await client.execute(uri: "/getCounting?placeid=1", method: .get) {
                #expect((object($0.body)["data"] as? [Any])?.isEmpty == true)
            }
            try await client.execute(uri: "/getCounting?placeid=2", method: .get) {
                #expect((object($0.body)["data"] as? [Any])?.count == 2)
            }

            // After the close the counts are shown.
            clock.set(start + 2 * hour)
            try await client.execute(uri: "/api/v1/places/1/tally", method: .get) {
                let tally = object($0.body)
                #expect(tally["embargoed"] as? Bool == false)
                #expect((tally["tally"] as? [[String: Any]])?.map { $0["votes"] as? Int } == [0, 1])
            }
            try await client.execute(uri: "/getCounting?placeid=1", method: .get) {
                #expect((object($0.body)["data"] as? [Any])?.count == 2)
            }
        }
    }
}
