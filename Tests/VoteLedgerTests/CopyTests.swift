import Foundation
import TestSupport
import Testing

/// `vote copy`: a ledger written again elsewhere comes out byte for byte, verifies identically, and gives
/// the same receipts' answers; what cannot be copied is refused with one line and writes nothing.
@Suite struct CopyTests {
    /// An election with a place, two candidates, three voters and two votes, one with a saved receipt.
    static func election() throws -> (TestElection, receipt: String) {
        let election = try TestElection()
        let opens = try election.place()
        try election.ok(["candidate", "register", "--place", "1", "--name", "Alice"])
        try election.ok(["candidate", "register", "--place", "1", "--name", "Bob"])
        let tokens = try ["ann", "bo", "cy"].map { try election.authorize($0) }
        election.advance(to: opens)
        let receipt = election.root + "/ann.tlog-proof"
        try election.ok(["cast", "--place", "1", "--candidate", "1", "--token", tokens[0], "--receipt-out", receipt])
        try election.ok(["cast", "--place", "1", "--candidate", "2", "--token", tokens[1]])
        return (election, receipt)
    }

    /// The segments of a ledger directory, concatenated in order.
    static func segments(_ directory: String) throws -> Data {
        try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".vlseg") }.sorted()
            .reduce(into: Data()) { $0 += FileManager.default.contents(atPath: directory + "/" + $1)! }
    }

    @Test func aDirectoryCopiesByteForByte() throws {
        let (election, receipt) = try CopyTests.election()
        let copy = election.root + "/copy"
        let copied = try VoteCLI.run(
            ["copy", "--from", election.ledger, "--to", copy, "--json"], environment: election.environment)
        #expect(copied.status == 0, "\(copied.err)")
        #expect(copied.out.contains("\"blocks\""))
        #expect(try CopyTests.segments(copy) == CopyTests.segments(election.ledger))
        // The copy verifies as the source does and answers the voter's receipt (the writer's derived state, which
        // a copy has none of, aside).
        let verify = { (ledger: String) in
            var fields = try #require(
                try json(try VoteCLI.run(["verify", "--ledger", ledger, "--json"]).out) as? [String: Any])
            for key in ["seconds", "derived"] { fields[key] = nil }
            return String(
                decoding: try JSONSerialization.data(withJSONObject: fields, options: .sortedKeys), as: UTF8.self)
        }
        #expect(try verify(copy) == verify(election.ledger))
        let audited = try VoteCLI.run(["audit", "--ledger", copy, receipt])
        #expect(audited.status == 0, "\(audited.err)")
        // The copy's writer signs with the source's key directory.
        let tally = try VoteCLI.run(["tally", "--ledger", copy, "--place", "1", "--json"])
        #expect(tally.out.contains("\"voted\""))
    }

    @Test func aCopyIsRefusedWithoutTheKeyOrOntoALedger() throws {
        let (election, _) = try CopyTests.election()
        let elsewhere = election.root + "/nokeys"
        let noKey = try VoteCLI.run([
            "copy", "--from", election.ledger, "--to", election.root + "/x", "--keys", elsewhere,
        ])
        #expect(noKey.status != 0)
        #expect(noKey.err.contains("authority key"))
        #expect(!FileManager.default.fileExists(atPath: election.root + "/x"))
        let onto = try VoteCLI.run(["copy", "--from", election.ledger, "--to", election.ledger])
        #expect(onto.status != 0)
        #expect(onto.err.split(separator: "\n").count == 1, "\(onto.err)")
    }
}
