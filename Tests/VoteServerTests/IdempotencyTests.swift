import FileStore
import Foundation
import Hummingbird
import HummingbirdTesting
import Ledger
import LedgerCrypto
import NIOCore
import TestSupport
import Testing
import VoteLedger

@testable import VoteServer

#if canImport(Glibc)
    import Glibc
#endif

/// `Idempotency-Key` on the admin writes: a retry gets the first answer again, tokens included, and the ledger
/// records the request once.
@Suite struct IdempotencyTests {
    /// Against a real `vote serve`: a CSV authorisation whose connection is closed before the answer is read,
    /// retried with the same key, gives the voters' tokens; the ledger holds one authorisation per voter, and
    /// the tokens vote.
    @Test func droppedAnswerIsRecoveredByRetry() async throws {
        let ledger = try ProcessLedger("Idempotency Test")
        let server = try ledger.serve(offset: 0)
        let admin = try String(contentsOfFile: ledger.tokenFile, encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        SecretsLog.record([admin])
        let auth = adminHeaders(admin)
        #expect(
            try await fetch(
                server.port, "/api/v1/places", .post, headers: auth, body: body(placeBody(from: ledger.start))
            )
            .status == .created)
        #expect(
            try await fetch(
                server.port, "/api/v1/places/1/candidates", .post, headers: auth, body: body(["name": "Ada"])
            )
            .status == .created)

        // The first attempt: the request is sent whole, and the connection closed without reading the answer.
        let csv = "member-1\nmember-2\n"
        let dropped = try RawConnection(port: server.port)
        let request =
            "POST /api/v1/places/1/voters HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(admin)\r\n"
            + "Content-Type: text/csv\r\nIdempotency-Key: batch-0001\r\nContent-Length: \(csv.utf8.count)\r\n"
            + "Connection: close\r\n\r\n\(csv)"
        #expect(dropped.send(Array(request.utf8)))
        _ = consume dropped

        // The retry: while the first is still being answered it is told to wait; then it gets the answer.
        var headers = adminHeaders(admin, csv: true)
        headers[.idempotencyKey] = "batch-0001"
        let answer = try await waitFor(
            "the retry to be answered other than idempotency_key_in_use", every: .milliseconds(50),
            read: {
                try await fetch(
                    server.port, "/api/v1/places/1/voters", .post, headers: headers, body: ByteBuffer(string: csv))
            }, until: { $0.status != .conflict || errorCode($0.body) != "idempotency_key_in_use" })
        #expect(answer.status == .created, "\(String(buffer: answer.body ?? ByteBuffer()))")
        let tokens = (object(answer.body)["tokens"] as? [[String: Any]] ?? []).compactMap { $0["token"] as? String }
        SecretsLog.record(tokens)
        #expect(tokens.count == 2)
        let again = try await fetch(
            server.port, "/api/v1/places/1/voters", .post, headers: headers, body: ByteBuffer(string: csv))
        #expect(again.status == .created && again.body == answer.body, "a second retry gets the same answer")
        let stopped = server.stop()
        #expect(stopped.status == 0, "\(stopped.err)")

