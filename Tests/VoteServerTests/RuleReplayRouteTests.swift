import Election
import FileStore
import Foundation
import Hummingbird
import HummingbirdTesting
import Ledger
import Testing
import VoteLedger
import VoteServer

/// The read routes replay the ledger under the rules `vote verify` applies: a ledger that breaks one is
/// answered with verify's reason (`integrity_failure`), never counted.
@Suite struct RuleReplayRouteTests {
    /// While the server runs, someone holding the authority key and write access appends a signed block with
    /// a second vote by a token that has voted (written to a copy of the ledger, then over the served
    /// segment, as the served ledger's lock keeps another writer out). The tally, the results and the place
    /// list, which counted one vote before, now each answer `integrity_failure` with `vote verify`'s reason.
    @Test func readRoutesRefuseALedgerThatBreaksARule() async throws {
        let ledger = try ServedLedger("Rules everywhere")
        let app = buildApplication(ledger.server, configuration: .init(), logger: quietLogger)
        try await app.test(.router) { client in
            let tokens = try await ledger.register(.router(client), candidates: ["Ada", "Bo"], voters: ["member-1"])
            ledger.clock.set(ledger.start + hour + 1)
            let vote = try await client.executeRequest(
                uri: "/api/v1/places/1/votes", method: .post, headers: jsonHeaders,
                body: body(["candidate": 1, "token": tokens[0]]))
            #expect(vote.status == .created)
            let counted = try await client.executeRequest(
                uri: "/api/v1/places/1/tally", method: .get, headers: [:], body: nil)
            #expect(counted.status == .ok && (object(counted.body)["turnout"] as? [String: Any])?["voted"] as? Int == 1)

            let copy = ledger.root + "/copy"
            try FileManager.default.copyItem(atPath: ledger.path, toPath: copy)
            let store = try FileLedger.open(at: copy, keys: KeyDirectory(defaultFor: ledger.path).path, log: { _ in })
            let tokenHash = try #require(VotingToken(typed: tokens[0])).hash
            let again = ElectionEvent.voteCast(place: 1, candidate: 2, tokenHash: tokenHash).ledgerEvent
            try store.append([HashedEvent(again)], timestamp: store.head.timestamp + 1)
            store.close()
            for name in try FileManager.default.contentsOfDirectory(atPath: copy) where name.hasSuffix(".vlseg") {
                let served = try #require(FileHandle(forWritingAtPath: ledger.path + "/" + name))
                try served.write(contentsOf: try Data(contentsOf: URL(fileURLWithPath: copy + "/" + name)))
                try served.close()
            }

            var reason = ""
            do { _ = try ElectionVerifier.verify(LedgerReader(path: ledger.path)) } catch let error as VoteError {
                reason = error.message
            }
            #expect(reason.hasSuffix("breaks the rules: this token has already voted"), "\(reason)")
            for uri in ["/api/v1/places/1/tally", "/api/v1/results", "/api/v1/places", "/api/v1/places/1"] {
                let refused = try await client.executeRequest(uri: uri, method: .get, headers: [:], body: nil)
                #expect(errorCode(refused.body) == "integrity_failure", "\(uri): \(refused.status)")
                let message = (object(refused.body)["error"] as? [String: Any])?["message"] as? String
                #expect(message == reason, "\(uri)")
            }
        }
        await ledger.server.close()
    }
}
