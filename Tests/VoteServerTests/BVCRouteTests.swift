import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import VoteLedger
import VoteServer

// MARK: - The BVC client's parsing, type for type

/// The envelope as BVC's client reads it: `code` an Int and `message` a String or it gives up; `data` of the
/// route's type. `JSONDecoder` is strict: a string where an Int is expected, or a missing field, fails.
struct BVCEnvelope<Data: Decodable>: Decodable {
    var code: Int
    var message: String
    var data: Data
}

/// A place row (`placeid` and `isStarted` Int, dates String).
struct BVCPlace: Decodable {
    var placeid: Int
    var name: String
    var start_regist_period: String
    var end_regist_period: String
    var votedate: String
    var start_vote_time: String
    var end_vote_time: String
    var contents: String
    var isStarted: Int
}

/// A candidate row (every field a String, the place id included).
struct BVCCandidate: Decodable {
    var candidateid: String
    var name: String
    var candidateurl: String
    var candidatelogin: String
    var wantvote: String
}

/// A count row (`candidateresult` Int, the rest String).
struct BVCCount: Decodable {
    var candidateid: String
    var name: String
    var wantvote: String
    var candidateurl: String
    var candidateresult: Int
}

/// The client's view of one answer: HTTP 200 always, JSON, and the envelope decoded as `T` (the test fails
/// if it does not decode).
func bvc<T: Decodable>(
    _ response: TestResponse, as type: T.Type, sourceLocation: SourceLocation = #_sourceLocation
) throws -> BVCEnvelope<T> {
    #expect(response.status == .ok, sourceLocation: sourceLocation)
    #expect(response.headers[.contentType] == "application/json", sourceLocation: sourceLocation)
    #expect(response.headers[.cacheControl] == "no-store", sourceLocation: sourceLocation)
    return try JSONDecoder().decode(BVCEnvelope<T>.self, from: Data(response.body.readableBytesView))
}

/// An envelope's code and message, whatever its data.
struct BVCHead: Decodable {
    var code: Int
    var message: String
}

let formHeaders: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]

/// `name=value&…` form-encoded as a client's URL helper does (`+` for a space).
func form(_ pairs: KeyValuePairs<String, String>) -> String {
    var allowed = CharacterSet.alphanumerics
    allowed.insert(charactersIn: "-._~ ")
    return pairs.map { name, value in
        "\(name)=\(value.addingPercentEncoding(withAllowedCharacters: allowed)!.replacingOccurrences(of: " ", with: "+"))"
    }.joined(separator: "&")
}

