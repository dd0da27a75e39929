import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import VoteLedger
import VoteServer

/// The check character of a token on the voter's routes: a typo is answered 400 `token_mistyped`, told apart
/// from a token the place does not know (`token_not_authorized`), and records nothing.
@Suite struct TokenCheckRouteTests {
    @Test func mistypedTokenIsToldApartFromAnUnknownOne() async throws {
        let fixture = try ServedLedger("Token Check Test")
        try await fixture.testRoutes { client in
            let tokens = try await fixture.register(.router(client), candidates: ["Ada"], voters: ["member-1"])
            fixture.clock.set(fixture.start + hour + 1)
            let issued = Array(try #require(VotingToken(typed: tokens[0])).compact)
            // The last random character changed: the check character no longer matches.
            let typo = String(issued[..<31]) + (issued[31] == "A" ? "B" : "A") + String(issued[32...])
            let unknown = try VotingToken.generate().display
            SecretsLog.record([typo, unknown])
            for route in ["/api/v1/places/1/status", "/api/v1/places/1/votes"] {
                let vote = route.hasSuffix("votes")
                let mistyped: [String: Any] = vote ? ["candidate": 1, "token": typo] : ["token": typo]
                try await client.execute(uri: route, method: .post, headers: jsonHeaders, body: body(mistyped)) {
                    #expect($0.status == .badRequest)
                    #expect(errorCode($0.body) == "token_mistyped")
                    #expect(!String(buffer: $0.body).contains(typo.prefix(8)))
                }
                let notKnown: [String: Any] = vote ? ["candidate": 1, "token": unknown] : ["token": unknown]
                try await client.execute(uri: route, method: .post, headers: jsonHeaders, body: body(notKnown)) {
                    #expect(errorCode($0.body) == "token_not_authorized")
                }
            }
            try await client.execute(uri: "/api/v1/places/1/tally", method: .get) {
                let turnout = object($0.body)["turnout"] as? [String: Any]
                #expect(turnout?["voted"] as? Int == 0)
            }
            // The token as issued, with its check character, votes.
            try await client.execute(
                uri: "/api/v1/places/1/votes", method: .post, headers: jsonHeaders,
                body: body(["candidate": 1, "token": tokens[0]])
            ) { #expect($0.status == .created) }
        }
    }
}
