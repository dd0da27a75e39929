import FileStore
import Foundation
import Hummingbird
import HummingbirdTesting
import Ledger
import LedgerCrypto
import Testing
import VoteLedger
import VoteServer

/// Every route in process (no socket), on a real ledger, with each error status it can answer.
@Suite struct RouteTests {
    @Test func wholeElectionAndEveryError() async throws {
        let fixture = try ServedLedger("Route Test")
        let (start, clock, admin, auth) = (fixture.start, fixture.clock, fixture.admin, fixture.auth)
        try await fixture.testRoutes { client in
            // Admin: no token 401, wrong token 403.
            let place = placeBody(from: start)
            try await client.execute(uri: "/api/v1/places", method: .post, headers: jsonHeaders, body: body(place)) {
                #expect($0.status == .unauthorized)
                #expect(errorCode($0.body) == "unauthorized")
            }
            try await client.execute(
                uri: "/api/v1/places", method: .post,
                headers: [.contentType: "application/json", .authorization: "Bearer wrong"], body: body(place)
            ) { #expect($0.status == .forbidden) }
            try await client.execute(uri: "/api/v1/places", method: .post, headers: auth, body: body(place)) {
                #expect($0.status == .created)
                #expect(object($0.body)["place"] as? Int == 1)
            }
            // Malformed windows 400; a rule's refusal 409.
            var bad = place
            bad["voting"] = ["start": "tomorrow", "end": iso(start)]
            try await client.execute(uri: "/api/v1/places", method: .post, headers: auth, body: body(bad)) {
                #expect($0.status == .badRequest)
            }
            bad["voting"] = ["start": iso(start - 2 * hour), "end": iso(start - hour)]
            bad["registration"] = ["start": iso(start - 3 * hour), "end": iso(start - 2 * hour)]
            try await client.execute(uri: "/api/v1/places", method: .post, headers: auth, body: body(bad)) {
                #expect($0.status == .conflict)
                #expect(errorCode($0.body) == "voting_must_start_in_future")
            }
            // Candidates.
            for name in ["Ada", "Grace", "Edsger"] {
                try await client.execute(
                    uri: "/api/v1/places/1/candidates", method: .post, headers: auth, body: body(["name": name])
                ) { #expect($0.status == .created) }
            }
            try await client.execute(
                uri: "/api/v1/places/1/candidates", method: .post, headers: auth, body: body(["name": "ada"])
            ) {
                #expect($0.status == .conflict)
                #expect(errorCode($0.body) == "duplicate_candidate_name")
            }
            try await client.execute(
                uri: "/api/v1/places/9/candidates", method: .post, headers: auth, body: body(["name": "X"])
            ) {
                #expect($0.status == .notFound)
                #expect(errorCode($0.body) == "place_not_found")
            }
            try await client.execute(uri: "/api/v1/places/1/candidates/3/withdraw", method: .post, headers: auth) {
                #expect($0.status == .ok)
            }
            try await client.execute(uri: "/api/v1/places/1/candidates/7/withdraw", method: .post, headers: auth) {
                #expect($0.status == .notFound)
            }
            // Voters: one by JSON, several by CSV (a bad line is listed, not fatal).
            let token = try await client.execute(
                uri: "/api/v1/places/1/voters", method: .post, headers: auth, body: body(["voter": "+15550000001"])
            ) {
                #expect($0.status == .created)
                return object($0.body)["token"] as? String ?? ""
            }
            try await client.execute(
                uri: "/api/v1/places/1/voters", method: .post, headers: auth, body: body(["voter": "+15550000001"])
            ) { #expect(errorCode($0.body) == "voter_already_authorized") }
            try await client.execute(
                uri: "/api/v1/places/1/voters", method: .post, headers: auth, body: body(["voter": "no@spaces@allowed"])
            ) {
                #expect($0.status == .badRequest)
                #expect(errorCode($0.body) == "invalid_identity")
            }
            let csvTokens = try await client.execute(
                uri: "/api/v1/places/1/voters", method: .post,
                headers: adminHeaders(admin, csv: true),
                body: ByteBuffer(string: "member-2\n+15550000003\nbad@identity@\n\n")
            ) { response in
                #expect(response.status == .created)
                let answer = object(response.body)
                #expect((answer["rejected"] as? [[String: Any]])?.first?["line"] as? Int == 3)
                return (answer["tokens"] as? [[String: Any]] ?? []).compactMap { $0["token"] as? String }
            }
            #expect(csvTokens.count == 2)
            SecretsLog.record([token] + csvTokens)

            // Voting before the window: 409. Then the window opens (the clock steps, nothing sleeps).
            let vote = body(["candidate": 1, "token": token])
            try await client.execute(uri: "/api/v1/places/1/votes", method: .post, headers: jsonHeaders, body: vote) {
                #expect($0.status == .conflict)
                #expect(errorCode($0.body) == "voting_not_open")
            }
            clock.set(start + hour + 1)
            try await client.execute(uri: "/api/v1/places/1/candidates/1/withdraw", method: .post, headers: auth) {
                #expect(errorCode($0.body) == "withdrawal_closed")
            }
            let receipt = try await client.execute(
                uri: "/api/v1/places/1/votes", method: .post, headers: jsonHeaders, body: vote
            ) {
                #expect($0.status == .created)
                return object($0.body)
            }
            let proof = TlogProofText(receipt["receipt"] as? String ?? "")
            #expect(proof.valid)
            try await client.execute(uri: "/api/v1/places/1/votes", method: .post, headers: jsonHeaders, body: vote) {
                #expect($0.status == .conflict)
                #expect(errorCode($0.body) == "already_voted")
            }
            // Bad input: 400 malformed token or JSON, 415 content type, 413 too large, 404 candidate or place.
            try await client.execute(
                uri: "/api/v1/places/1/votes", method: .post, headers: jsonHeaders,
                body: body(["candidate": 1, "token": "SECRET"])
            ) {
                #expect($0.status == .badRequest)
                #expect(errorCode($0.body) == "malformed_token")
                #expect(!String(buffer: $0.body).contains("SECRET"))
            }
            try await client.execute(
                uri: "/api/v1/places/1/votes", method: .post, headers: jsonHeaders,
                body: ByteBuffer(string: "{\"candidate\":")
            ) {
                #expect($0.status == .badRequest)
                #expect(errorCode($0.body) == "malformed_json")
            }
            try await client.execute(
                uri: "/api/v1/places/1/votes", method: .post, headers: jsonHeaders,
                body: body(["candidate": -1, "token": token])
            ) {
                #expect($0.status == .badRequest)
            }
            try await client.execute(
                uri: "/api/v1/places/1/votes", method: .post, headers: [.contentType: "text/plain"], body: vote
            ) {
                #expect($0.status == .unsupportedMediaType)
            }
            try await client.execute(
                uri: "/api/v1/places/1/votes", method: .post, headers: jsonHeaders,
                body: ByteBuffer(string: "{\"token\":\"" + String(repeating: "A", count: 70_000) + "\"}")
            ) {
                #expect($0.status == .contentTooLarge)
                #expect(errorCode($0.body) == "body_too_large")
            }
            try await client.execute(
                uri: "/api/v1/places/1/votes", method: .post, headers: jsonHeaders,
                body: body(["candidate": 9, "token": csvTokens[0]])
            ) { #expect(errorCode($0.body) == "candidate_not_found") }
            try await client.execute(
                uri: "/api/v1/places/1/votes", method: .post, headers: jsonHeaders,
                body: body(["candidate": 3, "token": csvTokens[0]])
            ) { #expect(errorCode($0.body) == "candidate_withdrawn") }
            try await client.execute(uri: "/api/v1/places/abc/votes", method: .post, headers: jsonHeaders, body: vote) {
                #expect($0.status == .notFound)
            }
            try await client.execute(
                uri: "/api/v1/places/1/votes", method: .post, headers: jsonHeaders,
                body: body(["candidate": 2, "token": "AAAA-AAAA-AAAA-AAAA-AAAA-AAAA-AAAA-AAAA"])
            ) { #expect(errorCode($0.body) == "token_not_authorized") }
            // Status.
            try await client.execute(
                uri: "/api/v1/places/1/status", method: .post, headers: jsonHeaders, body: body(["token": token])
            ) {
                #expect($0.status == .ok)
                #expect(object($0.body)["voted"] as? Bool == true)
            }
            try await client.execute(
                uri: "/api/v1/places/1/status", method: .post, headers: jsonHeaders, body: body(["token": csvTokens[1]])
            ) {
                #expect(object($0.body)["voted"] as? Bool == false)
            }

            // Public reads.
            try await client.execute(uri: "/api/v1/places", method: .get) { #expect(array($0.body).count == 1) }
            try await client.execute(uri: "/api/v1/places?status=voting", method: .get) {
                #expect(array($0.body).count == 1)
            }
            try await client.execute(uri: "/api/v1/places?status=ended", method: .get) {
                #expect(array($0.body).isEmpty)
            }
            try await client.execute(uri: "/api/v1/places?status=bogus", method: .get) {
                #expect($0.status == .badRequest)
            }
            try await client.execute(uri: "/api/v1/places/1", method: .get) {
                #expect(object($0.body)["name"] as? String == "Board")
            }
            try await client.execute(uri: "/api/v1/places/2", method: .get) { #expect($0.status == .notFound) }
            try await client.execute(uri: "/api/v1/places/1/candidates", method: .get) {
                #expect(array($0.body).count == 3)
            }
            let treeSize = try await client.execute(uri: "/api/v1/places/1/tally", method: .get) { response in
                let tally = object(response.body)
                #expect((tally["turnout"] as? [String: Any])?["voted"] as? Int == 1)
                #expect((tally["tally"] as? [[String: Any]])?.first?["votes"] as? Int == 1)
                #expect(tally["certified_height"] is NSNull)  // present, null until certified
                return tally["tree_size"] as? Int ?? 0
            }
            try await client.execute(uri: "/api/v1/head", method: .get) {
                #expect(String(buffer: $0.body).hasPrefix("voteledger/"))
            }
            let index = receipt["index"] as? Int ?? 0
            try await client.execute(uri: "/api/v1/proofs/inclusion?index=\(index)&tree_size=\(treeSize)", method: .get)
            {
                #expect($0.status == .ok)
                #expect(object($0.body)["tree_size"] as? Int == treeSize)
            }
            try await client.execute(uri: "/api/v1/proofs/inclusion?index=\(treeSize)", method: .get) {
                #expect($0.status == .notFound)
            }
            try await client.execute(uri: "/api/v1/proofs/inclusion?index=x", method: .get) {
                #expect($0.status == .badRequest)
            }
            try await client.execute(uri: "/api/v1/proofs/consistency?from=2&to=\(treeSize)", method: .get) {
                #expect($0.status == .ok)
                #expect(!(object($0.body)["proof"] as? [String] ?? []).isEmpty)
            }
            try await client.execute(uri: "/api/v1/proofs/consistency?from=0", method: .get) {
                #expect($0.status == .badRequest)
            }
            try await client.execute(uri: "/api/v1/events?from=0", method: .get) {
                let lines = String(buffer: $0.body).split(separator: "\n")
                #expect(lines.count == treeSize)
                #expect(lines.last?.contains("vote_cast") == true)
            }
            try await client.execute(uri: "/api/v1/openapi.json", method: .get) { response in
                let paths = object(response.body)["paths"] as? [String: Any] ?? [:]
                for route in [
                    "/api/v1/places", "/api/v1/places/{place}", "/api/v1/places/{place}/candidates",
                    "/api/v1/places/{place}/candidates/{candidate}/withdraw", "/api/v1/places/{place}/tally",
                    "/api/v1/places/{place}/votes", "/api/v1/places/{place}/status", "/api/v1/places/{place}/voters",
                    "/api/v1/places/{place}/certify", "/api/v1/results", "/api/v1/head", "/api/v1/proofs/inclusion",
                    "/api/v1/proofs/consistency", "/api/v1/events", "/api/v1/openapi.json", "/api/v1/key",
                    "/api/v1/admin/check", "/metrics",
                ] { #expect(paths[route] != nil, "\(route) is not documented") }
            }
            try await client.execute(uri: "/api/v1/nowhere", method: .get) {
                #expect($0.status == .notFound)
                #expect(errorCode($0.body) == "not_found")
            }

            // Certification: refused before voting closes, then recorded; the place is in the results.
            try await client.execute(uri: "/api/v1/places/1/certify", method: .post, headers: auth) {
                #expect(errorCode($0.body) == "results_before_close")
            }
            clock.set(start + 2 * hour + 1)
            let late = body(["candidate": 1, "token": csvTokens[1]])
            try await client.execute(uri: "/api/v1/places/1/votes", method: .post, headers: jsonHeaders, body: late) {
                #expect($0.status == .conflict && errorCode($0.body) == "voting_closed")
            }
            let certified = try await client.execute(uri: "/api/v1/places/1/certify", method: .post, headers: auth) {
                #expect($0.status == .ok)
                #expect((object($0.body)["turnout"] as? [String: Any])?["voted"] as? Int == 1)
                return object($0.body)["height"] as? Int
            }
            // A later block (another place) moves the head; the tally still names the certification's block.
            let later = placeBody("Later", from: start + 3 * hour)
            try await client.execute(uri: "/api/v1/places", method: .post, headers: auth, body: body(later)) {
                #expect($0.status == .created)
            }
            try await client.execute(uri: "/api/v1/places/1/tally", method: .get) {
                let tally = object($0.body)
                #expect(certified != nil && tally["certified_height"] as? Int == certified)
                #expect((tally["height"] as? Int ?? 0) > (certified ?? .max))
            }
            try await client.execute(uri: "/api/v1/places/1/certify", method: .post, headers: auth) {
                #expect(errorCode($0.body) == "results_already_certified")
            }
            try await client.execute(uri: "/api/v1/results", method: .get) {
                #expect(array($0.body).first?["results"] != nil)
            }
        }
    }
}

extension RouteTests {
    /// A writer whose queue is full answers 503 with Retry-After, and nothing is recorded.
    @Test func fullQueueIsServiceUnavailable() async throws {
        // No room at all: every write finds the queue full.
        let fixture = try ServedLedger("Busy", capacity: 0)
        try await fixture.testRoutes { client in
            try await client.execute(
                uri: "/api/v1/places", method: .post, headers: fixture.auth, body: body(placeBody(from: fixture.start))
            ) {
                #expect($0.status == .serviceUnavailable)
                #expect($0.headers[HTTPFields.Element.Name("Retry-After")!] == "1")
                #expect(errorCode($0.body) == "overloaded")
            }
            try await client.execute(uri: "/api/v1/places", method: .get) { #expect(array($0.body).isEmpty) }
        }
    }
}

extension RouteTests {
    /// A CSV larger than the writer's queue is fed to it a part at a time: every identity is authorised.
    @Test func csvLargerThanTheQueue() async throws {
        let fixture = try ServedLedger("Bulk", capacity: 8)
        try await fixture.testRoutes { client in
            let tokens = try await fixture.register(.router(client), voters: (1...100).map { "member-\($0)" })
            #expect(tokens.count == 100)
        }
    }
}

/// A receipt's text: a C2SP tlog-proof document.
struct TlogProofText {
    let text: String
    init(_ text: String) { self.text = text }
    var valid: Bool { text.hasPrefix("c2sp.org/tlog-proof@v1\n") }
}

extension RouteTests {
    /// The web app at `/`: its files with their types, a strong ETag that a matching `If-None-Match` turns into
    /// a 304, revalidation, the security headers, a 404 for any other name; and the verifier key the audit
    /// page checks signed heads against, computed here from the genesis by the C2SP rule.
    @Test func webAppAndVerifierKey() async throws {
        let fixture = try ServedLedger("Web Test")
        try await fixture.testRoutes { client in
            let eTag = try await client.execute(uri: "/", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "text/html; charset=utf-8")
                #expect(String(buffer: response.body).contains(#"<script type="module" src="app.js"></script>"#))
                #expect(response.headers[.cacheControl] == "no-cache")
                #expect(response.headers[.xContentTypeOptions] == "nosniff")
                let policy = response.headers[.contentSecurityPolicy] ?? ""
                #expect(policy.contains("script-src 'self'") && policy.contains("frame-ancestors 'none'"))
                #expect(response.headers[HTTPFields.Element.Name("Referrer-Policy")!] == "no-referrer")
                return response.headers[.eTag] ?? ""
            }
            // The ETag is the SHA-256 of the bytes, as a strong tag.
            let source = #filePath.replacingOccurrences(
                of: "Tests/VoteServerTests/RouteTests.swift", with: "Sources/VoteServer/Web/index.html")
            let index = try #require(FileManager.default.contents(atPath: source))
            #expect(eTag == "\"\(SHA256.hash([UInt8](index)).hex)\"")
            try await client.execute(uri: "/", method: .get, headers: [.ifNoneMatch: "\"other\", \(eTag)"]) {
                #expect($0.status == .notModified)
                #expect($0.body.readableBytes == 0)
                #expect($0.headers[.eTag] == eTag)
            }
            try await client.execute(uri: "/", method: .get, headers: [.ifNoneMatch: "\"other\""]) {
                #expect($0.status == .ok)
            }
            try await client.execute(uri: "/app.js", method: .head) {
                #expect($0.status == .ok && $0.body.readableBytes == 0)
                #expect($0.headers[.eTag]?.count == 66)
                #expect($0.headers[.contentType] == "text/javascript; charset=utf-8")
            }
            let types = [("app.js", "text/javascript; charset=utf-8"), ("style.css", "text/css; charset=utf-8")]
            for (file, type) in types {
                try await client.execute(uri: "/" + file, method: .get) {
                    #expect($0.status == .ok)
                    #expect($0.headers[.contentType] == type)
                    #expect($0.body.readableBytes > 0)
                }
            }
            for missing in ["/nothing.js", "/api", "/Web/app.js", "/..%2FPackage.swift"] {
                try await client.execute(uri: missing, method: .get) { #expect($0.status == .notFound, "\(missing)") }
            }

            // The key: <origin>+<hex SHA-256(origin "\n" 0x01 key)[0..<4]>+<base64(0x01 key)>, the name on the head.
            let genesis = fixture.source.genesis
            let origin = "voteledger/\(genesis.ledgerID)"
            let keyID = SHA256.hash(Array(origin.utf8) + [0x0A, 0x01] + genesis.authorityKey).bytes.prefix(4)
            let encoded = Data([0x01] + genesis.authorityKey).base64EncodedString()
            let expected = "\(origin)+\(Hex.encode(Array(keyID)))+\(encoded)\n"
            try await client.execute(uri: "/api/v1/key", method: .get) {
                #expect($0.status == .ok)
                #expect($0.headers[.contentType] == "text/plain; charset=utf-8")
                #expect(String(buffer: $0.body) == expected)
            }
            try await client.execute(uri: "/api/v1/head", method: .get) {
                let head = String(buffer: $0.body)
                #expect(head.hasPrefix(origin + "\n"))
                let signature = head.split(separator: "\n").last { $0.hasPrefix("\u{2014} ") } ?? ""
                let signed = Data(base64Encoded: String(signature.split(separator: " ").last ?? "")) ?? Data()
                #expect(signature.hasPrefix("\u{2014} \(origin) ") && Array(signed.prefix(4)) == Array(keyID))
            }
        }
    }
}