/// Every BVC route in process, success and failure, parsed as the BVC client parses it.
@Suite struct BVCRouteTests {
    @Test func everyRouteAsTheClientParsesIt() async throws {
        let fixture = try ServedLedger("BVC Test")
        let (start, clock) = (fixture.start, fixture.clock)

        try await fixture.testRoutes { client in
            // The authority sets up place 1 (three candidates, the third withdrawn) and three voters.
            let tokens = try await fixture.register(
                .router(client), description: "The board of the union", candidates: ["Ada", "Grace", "Edsger"],
                voters: ["+15550000001", "+15550000002", "+15550000003"])
            #expect(tokens.count == 3)
            try await client.execute(
                uri: "/api/v1/places/1/candidates/3/withdraw", method: .post, headers: fixture.auth
            ) { #expect($0.status == .ok) }

            // Before voting: no started or ended place; a vote is refused by the window.
            for route in ["/getStartedPlace", "/getEndedPlace"] {
                let answer = try bvc(try await client.execute(uri: route, method: .get), as: [[BVCPlace]].self)
                #expect(answer.code == 200)
                #expect(answer.data.isEmpty)
            }
            let early = try bvc(
                try await client.execute(
                    uri: "/setVote?" + form(["placeid": "1", "candidateid": "1", "token": tokens[0]]), method: .get),
                as: String.self)
            #expect(early.code == 400)
            #expect(early.message == "Voting is not open in this place.")
            #expect(early.data == "")

            // Voting is open (the clock steps; nothing sleeps).
            clock.set(start + hour + 1)
            for method in [HTTPRequest.Method.get, .post] {
                let started = try bvc(
                    try await client.execute(uri: "/getStartedPlace", method: method, headers: formHeaders),
                    as: [[BVCPlace]].self)
                #expect(started.code == 200)
                #expect(started.data.count == 1 && started.data[0].count == 1)
                let row = try #require(started.data.first?.first)
                #expect(row.placeid == 1)
                #expect(row.name == "Board")
                #expect(row.contents == "The board of the union")
                #expect(row.isStarted == 1)
                #expect(row.start_regist_period == Timestamp.format(start))
                #expect(row.end_regist_period == Timestamp.format(start + hour))
                #expect(row.start_vote_time == Timestamp.format(start + hour))
                #expect(row.end_vote_time == Timestamp.format(start + 2 * hour))
                #expect(row.votedate == String(Timestamp.format(start + hour).prefix(10)))
                #expect(row.votedate.count == 10 && row.start_vote_time.hasSuffix("Z"))
            }
            // Candidates by GET query and by POST form: the withdrawn one is not offered.
            for (uri, method, payload) in [
                ("/getBookedCandidate?placeid=1", HTTPRequest.Method.get, nil),
                ("/getBookedCandidate", .post, ByteBuffer(string: "placeid=1")),
            ] {
                let booked = try bvc(
                    try await client.execute(uri: uri, method: method, headers: formHeaders, body: payload),
                    as: [[BVCCandidate]].self)
                #expect(booked.code == 200)
                #expect(booked.data.map(\.count) == [1, 1])
                #expect(booked.data.flatMap { $0 }.map(\.candidateid) == ["1", "2"])
                #expect(booked.data.flatMap { $0 }.map(\.name) == ["Ada", "Grace"])
                #expect(
                    booked.data.flatMap { $0 }.allSatisfy {
                        $0.wantvote == "1" && $0.candidateurl == "" && !$0.candidatelogin.isEmpty
                    })
            }

            // The credential: a token is valid and has not voted; a phone number is not a credential.
            let valid = try bvc(
                try await client.execute(uri: "/isAuth?" + form(["token": tokens[0]]), method: .get), as: String.self)
            #expect(valid.code == 200)
            let fresh = try bvc(
                try await client.execute(
                    uri: "/isAction", method: .post, headers: formHeaders,
                    body: ByteBuffer(string: form(["token": tokens[0]]))),
                as: String.self)
            #expect(fresh.code == 200)
            let registered = try bvc(
                try await client.execute(uri: "/setAuth?" + form(["phone": tokens[0]]), method: .get), as: String.self)
            #expect(registered.code == 200)
            let before = try fixture.head()
            let phone = try bvc(
                try await client.execute(
                    uri: "/setVote?" + form(["placeid": "1", "candidateid": "1", "phone": "01012345678"]), method: .get),
                as: String.self)
            #expect(phone.code == 400)
            #expect(phone.message == "The voting token is not valid.")
            let unknown = try bvc(
                try await client.execute(uri: "/isAuth?phone=01012345678", method: .get), as: String.self)
            #expect(unknown.code == 400)
            #expect(try fixture.head() == before)

            // Votes: by GET with `token`, and by POST form with `phone` (where BVC's client puts it).
            let first = try bvc(
                try await client.execute(
                    uri: "/setVote?" + form(["placeid": "1", "candidateid": "1", "token": tokens[0]]), method: .get),
                as: String.self)
            #expect(first.code == 200)
            #expect(first.data.count == 64 && first.data.allSatisfy { "0123456789abcdef".contains($0) })
            let second = try bvc(
                try await client.execute(
                    uri: "/setVote", method: .post, headers: formHeaders,
                    body: ByteBuffer(string: form(["placeid": "1", "candidateid": "2", "phone": tokens[1]]))),
                as: String.self)
            #expect(second.code == 200)
            // The receipt id is the vote's event hash in the ledger.
            try await client.execute(uri: "/api/v1/events?from=0", method: .get) {
                let text = String(buffer: $0.body)
                #expect(text.contains("\"hash\":\"\(first.data)\""))
                #expect(text.contains("\"hash\":\"\(second.data)\""))
            }

            // Refusals, each with its message (English, or Korean for a client preferring ko).
            let afterVotes = try fixture.head()
            let again = try bvc(
                try await client.execute(
                    uri: "/setVote?" + form(["placeid": "1", "candidateid": "2", "token": tokens[0]]), method: .get),
                as: String.self)
            #expect(again.code == 401)
            #expect(again.message == "This token has already voted.")
            let korean = try bvc(
                try await client.execute(
                    uri: "/setVote?" + form(["placeid": "1", "candidateid": "2", "token": tokens[0]]), method: .get,
                    headers: [.acceptLanguage: "ko-KR,ko;q=0.9,en;q=0.8"]),
                as: String.self)
            #expect(korean.code == 401)
            #expect(korean.message == "이미 투표하셨습니다.")
            let english = try bvc(
                try await client.execute(
                    uri: "/isAction?" + form(["token": tokens[0]]), method: .get,
                    headers: [.acceptLanguage: "en, ko;q=0.5"]),
                as: String.self)
            #expect(english.code == 401)
            #expect(english.message == "This token has already voted.")
            let refusals: [(query: KeyValuePairs<String, String>, code: Int, message: String)] = [
                (
                    ["placeid": "1", "candidateid": "9", "token": tokens[2]], 400,
                    "That candidate does not exist in this place."
                ),
                (["placeid": "1", "candidateid": "3", "token": tokens[2]], 400, "That candidate has withdrawn."),
                (["placeid": "2", "candidateid": "1", "token": tokens[2]], 400, "That place does not exist."),
                (
                    ["placeid": "99999999999999999999", "candidateid": "1", "token": tokens[2]], 400,
                    "That place does not exist."
                ),
                (["candidateid": "1", "token": tokens[2]], 400, "placeid is required: a place number."),
                (
                    ["placeid": "one", "candidateid": "1", "token": tokens[2]], 400,
                    "placeid is required: a place number."
                ),
                (["placeid": "1", "token": tokens[2]], 400, "candidateid is required: a candidate number."),
                (["placeid": "1", "candidateid": "1"], 400, "The voting token is required."),
                (
                    ["placeid": "1", "candidateid": "1", "token": "AAAA-AAAA-AAAA-AAAA-AAAA-AAAA-AAAA-AAAA"], 400,
                    "The voting token is not valid."
                ),
            ]
            for refusal in refusals {
                let answer = try bvc(
                    try await client.execute(uri: "/setVote?" + form(refusal.query), method: .get), as: String.self)
                #expect(answer.code == refusal.code, "\(refusal.query)")
                #expect(answer.message == refusal.message, "\(refusal.query)")
                #expect(answer.data == "")
            }
            // A body that is not a form, and a query that is not URL encoding: refused in the envelope.
            let json = try bvc(
                try await client.execute(
                    uri: "/setVote", method: .post, headers: jsonHeaders, body: body(["placeid": 1])), as: String.self)
            #expect(json.code == 400)
            let encoding = try bvc(
                try await client.execute(uri: "/getCounting?placeid=%FF", method: .get), as: [[BVCCount]].self)
            #expect(encoding.code == 400)
            #expect(encoding.data.isEmpty)
            #expect(try fixture.head() == afterVotes)

            // Counts, live.
            let counting = try bvc(
                try await client.execute(uri: "/getCounting?placeid=1", method: .get), as: [[BVCCount]].self)
            #expect(counting.code == 200)
            #expect(counting.data.flatMap { $0 }.map(\.candidateresult) == [1, 1])
            #expect(counting.data.flatMap { $0 }.map(\.candidateid) == ["1", "2"])
            #expect(counting.data.flatMap { $0 }.allSatisfy { $0.wantvote == "1" })
            for route in ["/getCounting", "/getBookedCandidate"] {
                let missing = try bvc(try await client.execute(uri: route, method: .get), as: [[BVCCandidate]].self)
                #expect(missing.code == 400)
                #expect(missing.message == "placeid is required: a place number.")
                let korean = try bvc(
                    try await client.execute(uri: route + "?placeid=7", method: .get, headers: [.acceptLanguage: "ko"]),
                    as: [[BVCCandidate]].self)
                #expect(korean.code == 400)
                #expect(korean.message == "해당 투표가 없습니다.")
            }

            // Voting has closed: the place is ended (isStarted 3) and no longer started.
            clock.set(start + 2 * hour + 1)
            let ended = try bvc(try await client.execute(uri: "/getEndedPlace", method: .get), as: [[BVCPlace]].self)
            #expect(ended.data.flatMap { $0 }.map(\.isStarted) == [3])
            #expect(ended.data.flatMap { $0 }.map(\.placeid) == [1])
            let none = try bvc(try await client.execute(uri: "/getStartedPlace", method: .get), as: [[BVCPlace]].self)
            #expect(none.data.isEmpty)
            let late = try bvc(
                try await client.execute(
                    uri: "/setVote?" + form(["placeid": "1", "candidateid": "1", "token": tokens[2]]), method: .get),
                as: String.self)
            #expect(late.code == 400)
            #expect(late.message == "Voting is not open in this place.")
        }
        // The phone number typed as a credential is in no block of the ledger.
        _ = try fixture.source.scanBlocks(from: 0) { block, place in
            #expect(Data(block).range(of: Data("01012345678".utf8)) == nil, "\(place) holds the phone number")
            return true
        }
    }
}

