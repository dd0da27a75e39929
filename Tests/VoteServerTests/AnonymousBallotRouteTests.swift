import BlindRSA
import FileStore
import Foundation
import Hummingbird
import HummingbirdTesting
import JSONViews
import Ledger
import LedgerCrypto
import Testing
import VoteLedger

@testable import VoteServer

/// An anonymous place over HTTP (`POST .../credentials`, `POST .../ballots`): the whole election as a voter's
/// device runs it (blind, have it signed, unblind, cast), and every refusal of the two routes, each recording
/// nothing.
@Suite struct AnonymousBallotRouteTests {
    /// A voter's device: a fresh credential prepared and blinded under the place's key.
    struct Device {
        let key: BlindRSAPublicKey
        let blinding: BlindRSABlinding

        init(_ key: BlindRSAPublicKey) throws {
            self.key = key
            blinding = try key.blind(try key.prepare(try SecureRandom.bytes(32)))
        }

        var request: [String: Any] { ["blinded_message": Base64URL.encode(blinding.blindedMessage)] }

        /// The signature of the credential, from the server's answer to the issuance request.
        func finalize(_ answer: [String: Any]) throws -> [UInt8] {
            let text = try #require(answer["blind_signature"] as? String)
            let blindSignature = try #require(Base64URL.decode(text))
            return try key.finalize(blindSignature, blinding: blinding)
        }

        func ballot(_ signature: [UInt8], candidate: Int) -> [String: Any] {
            [
                "credential": Base64URL.encode(blinding.preparedMessage), "signature": Base64URL.encode(signature),
                "candidate": candidate,
            ]
        }
    }

