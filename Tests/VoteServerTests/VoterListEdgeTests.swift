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
        ["Voter ID", "m-1", "", "not@an@id", "m-2", "m-1", "+82 10 1234 5678"] + (3...150).map { "m-\($0)" }

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

/// The voters route reads a table as the association keeps it when told its identity column, and names a column
/// the header lacks.
@Suite struct VoterTableRouteTests {
    @Test func aTableByItsIdentityColumn() async throws {
        let fixture = try ServedLedger("voter table by route")
        try await fixture.testRoutes { client in
            let place = try await client.executeRequest(
                uri: "/api/v1/places", method: .post, headers: fixture.auth, body: body(placeBody(from: fixture.start)))
            #expect(place.status == .created)
            let table =
                "Name;E-mail;Unit\r\nJosé Álvarez;Jose@Example.org;2G-001\r\n\"Kim; Min-ji\";minji@example.org;2G-002\r\n"
            let head = try fixture.head()
            let missing = try await client.executeRequest(
                uri: "/api/v1/places/1/voters?identity_column=email", method: .post,
                headers: adminHeaders(fixture.admin, csv: true), body: ByteBuffer(string: table))
            #expect(missing.status == .badRequest)
            let error = object(missing.body)["error"] as? [String: Any] ?? [:]
            #expect(
                error["message"] as? String
                    == "the list has no column \"email\" (its header names \"Name\", \"E-mail\", \"Unit\")")
            #expect(try fixture.head() == head)
            let response = try await client.executeRequest(
                uri: "/api/v1/places/1/voters?identity_column=e-mail", method: .post,
                headers: adminHeaders(fixture.admin, csv: true), body: ByteBuffer(string: table))
            #expect(response.status == .created)
            let answer = object(response.body)
            let issued = answer["tokens"] as? [[String: Any]] ?? []
            SecretsLog.record(issued.compactMap { $0["token"] as? String })
            #expect(issued.compactMap { $0["voter"] as? String } == ["Jose@Example.org", "minji@example.org"])
            #expect(answer["skipped_header"] as? Int == 1)
            // The same member by another spelling is the voter already authorised.
            let again = try await client.executeRequest(
                uri: "/api/v1/places/1/voters", method: .post, headers: fixture.auth,
                body: body(["voter": "jose@EXAMPLE.org"]))
            #expect(again.status == .conflict || again.status == .unprocessableContent, "\(again.status)")
        }
    }
}

/// A megabyte of lines that are not identities, uploaded as a voter list: with one voter among them the answer
/// lists the first 100 refusals by line number and counts them all, so it stays small (it was 27.9 MB); with none,
/// it is a refusal that names the first line, and nothing is recorded.
@Suite struct VoterListRefusalCapTests {
    @Test func aMegabyteOfBadLinesGetsASmallAnswer() async throws {
        let fixture = try ServedLedger("voter list refusals")
        try await fixture.testRoutes { client in
            let place = try await client.executeRequest(
                uri: "/api/v1/places", method: .post, headers: fixture.auth, body: body(placeBody(from: fixture.start)))
            #expect(place.status == .created)
            let head = try fixture.head()
            let lines = 1 << 19
            let csv = String(repeating: "@\n", count: lines)
            #expect(csv.utf8.count == 1 << 20)
            let started = Date()
            let refused = try await client.executeRequest(
                uri: "/api/v1/places/1/voters", method: .post, headers: adminHeaders(fixture.admin, csv: true),
                body: ByteBuffer(string: csv))
            print(
                "1 MiB of bad voter lines answered in \(Date().timeIntervalSince(started)) s, \(refused.body.readableBytes) bytes"
            )
            #expect(refused.status == .unprocessableContent)
            let error = object(refused.body)["error"] as? [String: Any] ?? [:]
            #expect(error["code"] as? String == "nothing_authorized")
            #expect((error["message"] as? String)?.contains("line 1: voter identity must be") == true, "\(error)")
            #expect(try fixture.head() == head)

            let response = try await client.executeRequest(
                uri: "/api/v1/places/1/voters", method: .post, headers: adminHeaders(fixture.admin, csv: true),
                body: ByteBuffer(string: csv + "m-1\n"))
            #expect(response.status == .created)
            #expect(response.body.readableBytes < 32 * 1024, "\(response.body.readableBytes) bytes")
            let answer = object(response.body)
            let rejected = answer["rejected"] as? [[String: Any]] ?? []
            #expect(rejected.compactMap { $0["line"] as? Int } == Array(1...100))
            #expect(rejected.allSatisfy { $0["code"] as? String == "invalid_identity" })
            #expect(answer["rejected_total"] as? Int == lines)
            #expect((answer["tokens"] as? [[String: Any]])?.compactMap { $0["voter"] as? String } == ["m-1"])
        }
    }
}