/// A parameter given twice (twice in the query, or in both the query and the form) is refused with BVC's
/// 400 and a message saying so, whichever values the copies hold: no copy decides the candidate, and
/// nothing is recorded. Each name once is a vote.
@Test func repeatedParametersAreRefused() async throws {
    let fixture = try ServedLedger("BVC Repeats")
    try await fixture.testRoutes { client in
        let tokens = try await fixture.register(
            .router(client), candidates: ["Ada", "Grace"], voters: ["+15550000001"])
        fixture.clock.set(fixture.start + hour + 1)
        let token = form(["token": tokens[0]])
        let head = try fixture.head()
        let cases: [(what: String, uri: String, method: HTTPRequest.Method, form: String?)] = [
            ("candidate twice in the query", "/setVote?placeid=1&candidateid=1&candidateid=2&" + token, .get, nil),
            ("the same candidate twice", "/setVote?placeid=1&candidateid=1&candidateid=1&" + token, .get, nil),
            ("candidate in query and form", "/setVote?candidateid=1", .post, "placeid=1&candidateid=2&" + token),
            ("token twice", "/setVote?placeid=1&candidateid=1&" + token + "&" + token, .get, nil),
            ("place in query and form", "/getBookedCandidate?placeid=1", .post, "placeid=1"),
        ]
        for row in cases {
            let response = try await client.execute(
                uri: row.uri, method: row.method, headers: formHeaders, body: row.form.map { ByteBuffer(string: $0) })
            #expect(response.status == .ok, "\(row.what)")
            let answer = try JSONDecoder().decode(BVCHead.self, from: Data(response.body.readableBytesView))
            #expect(answer.code == 400, "\(row.what)")
            #expect(
                answer.message
                    == "A parameter is given twice (twice in the URL, or in both the URL and the form); give each once.",
                "\(row.what)")
            #expect(try fixture.head() == head, "\(row.what): something was recorded")
        }
        let korean = try bvc(
            try await client.execute(
                uri: "/setVote?placeid=1&placeid=1&candidateid=1&" + token, method: .get,
                headers: [.acceptLanguage: "ko-KR"]),
            as: String.self)
        #expect(korean.code == 400 && korean.message.hasPrefix("같은 매개변수가 두 번 있습니다"))
        let vote = try bvc(
            try await client.execute(
                uri: "/setVote?placeid=1", method: .post, headers: formHeaders,
                body: ByteBuffer(string: "candidateid=2&" + token)),
            as: String.self)
        #expect(vote.code == 200 && vote.data.count == 64)
    }
}

