import FileStore
import Foundation
import Hummingbird
import HummingbirdTesting
import Ledger
import Testing
import VoteLedger

/// SIGKILL under load: every vote that got a 201 must be in the ledger after a restart, with its receipt
/// checking out, and the ledger must verify. The kill comes after a count of acknowledged votes, not after
/// a time, so the test does not depend on the machine's speed.
@Suite(.serialized) struct KillUnderLoadTests {
    /// The acknowledged votes, and the moment to pull the plug.
    actor Acknowledged {
        var receipts: [(token: String, receipt: String)] = []
        let killAfter: Int
        let kill: @Sendable () -> Void
        var killed = false
        init(killAfter: Int, kill: @escaping @Sendable () -> Void) {
            self.killAfter = killAfter
            self.kill = kill
        }
        func record(_ token: String, _ receipt: String) {
            receipts.append((token, receipt))
            if !killed, receipts.count >= killAfter {
                killed = true
                kill()
            }
        }
    }

    /// SIGKILL: the process dies mid-block; what was acknowledged survives, a torn tail is cut on restart.
    @Test func sigkillUnderLoadLosesNoAcknowledgedVote() async throws {
        try await stopUnderLoad(signal: SIGKILL)
    }

    /// SIGTERM: a graceful stop under load; requests in flight are answered, the last block is written, the
    /// ledger is closed cleanly (exit 0, no torn tail), and every acknowledged vote is in it.
    @Test func sigtermUnderLoadFinishesInFlightVotes() async throws {
        try await stopUnderLoad(signal: SIGTERM)
    }

    private func stopUnderLoad(signal: Int32) async throws {
        let election = try ProcessLedger("Kill Union")
        let ledger = election.ledger
        let tokens = try await election.register(candidates: ["Ada"], voters: (1...600).map { "member-\($0)" }).tokens
        #expect(tokens.count == 600)

        // Voting, 32 clients, killed once 150 votes are acknowledged.
        let offset = hour + 1000
        let server = try election.serve(offset: offset)
        let pid = server.process.processIdentifier
        let acknowledged = Acknowledged(killAfter: 150) { kill(pid, signal) }
        let port = server.port
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<32 {
                group.addTask {
                    let client = ServeProcess.client(port: port)
                    for token in stride(from: worker, to: tokens.count, by: 32).map({ tokens[$0] }) {
                        guard
                            let response = try? await client.post(
                                "/api/v1/places/1/votes", headers: jsonHeaders,
                                body: body(["candidate": 1, "token": token]))
                        else { break }  // the server is gone
                        // Every answer is a receipt or a rule's refusal: never a server error.
                        #expect(response.status == .created || response.status == .conflict, "\(response.status)")
                        if response.status == .created, let receipt = object(response.body)["receipt"] as? String {
                            await acknowledged.record(token, receipt)
                        }
                    }
                    try? await client.shutdown()
                }
            }
        }
        let stopped = server.stop(sending: nil)
        if signal == SIGKILL {
            #expect(server.process.terminationReason == .uncaughtSignal)
        } else {
            #expect(stopped.status == 0, "\(stopped.err)")
            #expect(!FileManager.default.fileExists(atPath: ledger + "/serve"))
            let report = try VoteBinary.run(["verify", "--json", "--ledger", ledger], clockOffset: offset)
            #expect(report.out.contains("\"torn_tail_bytes\":0"), "\(report.out)")
        }
        let receipts = await acknowledged.receipts
        #expect(receipts.count >= 150)

        // The ledger verifies as it was left (a torn tail at most), and again after a restart recovers it.
        let verified = try VoteBinary.run(["verify", "--ledger", ledger], clockOffset: offset)
        #expect(verified.status == 0, "\(verified.err)")
        let restarted = try election.serve(offset: offset)
        let audited = try AuditedLedger(FileBlockSource(path: ledger))
        for (_, text) in receipts {
            let proof = try #require(TlogProof(parsing: text))
            _ = try Auditor.audit(receipt: proof, ledger: audited, key: nil, head: nil)
        }
        let check = restarted.client()
        for (token, _) in receipts {
            let status = try await check.post(
                "/api/v1/places/1/status", headers: jsonHeaders, body: body(["token": token]))
            #expect(object(status.body)["voted"] as? Bool == true)
        }
        let tally = object(try await check.get("/api/v1/places/1/tally").body)
        let voted = (tally["turnout"] as? [String: Any])?["voted"] as? Int ?? 0
        #expect(voted >= receipts.count)
        try await check.shutdown()
        #expect(restarted.stop().status == 0)
        #expect(try VoteBinary.run(["verify", "--ledger", ledger], clockOffset: offset).status == 0)
    }
}