        let tally = try VoteBinary.run(["tally", "--place", "1", "--json", "--ledger", ledger.ledger])
        let turnout = (try JSONSerialization.jsonObject(with: Data(tally.out.utf8)) as? [String: Any])?["turnout"]
        #expect((turnout as? [String: Any])?["authorized"] as? Int == 2, "one authorisation per voter: \(tally.out)")
        let log = try VoteBinary.run(["log", "--ledger", ledger.ledger]).out
        #expect(log.components(separatedBy: "voter authorised in place 1").count == 3, "\(log)")
        for token in tokens {
            let status = try VoteBinary.run(["status", "--place", "1", "--token", token, "--ledger", ledger.ledger])
            #expect(status.out == "not voted\n", "the retried answer's tokens are the recorded ones: \(status.err)")
        }
    }

    /// In process: a retry gets the same status and body; a key reused for another request is refused 422; a
    /// refusal (409) is kept like any answer; other keys and requests without one are not affected; other admin
    /// writes (a candidate) are recorded once.
    @Test func sameKeySameAnswer() async throws {
        let fixture = try ServedLedger("Idempotency Rules")
        let (start, admin) = (fixture.start, fixture.admin)
        try await fixture.testRoutes { client in
            func headers(_ key: String?, csv: Bool = false) -> HTTPFields {
                var fields = adminHeaders(admin, csv: csv)
                if let key { fields[.idempotencyKey] = key }
                return fields
            }
            let place = body(placeBody(from: start))
            let created = try await client.execute(
                uri: "/api/v1/places", method: .post, headers: headers("place-1"), body: place
            ) { $0 }
            let replayed = try await client.execute(
                uri: "/api/v1/places", method: .post, headers: headers("place-1"), body: place
            ) { $0 }
            #expect(created.status == .created && replayed.status == .created && created.body == replayed.body)
            try await client.execute(
                uri: "/api/v1/places/1/candidates", method: .post, headers: headers("place-1"),
                body: body(["name": "A"])
            ) {
                #expect($0.status == .unprocessableContent)
                #expect(errorCode($0.body) == "idempotency_key_reused")
            }
            try await client.execute(
                uri: "/api/v1/places", method: .post, headers: headers("bad key with spaces"), body: place
            ) { #expect(errorCode($0.body) == "bad_idempotency_key") }

            let voter = body(["voter": "member-1"])
            let first = try await client.execute(
                uri: "/api/v1/places/1/voters", method: .post, headers: headers("voter-1"), body: voter
            ) { $0 }
            let second = try await client.execute(
                uri: "/api/v1/places/1/voters", method: .post, headers: headers("voter-1"), body: voter
            ) { $0 }
            #expect(first.status == .created && first.body == second.body, "the same token comes back")
            SecretsLog.record([object(first.body)["token"] as? String ?? ""])
            // Without the key (or with another) the request runs again, and the rules refuse it; that refusal is
            // itself kept for its key.
            for key in [nil, "voter-1-again", "voter-1-again"] {
                try await client.execute(
                    uri: "/api/v1/places/1/voters", method: .post, headers: headers(key), body: voter
                ) {
                    #expect($0.status == .conflict)
                    #expect(errorCode($0.body) == "voter_already_authorized")
                }
            }
            for _ in 0..<2 {
                try await client.execute(
                    uri: "/api/v1/places/1/candidates", method: .post, headers: headers("cand-1"),
                    body: body(["name": "Ada"])
                ) { #expect($0.status == .created) }
            }
            try await client.execute(uri: "/api/v1/places/1/candidates", method: .get) {
                #expect(array($0.body).count == 1, "the candidate was registered once")
            }
        }
        let view = try ElectionView.replay(fixture.source)
        #expect(view.state.place(1)?.authorized == 1)
    }

    /// The store keeps at most its bounds: the oldest answers go first, and answers older than the window go.
    @Test func storeIsBounded() throws {
        let store = IdempotencyStore(maxEntries: 3, maxBytes: 100)
        let answer = { (size: Int) in
            StoredResponse(status: .created, headers: [:], body: ByteBuffer(repeating: 0x41, count: size))
        }
        for key in 0..<5 {
            guard case .new = store.begin("k\(key)", fingerprint: .zero, now: 0) else {
                Issue.record("k\(key) is new")
                continue
            }
            store.finish("k\(key)", answer(10))
        }
        #expect(store.count == 3)
        guard case .new = store.begin("k0", fingerprint: .zero, now: 0) else {
            Issue.record("the oldest answer was dropped")
            return
        }
        guard case .replay = store.begin("k4", fingerprint: .zero, now: 1) else {
            Issue.record("the newest answer is kept")
            return
        }
        store.finish("k0", answer(90))
        #expect(store.count <= 2, "100 bytes of answers at most")
        store.finish("big", answer(101))
        guard case .new = store.begin("k4", fingerprint: .zero, now: IdempotencyStore.window + 1) else {
            Issue.record("an answer older than the window is dropped")
            return
        }
    }
}
