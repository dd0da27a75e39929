import Foundation
import Hummingbird
import HummingbirdTesting
import Ledger
import Testing
import VoteLedger
import VoteServer

/// What the read routes read and how their failures are answered: the election comes from the view the writer
/// published after its last durable block (no file opened, nothing replayed), blocks from the store's reader,
/// and a store's failure is answered by its kind, a damaged ledger as `integrity_failure`, never as the
/// server's own `internal_error`.
@Suite struct ReadBoundaryTests {
    /// Every store error as the server answers it, mapped in one place (`APIError.init(_:)`).
    @Test func storeErrorsAreAnsweredByTheirKind() {
        let cases: [(LedgerError, HTTPResponse.Status, String)] = [
            (
                .damaged(height: 3, file: "segment-00000000.vlseg", offset: 96, reason: "CRC mismatch"),
                .internalServerError, "integrity_failure"
            ),
            (.busy(pid: 42), .serviceUnavailable, "overloaded"),
            (.noSpace("no space left on device"), .serviceUnavailable, "storage_full"),
            (.io("the database is unreachable: connection refused"), .serviceUnavailable, "storage_unavailable"),
            (.headMoved("another writer appended block 9 first"), .serviceUnavailable, "storage_unavailable"),
            (.notALedger(path: "/nowhere", reason: "no such directory"), .notFound, "not_found"),
            (.invalidRequest("event 9 is not in a tree of 3 events"), .badRequest, "refused"),
        ]
        for (error, status, code) in cases {
            let answer = APIError(error)
            #expect(answer.status == status && answer.code == code, "\(error): \(answer.status) \(answer.code)")
        }
    }

    /// The routes that answer from the election (places, candidates, tallies, results, the signed head, the
    /// verifier key, BVC's lists) open no file: with the ledger directory moved away while the server runs,
    /// they answer as before, from the view the writer published. On the file store, whose directory can go.
    @Test func electionReadsOpenNoFile() async throws {
        let fixture = try ServedLedger("No files", store: .file)
        let app = buildApplication(fixture.server, configuration: .init(), logger: quietLogger)
        try await app.test(.router) { client in
            let tokens = try await fixture.register(.router(client), candidates: ["Ada", "Bo"], voters: ["member-1"])
            fixture.clock.set(fixture.start + hour + 1)
            let vote = try await client.executeRequest(
                uri: "/api/v1/places/1/votes", method: .post, headers: jsonHeaders,
                body: body(["candidate": 1, "token": tokens[0]]))
            #expect(vote.status == .created)
            let reads = [
                "/api/v1/places", "/api/v1/places/1", "/api/v1/places/1/candidates", "/api/v1/places/1/tally",
                "/api/v1/results", "/api/v1/key", "/getStartedPlace", "/getBookedCandidate?placeid=1",
                "/getCounting?placeid=1",
            ]
            var before: [String: ByteBuffer] = [:]
            for uri in reads {
                let answer = try await client.executeRequest(uri: uri, method: .get, headers: [:], body: nil)
                #expect(answer.status == .ok, "\(uri)")
                before[uri] = answer.body
            }
            #expect((object(before["/api/v1/places/1/tally"]!)["turnout"] as? [String: Any])?["voted"] as? Int == 1)

            let away = fixture.root + "/away"
            try FileManager.default.moveItem(atPath: fixture.path, toPath: away)
            for uri in reads {
                let answer = try await client.executeRequest(uri: uri, method: .get, headers: [:], body: nil)
                #expect(answer.status == .ok, "\(uri): \(answer.status) \(errorCode(answer.body) ?? "")")
                #expect(answer.body == before[uri], "\(uri) changed")
            }
            let head = try await client.executeRequest(uri: "/api/v1/head", method: .get, headers: [:], body: nil)
            #expect(head.status == .ok)
            try FileManager.default.moveItem(atPath: away, toPath: fixture.path)
        }
        try await fixture.close()
    }

    /// A ledger damaged under a running server (bytes flipped in a block's frame, as media damage or tampering
    /// would): every read route that reads that block answers 500 `integrity_failure` with the block's height,
    /// and BVC's routes their failure code. The routes that read blocks: the event stream (`GET /api/v1/events`),
    /// a token's status (`POST /api/v1/places/{place}/status`, BVC's `/isAuth`, `/isAction`, `/setAuth`), and a
    /// re-issue, which finds the voter's current token in the blocks (`POST /api/v1/places/{place}/voters/reissue`).
    /// (The proofs read the tree's indexes, which the damage does not touch; the election's routes read no block.)
    @Test func damagedBlockAnswersIntegrityFailure() async throws {
        let fixture = try ServedLedger("Damaged", store: .file)
        let app = buildApplication(fixture.server, configuration: .init(), logger: quietLogger)
        try await app.test(.router) { client in
            let tokens = try await fixture.register(
                .router(client), candidates: ["Ada", "Bo"], voters: ["member-1", "member-2"])
            fixture.clock.set(fixture.start + hour + 1)
            let vote = try await client.executeRequest(
                uri: "/api/v1/places/1/votes", method: .post, headers: jsonHeaders,
                body: body(["candidate": 1, "token": tokens[0]]))
            #expect(vote.status == .created)

            // Block 2 holds the place's creation; blocks after it keep the damage from looking like a torn tail.
            var damaged: BlockPlace?
            _ = try fixture.source.scanBlocks(from: 2) { _, place in
                damaged = place
                return false
            }
            let place = try #require(damaged)
            let handle = try #require(FileHandle(forUpdatingAtPath: fixture.path + "/" + place.file))
            let at = place.offset + place.length - 1
            try handle.seek(toOffset: at)
            let byte = try #require(try handle.read(upToCount: 1)?.first)
            try handle.seek(toOffset: at)
            try handle.write(contentsOf: Data([byte ^ 0x40]))
            try handle.close()

            let routes: [(String, HTTPRequest.Method, HTTPFields, ByteBuffer?)] = [
                ("/api/v1/events", .get, [:], nil),
                ("/api/v1/places/1/status", .post, jsonHeaders, body(["token": tokens[1]])),
                ("/api/v1/places/1/voters/reissue", .post, fixture.auth, body(["voter": "member-2"])),
            ]
            for (uri, method, headers, requestBody) in routes {
                let answer = try await client.executeRequest(
                    uri: uri, method: method, headers: headers, body: requestBody)
                #expect(answer.status == .internalServerError, "\(uri)")
                #expect(errorCode(answer.body) == "integrity_failure", "\(uri): \(errorCode(answer.body) ?? "")")
                let message = (object(answer.body)["error"] as? [String: Any])?["message"] as? String ?? ""
                #expect(message.contains("integrity failure") && message.contains("block 2"), "\(uri): \(message)")
            }
            for route in ["/isAuth", "/isAction", "/setAuth"] {
                let answer = try bvc(
                    try await client.executeRequest(
                        uri: route + "?" + form(["token": tokens[1]]), method: .get, headers: [:], body: nil),
                    as: String.self)
                #expect(answer.code == 500, "\(route)")
            }
        }
        // The damage stays (nothing repairs it), so the chain is not verified here.
        await fixture.server.close()
    }
}
