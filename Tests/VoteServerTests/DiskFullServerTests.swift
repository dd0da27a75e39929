import Foundation
import Hummingbird
import HummingbirdTesting
import TestSupport
import Testing
import VoteLedger

/// A real full disk under a real `vote serve`: the ledger on a small tmpfs. Mounting needs root, as in CI;
/// elsewhere the test says why it did not run.
@Suite struct DiskFullServerTests {
    /// While the disk is full a vote is answered 503 with `Retry-After`, and the answer names no file; once
    /// space is freed the same server, not restarted, records the refused vote (nothing of it was recorded)
    /// and the next ones. The ledger verifies and counts exactly the acknowledged votes.
    @Test func votesOnAFullDiskAreRefusedUntilSpaceIsBack() async throws {
        let root = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let disk = root + "/disk"
        try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: false)
        let mounted = shell("mount -t tmpfs -o size=4m tmpfs '\(disk)'")
        guard mounted.status == 0 else {
            print("skipping the full-disk server test: cannot mount a tmpfs, which needs root (\(mounted.output))")
            return
        }
        defer { _ = shell("umount '\(disk)'") }
        let ledger = disk + "/ledger"
        let tokenFile = root + "/admin-token"
        let created = try VoteBinary.run(["init", "--name", "Full disk", "--no-passphrase", "--ledger", ledger])
        try #require(created.status == 0, "\(created.err)")

        // Registration, with room to spare.
        let start = Clock.now()
        let registration = try ServeProcess(ledger: ledger, clockOffset: 0, adminTokenFile: tokenFile)
        let admin = try String(contentsOfFile: tokenFile, encoding: .utf8).trimmingCharacters(
            in: .whitespacesAndNewlines)
        SecretsLog.record([admin])
        let tokens = try await registerPlace(
            .port(registration.port), admin: admin, start: start, candidates: ["A", "B"],
            voters: (0..<80).map { "member-\($0)" })
        #expect(registration.stop().status == 0)
        try #require(tokens.count == 80)

        // Voting opens; the disk fills. A vote or two may still fit in a page the log already has, so votes
        // go on until one finds no room.
        let offset = hour + 60_000
        let server = try ServeProcess(ledger: ledger, clockOffset: offset, adminTokenFile: tokenFile)
        let client = server.client()
        func vote(_ token: String) async throws -> TestClient.Response {
            try await client.post(
                "/api/v1/places/1/votes", headers: jsonHeaders, body: body(["candidate": 1, "token": token]))
        }
        // One vote while there is room: the voter table grows for the votes to come, so what the full disk
        // refuses below is the log's own write, which the writer must recover from.
        let first = try await vote(tokens[0])
        #expect(first.status == .created)
        let filled = shell("dd if=/dev/zero of='\(disk)/filler' bs=4096")
        #expect(filled.output.contains("No space left on device"), "\(filled.output)")
        var acknowledged = 1
        var refused: (token: String, response: TestClient.Response)?
        var next = 1
        while refused == nil, next < 60 {
            let response = try await vote(tokens[next])
            if response.status == .created { acknowledged += 1 } else { refused = (tokens[next], response) }
            next += 1
        }
        let full = try #require(refused, "60 votes fitted on a full disk")
        let text = String(buffer: full.response.body ?? ByteBuffer())
        #expect(full.response.status == .serviceUnavailable, "\(text)")
        #expect(errorCode(full.response.body) == "storage_full", "\(text)")
        #expect(full.response.headers[HTTPFields.Element.Name("Retry-After")!] != nil)
        #expect(!text.contains(root), "the answer names a file: \(text)")
        // Still full: refused again, the same way.
        let again = try await vote(full.token)
        #expect(again.status == .serviceUnavailable)
        #expect(errorCode(again.body) == "storage_full")

        // Space is back: the refused vote is recorded (it was not half-recorded before), and the next ones.
        try FileManager.default.removeItem(atPath: disk + "/filler")
        for token in [full.token] + tokens[next..<next + 5] {
            let response = try await vote(token)
            #expect(response.status == .created, "\(String(buffer: response.body ?? ByteBuffer()))")
            if response.status == .created { acknowledged += 1 }
        }
        try await client.shutdown()
        let stopped = server.stop()
        #expect(stopped.status == 0, "\(stopped.err)")
        #expect(stopped.err.contains("a block could not be written"), "\(stopped.err)")
        #expect(stopped.err.contains("the writer is back after the failed write"), "\(stopped.err)")

        let verified = try VoteBinary.run(["verify", "--ledger", ledger], clockOffset: offset)
        #expect(verified.status == 0, "\(verified.err)")
        let tally = try VoteBinary.run(["tally", "--place", "1", "--ledger", ledger], clockOffset: offset)
        #expect(tally.out.contains("turnout: \(acknowledged) of 80 "), "\(tally.out)")
    }
}
