import Election
import FileStore
import Foundation
import Hummingbird
import HummingbirdTesting
import Ledger
import TestSupport
import Testing
import VoteLedger
import VoteServer

/// Bulk authorisation is one use case (`VoterList.authorize`): `vote voter authorize --from` and the voters
/// route's CSV body give the same answer for the same list, and the route records it in batches, one block
/// each, in the list's order (not a task per line).
@Suite struct VoterListEdgeTests {
    /// A header, a blank line, a line that is no identity, a voter listed twice, a phone number as people
    /// write it, and enough members to show the order.
    static let list =
        ["Voter ID", "m-1", "", "not an id!", "m-2", "m-1", "+82 10 1234 5678"] + (3...150).map { "m-\($0)" }

    /// What the command line answers for `list`: the refused lines (number, reason), the authorised voters
    /// as listed, and whether it skipped the header.
    static func commandLine() throws -> (rejected: [String], voters: [String], skippedHeader: Bool) {
        let root = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let ledger = root + "/ledger"
        #expect(try VoteBinary.run(["init", "--ledger", ledger, "--no-passphrase"]).status == 0)
        let place = try VoteBinary.run([
            "place", "create", "--ledger", ledger, "--name", "Board", "--registration", "now/+1h", "--voting",
            "+1h/+2h",
        ])
        #expect(place.status == 0, "\(place.err)")
        try list.joined(separator: "\n").write(toFile: root + "/list.csv", atomically: true, encoding: .utf8)
        let run = try VoteBinary.run([
            "voter", "authorize", "--ledger", ledger, "--place", "1", "--from", root + "/list.csv", "--tokens-out",
            root + "/tokens.csv",
        ])
        #expect(run.status == 1, "rejected lines fail the command: \(run.err)")
        let tokens = try String(contentsOfFile: root + "/tokens.csv", encoding: .utf8)
        SecretsLog.record(tokens.split(separator: "\n").compactMap { $0.split(separator: ",").last.map(String.init) })
        return (
            run.err.split(separator: "\n").filter { $0.hasPrefix("line ") }.map(String.init),
            tokens.split(separator: "\n").map { String($0.split(separator: ",")[0]) },
            run.err.contains("the first line is a header")
        )
    }

    @Test func theCommandLineAndTheVotersRouteAuthoriseAListAlike() async throws {
        let expected = try Self.commandLine()
        #expect(expected.rejected.count == 2)
        let fixture = try ServedLedger("voter list by route")
        let csv = Self.list.joined(separator: "\n")
        try await fixture.testRoutes { client in
            let place = try await client.executeRequest(
                uri: "/api/v1/places", method: .post, headers: fixture.auth, body: body(placeBody(from: fixture.start)))
            #expect(place.status == .created)
            let response = try await client.executeRequest(
                uri: "/api/v1/places/1/voters", method: .post, headers: adminHeaders(fixture.admin, csv: true),
                body: ByteBuffer(string: csv))
            #expect(response.status == .created)
            let answer = object(response.body)
            let issued = answer["tokens"] as? [[String: Any]] ?? []
            SecretsLog.record(issued.compactMap { $0["token"] as? String })
            let rejected = (answer["rejected"] as? [[String: Any]] ?? []).map {
                "line \($0["line"] as? Int ?? 0): \($0["message"] as? String ?? "")"
            }
            #expect(rejected == expected.rejected)
            #expect(issued.compactMap { $0["voter"] as? String } == expected.voters)
            #expect((answer["skipped_header"] as? Int == 1) == expected.skippedHeader)
        }
        // One batch, so one block, its authorisations in the list's order.
        var blocks = 0
        var voters = 0
        try fixture.source.forEachBlock(from: 0) { block in
            let authorised = block.events.filter { $0.type == ElectionEvent.Tag.voterAuthorized.rawValue }.count
            if authorised > 0 { blocks += 1 }
            voters += authorised
        }
        #expect(blocks == 1)
        #expect(voters == expected.voters.count)
    }
}

/// A megabyte of lines that are not identities, uploaded as a voter list: the answer lists the first 100
/// refusals by line number and counts them all, so it stays small (it was 27.9 MB), and nothing is recorded.
@Suite struct VoterListRefusalCapTests {
    @Test func aMegabyteOfBadLinesGetsASmallAnswer() async throws {
        let fixture = try ServedLedger("voter list refusals")
        try await fixture.testRoutes { client in
            let place = try await client.executeRequest(
                uri: "/api/v1/places", method: .post, headers: fixture.auth, body: body(placeBody(from: fixture.start)))
            #expect(place.status == .created)
            let head = try fixture.head()
            let lines = 1 << 19
            let csv = String(repeating: "!\n", count: lines)
            #expect(csv.utf8.count == 1 << 20)
            let started = Date()
            let response = try await client.executeRequest(
                uri: "/api/v1/places/1/voters", method: .post, headers: adminHeaders(fixture.admin, csv: true),
                body: ByteBuffer(string: csv))
            print(
                "1 MiB of bad voter lines answered in \(Date().timeIntervalSince(started)) s, \(response.body.readableBytes) bytes"
            )
            #expect(response.status == .created)
            #expect(response.body.readableBytes < 32 * 1024, "\(response.body.readableBytes) bytes")
            let answer = object(response.body)
            let rejected = answer["rejected"] as? [[String: Any]] ?? []
            #expect(rejected.compactMap { $0["line"] as? Int } == Array(1...100))
            #expect(rejected.allSatisfy { $0["code"] as? String == "invalid_identity" })
            #expect(answer["rejected_total"] as? Int == lines)
            #expect((answer["tokens"] as? [Any])?.isEmpty == true)
            #expect(try fixture.head() == head)
        }
    }
}
