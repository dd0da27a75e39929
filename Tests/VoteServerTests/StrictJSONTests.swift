import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import VoteLedger
import VoteServer

/// Every JSON write route reads a body one way only: a key given twice, a number with a fraction or an
/// exponent, and an integer beyond 64 bits are a 400 that names the field, and nothing is recorded (before,
/// `{"candidate":1,"candidate":2}` voted for 1 and `1.9999999999999999` for 2).
@Suite struct StrictJSONTests {
    @Test func everyJSONWriteRouteRefusesWhatItWouldReadLoosely() async throws {
        let fixture = try ServedLedger("Strict")
        let (start, clock, auth) = (fixture.start, fixture.clock, fixture.auth)
        try await fixture.testRoutes { client in
            let tokens = try await fixture.register(
                .router(client), candidates: ["Ada", "Grace"], voters: ["member-1", "member-2"])
            clock.set(start + hour + 1)
            let token = tokens[0]
            let window = "{\"start\":\"\(iso(start + 3 * hour))\",\"end\":\"\(iso(start + 4 * hour))\"}"
            let later = "{\"start\":\"\(iso(start + 4 * hour))\",\"end\":\"\(iso(start + 5 * hour))\"}"
            let table: [(route: String, headers: HTTPFields, body: String, says: String)] = [
                (
                    "/api/v1/places/1/votes", jsonHeaders, #"{"candidate":1,"candidate":2,"token":"\#(token)"}"#,
                    #"field "candidate" appears more than once"#
                ),
                (
                    "/api/v1/places/1/votes", jsonHeaders,
                    #"{"candid\u0061te":1,"candidate":2,"token":"\#(token)"}"#,
                    #"field "candidate" appears more than once"#
                ),
                (
                    "/api/v1/places/1/votes", jsonHeaders,
                    #"{"candidate":1.9999999999999999,"token":"\#(token)"}"#,
                    #"field "candidate" must be an integer (no fraction or exponent)"#
                ),
                (
                    "/api/v1/places/1/votes", jsonHeaders, #"{"candidate":2.0,"token":"\#(token)"}"#,
                    "must be an integer"
                ),
                (
                    "/api/v1/places/1/votes", jsonHeaders, #"{"candidate":2e0,"token":"\#(token)"}"#,
                    "must be an integer"
                ),
                (
                    "/api/v1/places/1/votes", jsonHeaders, #"{"token":"\#(token)","candidate":1E0}"#,
                    "must be an integer"
                ),
                (
                    "/api/v1/places/1/votes", jsonHeaders,
                    #"{"candidate":-99999999999999999999,"token":"\#(token)"}"#, #"field "candidate" is out of range"#
                ),
                (
                    "/api/v1/places/1/status", jsonHeaders, #"{"token":"\#(token)","token":"\#(tokens[1])"}"#,
                    #"field "token" appears more than once"#
                ),
                (
                    "/api/v1/places", auth,
                    #"{"name":"N","registration":{"start":"x","start":"y","end":"z"},"voting":\#(later)}"#,
                    #"field "registration.start" appears more than once"#
                ),
                (
                    "/api/v1/places", auth,
                    #"{"name":"N","registration":\#(window),"voting":\#(later),"max_candidates":1.5}"#,
                    #"field "max_candidates" must be an integer"#
                ),
                (
                    "/api/v1/places/1/candidates", auth, #"{"name":"Edsger","name":"Barbara"}"#,
                    #"field "name" appears more than once"#
                ),
                (
                    "/api/v1/places/1/voters", auth, #"{"voter":"member-3","voter":"member-4"}"#,
                    #"field "voter" appears more than once"#
                ),
                (
                    "/api/v1/places/1/votes", jsonHeaders,
                    String(repeating: "[", count: 40) + String(repeating: "]", count: 40),
                    "nests objects and arrays deeper than"
                ),
            ]
            for row in table {
                let before = try fixture.head()
                try await client.execute(
                    uri: row.route, method: .post, headers: row.headers, body: ByteBuffer(string: row.body)
                ) {
                    #expect($0.status == .badRequest, "\(row.body)")
                    #expect(errorCode($0.body) == "malformed_json", "\(row.body)")
                    let message = (object($0.body)["error"] as? [String: Any])?["message"] as? String ?? ""
                    #expect(message.contains(row.says), "\(row.body): \(message)")
                    #expect(!message.contains(token), "the token was echoed")
                }
                #expect(try fixture.head() == before, "\(row.body): the ledger changed")
            }
            // Strict is not fussy: spaces, escapes in values and key order are as JSON allows.
            try await client.execute(
                uri: "/api/v1/places/1/votes", method: .post, headers: jsonHeaders,
                body: ByteBuffer(string: " {\n \"token\" : \"\(token)\" ,\t\"candidate\" : 2 } ")
            ) {
                #expect($0.status == .created)
                #expect(object($0.body)["candidate"] as? Int == 2)
            }
            try await client.execute(
                uri: "/api/v1/places/1/candidates", method: .post, headers: auth,
                body: ByteBuffer(string: #"{"name":"Ed\u0073ger","pledge":"a \"quoted\" pledge"}"#)
            ) { #expect(errorCode($0.body) == "registration_closed") }
        }
    }
}