extension LiveServerTests {
    /// A BVC client's flow against the real `vote serve`: list started places, their candidates, vote with
    /// the token in the URL (as `phone`), be told it already voted. The access log names the routes but
    /// holds no query string, so no token.
    @Test func bvcClientAgainstTheRealServer() async throws {
        let election = try ProcessLedger("BVC Live")
        // Registration: the authority sets up the place over the JSON API.
        let tokens = try await election.register(candidates: ["Ada"], voters: ["+821012345678", "member-2"]).tokens
        #expect(tokens.count == 2)

        // Voting, as BVC's client does it.
        let voting = try election.serve(offset: hour + 1000)
        do {
            let client = voting.client()
            func decode<T: Decodable>(_ response: TestClient.Response, as type: T.Type) throws -> BVCEnvelope<T> {
                #expect(response.status == .ok)
                return try JSONDecoder().decode(
                    BVCEnvelope<T>.self, from: Data((response.body ?? ByteBuffer()).readableBytesView))
            }
            let started = try decode(try await client.get("/getStartedPlace"), as: [[BVCPlace]].self)
            #expect(started.data.flatMap { $0 }.map(\.placeid) == [1])
            let booked = try decode(
                try await client.post(
                    "/getBookedCandidate", headers: formHeaders, body: ByteBuffer(string: "placeid=1")),
                as: [[BVCCandidate]].self)
            #expect(booked.data.flatMap { $0 }.map(\.candidateid) == ["1"])
            let vote = try decode(
                try await client.get("/setVote?" + form(["placeid": "1", "candidateid": "1", "phone": tokens[0]])),
                as: String.self)
            #expect(vote.code == 200)
            #expect(vote.data.count == 64)
            let again = try decode(try await client.get("/isAction?" + form(["token": tokens[0]])), as: String.self)
            #expect(again.code == 401)
            let counting = try decode(try await client.get("/getCounting?placeid=1"), as: [[BVCCount]].self)
            #expect(counting.data.flatMap { $0 }.map(\.candidateresult) == [1])
            try await client.shutdown()
        }
        let stopped = voting.stop()
        #expect(stopped.status == 0, "\(stopped.err)")
        #expect(stopped.err.contains("/setVote"), "the access log does not record the route")
        #expect(!stopped.err.contains("?"), "a query string reached the access log")
        for token in tokens { #expect(!stopped.err.contains(token), "a voting token reached the log") }
        #expect(!stopped.err.contains(tokens[0].replacingOccurrences(of: " ", with: "+")))
        #expect(try VoteBinary.run(["verify", "--ledger", election.ledger], clockOffset: hour + 1000).status == 0)
    }
}
