import Foundation
import Testing

/// The audit commands as a user runs them: receipts, signed heads, certification, tampering.
@Suite struct CLIAuditTests {
    /// A vote's receipt audits before and fails after tampering; a published head proves the ledger
    /// extends it; results certify only after voting closes; bulk receipts all audit.
    @Test func auditWorkflow() throws {
        let election = try TestElection()
        let opens = try election.place()
        try election.ok(["candidate", "register", "--place", "1", "--name", "Alice"])
        try election.ok(["candidate", "register", "--place", "1", "--name", "Bob"])
        let token = try election.authorize("solo")
        let voters = election.write("voters.txt", (0..<50).map { "bulk-\($0)" }.joined(separator: "\n"))
        try election.ok([
            "voter", "authorize", "--place", "1", "--from", voters, "--tokens-out", election.root + "/tokens.csv",
        ])
        election.advance(to: opens)

        let receipt = election.root + "/receipt.tlog-proof"
        try election.ok(["cast", "--place", "1", "--candidate", "2", "--token", token, "--receipt-out", receipt])
        let tokens = try String(contentsOfFile: election.root + "/tokens.csv", encoding: .utf8).split(separator: "\n")
        let votes = election.write(
            "votes.txt", tokens.map { "\($0.split(separator: ",")[1]),1" }.joined(separator: "\n"))
        let receipts = election.root + "/receipts"
        try election.ok(["cast", "--place", "1", "--from", votes, "--receipts-out", receipts, "--batch", "20"])
        let files = try FileManager.default.contentsOfDirectory(atPath: receipts)
        #expect(files.count == 50)

        let early = try election.vote(["place", "close", "--place", "1"])
        #expect(
            early.status == 1 && early.err == "vote: results of place 1 can be certified only after voting has closed\n"
        )

        let head = try election.ok(["head"])
        let headFile = election.write("head.txt", head)
        #expect(head.hasPrefix("voteledger/") && head.contains("\n\n\u{2014} voteledger/"))
        let audit = try election.ok(["audit", receipt])
        #expect(audit.contains("receipt for a vote in place 1 for candidate 2"))
        #expect(audit.contains("included at height") && audit.contains("and unchanged since"))
        for file in files.prefix(3) { try election.ok(["audit", receipts + "/" + file, "--head", headFile]) }
        #expect(try election.ok(["audit", "--head", headFile]).contains("no rollback, no fork"))

        election.advance(to: opens.addingTimeInterval(3600))
        #expect(try election.ok(["place", "close", "--place", "1"]).contains("results of place 1 certified"))
        try election.ok(["verify"])

        // Edit the receipt: the first proof hash changes.
        var lines = try String(contentsOfFile: receipt, encoding: .utf8).components(separatedBy: "\n")
        lines[3] = String(lines[3].reversed())
        let edited = election.write("edited.tlog-proof", lines.joined(separator: "\n"))
        let failed = try election.vote(["audit", edited])
        #expect(failed.status == 3 || failed.status == 1, "\(failed.err)")
        #expect(failed.err.hasPrefix("vote: "))
        let notReceipt = try election.vote(["audit", headFile])
        #expect(notReceipt.status == 1 && notReceipt.err.contains("not a receipt"))
    }
}