    /// On both stores: in a ledger directory, the ballot keys are files in its key directory, which a refused
    /// place must not leave behind.
    @Test(arguments: [ServedLedger.Store.memory, .file])
    func wholeAnonymousElectionAndEveryRefusal(_ store: ServedLedger.Store) async throws {
        let fixture = try ServedLedger("Anonymous Ballots", store: store)
        try await fixture.testRoutes { client in
            // A ballot kind that does not exist, and an anonymous place the rules refuse: no place, no key left.
            var place = placeBody(from: fixture.start, ballot: "secret")
            try await client.execute(uri: "/api/v1/places", method: .post, headers: fixture.auth, body: body(place)) {
                #expect($0.status == .badRequest && errorCode($0.body) == "bad_request")
            }
            place = placeBody(from: fixture.start, ballot: "anonymous")
            place["voting"] = ["start": iso(fixture.start - hour), "end": iso(fixture.start)]
            try await client.execute(uri: "/api/v1/places", method: .post, headers: fixture.auth, body: body(place)) {
                #expect($0.status == .badRequest && errorCode($0.body) == "invalid_windows")
            }
            let keys = KeyDirectory(defaultFor: fixture.path).path
            /// The ballot key files (none for a ledger in memory, which keeps its keys in memory).
            let ballotKeys = {
                store == .memory
                    ? [] : try FileManager.default.contentsOfDirectory(atPath: keys).filter { $0.hasPrefix("ballot-") }
            }
            #expect(try ballotKeys().isEmpty, "a refused place left its key")

            let codes = try await fixture.register(
                .router(client), ballot: "anonymous", candidates: ["Ada", "Grace"],
                voters: ["member-1", "member-2", "member-3"])
            // A second place, with ordinary tokens, for the refusals across kinds.
            let tokens = try await fixture.register(.router(client), id: 2, candidates: ["Lin"], voters: ["member-1"])
            #expect(try ballotKeys().count == (store == .memory ? 0 : 1))
            let shown = try await client.execute(uri: "/api/v1/places/1", method: .get) { object($0.body) }
            #expect(shown["ballot"] as? String == "anonymous" && shown["credentials_issued"] as? Int == 0)
            let keyText = try #require(shown["ballot_key"] as? String)
            let spki = try #require(Base64URL.decode(keyText))
            let key = try BlindRSAPublicKey(derRepresentation: spki)
            #expect(key.modulusBits >= 3072)
            try await client.execute(uri: "/api/v1/places/2", method: .get) {
                let other = object($0.body)
                #expect(other["ballot"] as? String == "token" && other["ballot_key"] == nil)
            }
            fixture.clock.set(fixture.start + hour + 1)

            func post(_ uri: String, _ json: [String: Any]) async throws -> (HTTPResponse.Status, [String: Any]) {
                try await client.execute(uri: uri, method: .post, headers: jsonHeaders, body: body(json)) {
                    ($0.status, object($0.body))
                }
            }
            func code(_ answer: [String: Any]) -> String? { (answer["error"] as? [String: Any])?["code"] as? String }
            let credentials = "/api/v1/places/1/credentials"
            let ballots = "/api/v1/places/1/ballots"

            // The booth's check before the confirmation step.
            var (status, answer) = try await post("/api/v1/places/1/status", ["token": codes[0]])
            #expect(status == .ok && answer["credential_issued"] as? Bool == false && answer["voted"] == nil)

            // Voter 1: issued, and the answer repeated (same code, same blinded message) without a new event.
            let first = try Device(key)
            (status, answer) = try await post(credentials, first.request.merging(["code": codes[0]]) { $1 })
            #expect(status == .ok && answer["repeated"] as? Bool == false)
            let receipt = try #require(answer["receipt"] as? [String: Any])
            #expect(receipt["candidate"] == nil && (receipt["receipt"] as? String)?.isEmpty == false)
            let signature = try first.finalize(answer)
            let head = try fixture.head()
            let (again, repeated) = try await post(credentials, first.request.merging(["code": codes[0]]) { $1 })
            #expect(again == .ok && repeated["repeated"] as? Bool == true && repeated["receipt"] == nil)
            #expect(repeated["blind_signature"] as? String == answer["blind_signature"] as? String)
            #expect(try fixture.head() == head, "a repeated issuance wrote a block")
            (status, answer) = try await post("/api/v1/places/1/status", ["token": codes[0]])
            #expect(answer["credential_issued"] as? Bool == true)

            // The code cannot have a second credential signed.
            (status, answer) = try await post(credentials, try Device(key).request.merging(["code": codes[0]]) { $1 })
            #expect(status == .conflict && code(answer) == "credential_already_issued")

            // Codes: a typo, an unknown one, a token of the other place.
            var typo = Array(codes[1])
            typo[0] = typo[0] == "A" ? "B" : "A"
            let unknown = try VotingToken.generate().display
            SecretsLog.record([String(typo), unknown])
            for (text, expected) in [
                (String(typo), "token_mistyped"), (unknown, "code_not_authorized"), (tokens[0], "code_not_authorized"),
            ] {
                (status, answer) = try await post(credentials, try Device(key).request.merging(["code": text]) { $1 })
                #expect(code(answer) == expected, "\(expected)")
            }
            // Blinded messages that are not one: not base64url, the wrong length.
            for blinded in ["not base64!", Base64URL.encode([1, 2, 3])] {
                (status, answer) = try await post(credentials, ["code": codes[1], "blinded_message": blinded])
                #expect(status == .badRequest, "\(blinded)")
            }
            // An ordinary place issues no credentials; an unknown place is not found.
            (status, answer) = try await post(
                "/api/v1/places/2/credentials", try Device(key).request.merging(["code": tokens[0]]) { $1 })
            #expect(status == .conflict && code(answer) == "not_anonymous")
            (status, _) = try await post(
                "/api/v1/places/9/credentials", try Device(key).request.merging(["code": codes[1]]) { $1 })
            #expect(status == .notFound)

            // Ballots read exactly: a field a ballot does not have, a candidate beyond 32 bits or below zero, and a
            // padded credential are each a 400 naming what is wrong, and nothing is recorded.
            let shapes: [([String: Any], String)] = [
                (first.ballot(signature, candidate: 1).merging(["place": 1]) { $1 }, "no field \"place\""),
                (first.ballot(signature, candidate: 1).merging(["candidate": 1 << 32]) { $1 }, "field \"candidate\""),
                (first.ballot(signature, candidate: 1).merging(["candidate": -1]) { $1 }, "field \"candidate\""),
                (
                    first.ballot(signature, candidate: 1).merging([
                        "credential": Base64URL.encode(first.blinding.preparedMessage) + "=="
                    ]) { $1 }, "credential"
                ),
            ]
            let before = try fixture.head()
            for (shape, named) in shapes {
                (status, answer) = try await post(ballots, shape)
                let message = (answer["error"] as? [String: Any])?["message"] as? String ?? ""
                #expect(status == .badRequest && message.contains(named), "\(named): \(answer)")
            }
            #expect(try fixture.head() == before, "a refused ballot wrote a block")

            // Casting: a forged signature, another place's kind, a token vote in the anonymous place.
            var forged = signature
            forged[forged.count - 1] ^= 1
            (status, answer) = try await post(ballots, first.ballot(forged, candidate: 1))
            #expect(status == .conflict && code(answer) == "invalid_ballot_signature")
            (status, answer) = try await post("/api/v1/places/2/ballots", first.ballot(signature, candidate: 1))
            #expect(status == .conflict && code(answer) == "not_anonymous")
            (status, answer) = try await post("/api/v1/places/1/votes", ["candidate": 1, "token": codes[1]])
            #expect(status == .conflict && code(answer) == "only_anonymous_ballots")
            (status, _) = try await post(ballots, ["credential": "@", "signature": "@", "candidate": 1])
            #expect(status == .badRequest)

            // The ballot, then the same credential again.
            (status, answer) = try await post(ballots, first.ballot(signature, candidate: 2))
            #expect(status == .created && answer["candidate"] as? Int == 2 && answer["place"] as? Int == 1)
            (status, answer) = try await post(ballots, first.ballot(signature, candidate: 1))
            #expect(status == .conflict && code(answer) == "credential_already_voted")

            // Voter 2 too; voter 3 never comes.
            let second = try Device(key)
            (status, answer) = try await post(credentials, second.request.merging(["code": codes[1]]) { $1 })
            (status, _) = try await post(ballots, second.ballot(try second.finalize(answer), candidate: 2))
            #expect(status == .created)

            try await client.execute(uri: "/api/v1/places/1/tally", method: .get) {
                let tally = object($0.body)
                let turnout = tally["turnout"] as? [String: Any]
                #expect(turnout?["authorized"] as? Int == 3 && turnout?["issued"] as? Int == 2)
                #expect(turnout?["voted"] as? Int == 2)
                let rows = tally["tally"] as? [[String: Any]] ?? []
                #expect(rows.map { $0["votes"] as? Int } == [0, 2])
            }
            try await client.execute(uri: "/api/v1/places/1", method: .get) {
                #expect(object($0.body)["credentials_issued"] as? Int == 2)
            }
        }
    }

