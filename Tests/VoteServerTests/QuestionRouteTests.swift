import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import VoteServer

/// The console creates a place that asks questions through `POST /api/v1/places` (`questions`, `revoting`), in
/// the form `vote place create --questions` reads; a question the file would refuse is refused here too, 400 in one
/// line, nothing written; voters cast answers, re-vote, and the tally counts the last ballot.
@Suite struct QuestionRouteTests {
    static var questions: [[String: Any]] {
        [
            ["title": "Board", "method": "choose", "max": 2, "options": ["Ana", "Ben", "Cy"]],
            ["title": "Bylaws", "method": "yes-no", "threshold": "2/3 of yes-and-no", "quorum": "1/4"],
            ["title": "Chair", "method": "rank", "seats": 1, "options": ["Ana", "Ben", "Cy"]],
        ]
    }

    @Test func theConsoleCreatesAQuestionsPlaceAndTheLastBallotCounts() async throws {
        let fixture = try ServedLedger("Questions Test")
        let (start, clock, auth) = (fixture.start, fixture.clock, fixture.auth)
        try await fixture.testRoutes { client in
            let before = try fixture.head()
            for (question, said) in [
                (
                    ["title": "Board", "method": "choose", "seat": 2, "options": ["a", "b"]],
                    #"question 1: unknown key \"seat\" for a choose question"#
                ),
                (["title": "Board", "method": "vote", "options": ["a"]], "method must be choose, yes-no or rank"),
                (
                    ["title": "Bylaws", "method": "yes-no", "threshold": "3/2 of ballots"],
                    "threshold must be a fraction"
                ),
                (["title": "Board", "method": "choose", "max": 3, "options": ["a", "b"]], "max"),
            ] as [([String: Any], String)] {
                var bad = placeBody(from: start)
                bad["questions"] = [question]
                try await client.execute(uri: "/api/v1/places", method: .post, headers: auth, body: body(bad)) {
                    let text = String(buffer: $0.body)
                    #expect($0.status == .badRequest && text.contains(said), "\(text)")
                }
            }
            var revotingOnly = placeBody(from: start)
            revotingOnly["revoting"] = true
            try await client.execute(uri: "/api/v1/places", method: .post, headers: auth, body: body(revotingOnly)) {
                #expect($0.status == .badRequest, "\(String(buffer: $0.body))")
            }
            #expect(try fixture.head() == before)

            var place = placeBody(from: start)
            place["questions"] = Self.questions
            place["revoting"] = true
            try await client.execute(uri: "/api/v1/places", method: .post, headers: auth, body: body(place)) {
                #expect($0.status == .created, "\(String(buffer: $0.body))")
            }
            try await client.execute(uri: "/api/v1/places/1", method: .get) {
                let shown = object($0.body)
                #expect(shown["revoting"] as? Bool == true)
                let asked = shown["questions"] as? [[String: Any]] ?? []
                #expect(asked.map { $0["title"] as? String } == ["Board", "Bylaws", "Chair"])
                #expect(asked.dropFirst().first?["threshold"] as? String == "2/3 of yes-and-no")
            }
            var tokens: [String] = []
            for voter in ["member-1", "member-2", "member-3"] {
                tokens.append(
                    try await client.execute(
                        uri: "/api/v1/places/1/voters", method: .post, headers: auth, body: body(["voter": voter])
                    ) { object($0.body)["token"] as? String ?? "" })
            }
            SecretsLog.record(tokens)
            // A weight: refused out of range (a negative one too) in the rule's words, nothing written; then given.
            for weight in [-5, 0, 1_000_001] {
                try await client.execute(
                    uri: "/api/v1/places/1/voters", method: .post, headers: auth,
                    body: body(["voter": "member-4", "weight": weight])
                ) {
                    let text = String(buffer: $0.body)
                    #expect($0.status == .badRequest && text.contains("invalid_weight"), "\(weight): \(text)")
                }
            }
            try await client.execute(
                uri: "/api/v1/places/1/voters", method: .post, headers: auth,
                body: body(["voter": "member-4", "weight": 3])
            ) { #expect($0.status == .created, "\(String(buffer: $0.body))") }
            clock.set(start + hour + 1)
            for (token, answers) in zip(tokens, ["1,2;yes;1>2", "1,3;yes;2>1", "2;no;3>1>2"]) {
                try await client.execute(
                    uri: "/api/v1/places/1/votes", method: .post, headers: jsonHeaders,
                    body: body(["answers": answers, "token": token])
                ) { #expect($0.status == .created, "\(String(buffer: $0.body))") }
            }
            // Certifying before the close is refused as early, not as a place with candidates.
            try await client.execute(uri: "/api/v1/places/1/certify", method: .post, headers: auth, body: body([:])) {
                let text = String(buffer: $0.body)
                #expect($0.status == .conflict && text.contains("only after voting has closed"), "\(text)")
            }
            // The third voter changes their mind: only this ballot counts.
            try await client.execute(
                uri: "/api/v1/places/1/votes", method: .post, headers: jsonHeaders,
                body: body(["answers": "1;yes;1>3", "token": tokens[2]])
            ) { #expect($0.status == .created, "\(String(buffer: $0.body))") }
            try await client.execute(uri: "/api/v1/places/1/tally", method: .get) {
                let counts = object($0.body)["questions"] as? [[String: Any]] ?? []
                #expect(counts.count == 3)
                let board = (counts.first?["options"] as? [[String: Any]] ?? []).map { $0["members"] as? Int }
                #expect(board == [3, 1, 1], "\(counts.first ?? [:])")
                let bylaws = counts.dropFirst().first ?? [:]
                #expect(bylaws["passed"] as? Bool == true, "\(bylaws)")
                let turnout = object($0.body)["turnout"] as? [String: Any] ?? [:]
                #expect(turnout["authorized_weight"] as? Int == 6 && turnout["voted_weight"] as? Int == 3, "\(turnout)")
            }
        }
    }
}
