import Election
import FileStore
import Foundation
import Hummingbird
import HummingbirdTesting
import Ledger
import Testing
import VoteLedger
import VoteServer

/// The read routes answer from the election the writer published after its last durable block: they replay
/// nothing, so a block written behind the server's back is never counted, though `vote verify` refuses it.
@Suite struct RuleReplayRouteTests {
    /// While the server runs, someone holding the authority key and write access appends a signed block with
    /// a second vote by a token that has voted (written to a copy of the ledger, then over the served
    /// segment, as the served ledger's lock keeps another writer out). `vote verify` refuses the ledger with
    /// the rule it breaks; the tally, the results, the place list and the event stream still show the one
    /// vote the server recorded. On the file store: the block is written over the served files.
    @Test func readRoutesShowOnlyWhatTheWriterDecided() async throws {
        let ledger = try ServedLedger("Rules everywhere", store: .file)
        let app = buildApplication(ledger.server, configuration: .init(), logger: quietLogger)
        try await app.test(.router) { client in
            let tokens = try await ledger.register(.router(client), candidates: ["Ada", "Bo"], voters: ["member-1"])
            ledger.clock.set(ledger.start + hour + 1)
            let vote = try await client.executeRequest(
                uri: "/api/v1/places/1/votes", method: .post, headers: jsonHeaders,
                body: body(["candidate": 1, "token": tokens[0]]))
            #expect(vote.status == .created)
            var before: [String: ByteBuffer] = [:]
            let reads = [
                "/api/v1/places/1/tally", "/api/v1/results", "/api/v1/places", "/api/v1/places/1", "/api/v1/events",
            ]
            for uri in reads {
                before[uri] = try await client.executeRequest(uri: uri, method: .get, headers: [:], body: nil).body
            }
            #expect((object(before["/api/v1/places/1/tally"]!)["turnout"] as? [String: Any])?["voted"] as? Int == 1)

            let copy = ledger.root + "/copy"
            try FileManager.default.copyItem(atPath: ledger.path, toPath: copy)
            let store = try FileBlockStore.open(
                at: copy, keys: KeyDirectory(defaultFor: ledger.path).path, log: { _ in })
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
            do { _ = try ElectionVerifier.verify(ledger.source) } catch { reason = VoteError(error).message }
            #expect(reason.hasSuffix("breaks the rules: this token has already voted"), "\(reason)")
            for uri in reads {
                let after = try await client.executeRequest(uri: uri, method: .get, headers: [:], body: nil)
                #expect(after.status == .ok, "\(uri)")
                #expect(after.body == before[uri], "\(uri) changed")
            }
        }
        await ledger.server.close()
    }
}