    /// The answer to an issuance closes its connection (a keep-alive request, over a real socket), so a ballot
    /// cannot follow on the connection that carried the code.
    @Test func theIssuanceAnswerClosesItsConnection() async throws {
        let fixture = try ServedLedger("Issuance Connection")
        let codes = try await buildApplication(fixture.server, configuration: .init(), logger: quietLogger).test(
            .router
        ) { try await fixture.register(.router($0), ballot: "anonymous", candidates: ["Ada"], voters: ["member-1"]) }
        fixture.clock.set(fixture.start + hour + 1)
        let app = buildApplication(
            fixture.server, configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: quietLogger)
        try await app.test(.live) { live in
            let port = try #require(live.port)
            let keyText = try #require(object(try await fetch(port, "/api/v1/places/1").body)["ballot_key"] as? String)
            let device = try Device(try BlindRSAPublicKey(derRepresentation: try #require(Base64URL.decode(keyText))))
            let json = try JSONSerialization.data(
                withJSONObject: device.request.merging(["code": codes[0]]) { $1 }, options: .sortedKeys)
            let connection = try RawConnection(port: port)
            connection.giveUpReading(after: 600)
            let head =
                "POST /api/v1/places/1/credentials HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                + "Content-Length: \(json.count)\r\n\r\n"
            #expect(connection.send(Array(head.utf8) + Array(json)))
            let answer = String(decoding: await connection.readToEnd(), as: UTF8.self)
            #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer)")
            #expect(answer.lowercased().contains("connection: close"), "\(answer)")
            #expect(connection.closedByServer)
        }
        try await fixture.close()
    }

    /// Request ids are random, not a sequence in which the id a ballot's line leaves out could be found: `vote
    /// serve` answers requests one after another, and their logged ids are 32 hex digits, none within 2^32 of
    /// another (Hummingbird's own ids count up by one).
    @Test func requestIDsAreNoSequence() async throws {
        let election = try ProcessLedger("Unnumbered")
        let server = try election.serve(offset: 0)
        for _ in 0..<12 { #expect(try await fetch(server.port, "/api/v1/places").status == .ok) }
        let stopped = server.stop()
        #expect(stopped.status == 0)
        let ids = stopped.err.matches(of: #/hb\.request\.id=(\S+) /#).map { String($0.output.1) }
        #expect(ids.count == 12, "\(stopped.err)")
        #expect(ids.allSatisfy { $0.count == 32 && UInt64($0.suffix(16), radix: 16) != nil }, "\(ids)")
        let lows = ids.compactMap { UInt64($0.suffix(16), radix: 16) }
        for (offset, low) in lows.enumerated() {
            for other in lows[(offset + 1)...] {
                #expect(max(low, other) - min(low, other) > 1 << 32, "\(ids)")
            }
        }
    }

    /// `GET /api/v1/places/P/created`: the receipt of the place's creation, from which a voter's client takes the
    /// ballot key (`Auditor.anonymousPlace`: audited under the authority's key, the current head proven to extend it):
    /// the key the place's JSON shows for an anonymous place, none for a place with tokens, 404 for no place.
    @Test func creationReceiptProvesTheBallotKey() async throws {
        let fixture = try ServedLedger("Anonymous Ballots")
        try await fixture.testRoutes { client in
            _ = try await fixture.register(
                .router(client), ballot: "anonymous", candidates: ["Ada"], voters: ["member-1", "member-2"])
            _ = try await fixture.register(.router(client), id: 2, candidates: ["Lin"], voters: ["member-1"])
            let text = { (uri: String) in
                try await client.execute(uri: uri, method: .get) { String(buffer: $0.body) }
            }
            let key = try #require(
                SignedNote.publicKey(verifierKey: try await text("/api/v1/key").trimmingCharacters(in: .newlines))
            ).key
            let head = try #require(SignedNote(parsing: try await text("/api/v1/head")))
            let headSize = try #require(Checkpoint(text: head.text)).treeSize
            /// The place's ballot key as a voter's client reads it from the ledger.
            func ledgerKey(_ place: Int) async throws -> [UInt8] {
                let created = try await client.execute(uri: "/api/v1/places/\(place)/created", method: .get) {
                    #expect($0.status == .ok)
                    return object($0.body)
                }
                #expect(created["place"] as? Int == place && created["candidate"] == nil)
                let receiptText = try #require(created["receipt"] as? String)
                let receipt = try #require(TlogProof(parsing: receiptText))
                let size = try #require(created["tree_size"] as? Int)
                let proof = try await client.execute(
                    uri: "/api/v1/proofs/consistency?from=\(size)&to=\(headSize)", method: .get
                ) { (object($0.body)["proof"] as? [String] ?? []).compactMap { Digest(hex: $0) } }
                #expect(size < headSize, "the head is not later than the creation: the consistency check is not run")
                return try Auditor.anonymousPlace(place: UInt32(place), receipt: receipt, key: key, head: head) {
                    from, to in
                    #expect((from, to) == (UInt64(size), headSize))
                    return proof
                }.ballotKey
            }
            let shown = try await client.execute(uri: "/api/v1/places/1", method: .get) { object($0.body) }
            #expect(try await ledgerKey(1) == Base64URL.decode(try #require(shown["ballot_key"] as? String)))
            await #expect(throws: VoteError.self) { try await ledgerKey(2) }
            try await client.execute(uri: "/api/v1/places/9/created", method: .get) {
                #expect($0.status == .notFound && errorCode($0.body) == "place_not_found")
            }
        }
    }

    /// The casting route's access log line holds the time to the minute only and no request id or duration;
    /// every other route's keeps its milliseconds.
    @Test func castingRouteLogsNoFineTime() throws {
        var pipe: [Int32] = [0, 0]
        #expect(Foundation.pipe(&pipe) == 0)
        defer { close(pipe[0]) }
        let log = AccessLog(descriptor: pipe[1])
        for path in ["/api/v1/places/7/ballots", "/api/v1/places/7/votes"] {
            log.record(method: "POST", path: path, status: 201, elapsed: .milliseconds(3), requestID: "17")
        }
        log.flush()
        close(pipe[1])
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while case let count = read(pipe[0], &chunk, chunk.count), count > 0 { bytes += chunk[..<count] }
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n")
        try #require(lines.count == 2)
        let minuteOnly =
            #/\d{4}-\d\d-\d\dT\d\d:\d\dZ info vote.serve: method=POST path=/api/v1/places/7/ballots status=201 \[VoteServer\] request/#
        #expect(lines[0].wholeMatch(of: minuteOnly) != nil, "\(lines[0])")
        #expect(lines[1].contains(#/T\d\d:\d\d:\d\d\.\d{3}Z info vote.serve: hb.request.id=17 /#), "\(lines[1])")
    }
}
