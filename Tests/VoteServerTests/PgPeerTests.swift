import Foundation
import Hummingbird
import HummingbirdTesting
import LedgerCrypto
import TestSupport
import Testing

/// `Tools/pg-peer`, the server `Tools/bench-http` compares `vote serve` with, answers as the bench assumes: a vote
/// once per token (201 with a receipt of `vote serve`'s size, then 409), 404 for an unknown token or candidate,
/// 400 for a malformed body, and nothing written but the accepted votes, on a real PostgreSQL cluster.
@Suite struct PgPeerTests {
    static let tools = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Tools").standardized.path

    @Test func peerCastsEachTokenOnceAndRefusesTheRest() async throws {
        let directory = TemporaryDirectory()
        let cluster = directory.child("postgres")
        let started = try runToCompletion(Self.tools + "/pg-cluster", ["start", cluster])
        try #require(started.status == 0, "pg-cluster: \(started.err)")
        defer { _ = try? runToCompletion(Self.tools + "/pg-cluster", ["stop", cluster, "immediate"]) }

        let peer = try PeerProcess(socketDirectory: cluster)
        defer { peer.stop() }
        // Two tokens of place 1, whose candidates are 1 and 2: the hashes the peer computes from them.
        let first = "ABCD-EFGH-IJKL-MNOP-QRST-UVWX-YZ23-4567-Q"
        let second = "2345-6722-3456-7234-5672-3456-7234-5672"
        let hashes = [first, second].map(Self.hash)
        try Self.sql(
            cluster,
            "INSERT INTO candidates VALUES (1, 1), (1, 2); INSERT INTO voters (token_hash, place) VALUES "
                + hashes.map { "('\\x\($0)', 1)" }.joined(separator: ", "))

        func vote(_ body: String, place: Int = 1) async throws -> TestClient.Response {
            try await fetch(
                peer.port, "/api/v1/places/\(place)/votes", .post, headers: [.contentType: "application/json"],
                body: ByteBuffer(string: body))
        }
        // An unknown candidate writes nothing: the token still votes afterwards.
        #expect(try await vote(#"{"candidate": 9, "token": "\#(first)"}"#).status == .notFound)
        let accepted = try await vote(#"{"candidate": 2, "token": "\#(first.lowercased())"}"#)
        #expect(accepted.status == .created)
        let body = try #require(accepted.body)
        #expect(body.readableBytes == 2000)
        let receipt = try #require(
            try JSONSerialization.jsonObject(with: Data(String(buffer: body).utf8)) as? [String: Any])
        #expect(receipt["candidate"] as? Int == 2)
        #expect(receipt["token_hash"] as? String == hashes[0])
        #expect(try await vote(#"{"candidate": 1, "token": "\#(first)"}"#).status == .conflict)
        #expect(try await vote(#"{"candidate": 1, "token": "\#(second)"}"#, place: 2).status == .notFound)
        #expect(
            try await vote(#"{"candidate": 1, "token": "AAAA-AAAA-AAAA-AAAA-AAAA-AAAA-AAAA-AAAA"}"#).status == .notFound
        )
        #expect(try await vote(#"{"candidate": 1, "token": "not a token"}"#).status == .badRequest)
        #expect(try await vote(#"{"candidate": 1}"#).status == .badRequest)
        #expect(try await vote(#"{"candidate": 1, "token": "\#(second)"}"#).status == .created)

        #expect(try Self.sql(cluster, "SELECT string_agg(choice::text, ',' ORDER BY id) FROM votes") == "2,1")
        #expect(try Self.sql(cluster, "SELECT count(*) FROM voters WHERE voted") == "2")
        #expect(peer.stop() == 0, "SIGTERM stops the peer cleanly, as the bench stops it")
    }

    /// SHA-256 in hexadecimal of a token's 32 random characters, as `vote` hashes it.
    static func hash(_ token: String) -> String {
        SHA256.hash(token.uppercased().filter { $0 != "-" }.prefix(32).utf8).hex
    }

    /// Runs SQL with psql in the cluster's `vote` database; what it printed, unaligned, without headers.
    @discardableResult
    static func sql(_ cluster: String, _ statements: String) throws -> String {
        let bin = try #require(
            try FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql").sorted().last)
        let run = try runToCompletion(
            "/usr/lib/postgresql/\(bin)/bin/psql",
            ["-h", cluster, "-U", "postgres", "-d", "vote", "-v", "ON_ERROR_STOP=1", "-qAt", "-c", statements])
        try #require(run.status == 0, "psql: \(run.err)")
        return run.out.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// The built `pg-peer` on an ephemeral loopback port, with its tables made.
final class PeerProcess {
    let process = Process()
    let port: Int

    init(socketDirectory: String) throws {
        process.executableURL = URL(fileURLWithPath: builtProgram("pg-peer"))
        process.arguments = [socketDirectory, "vote", "4"]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.standardError
        try process.run()
        // "listening on URL" once it accepts and its tables exist (no sleep: the line is the signal).
        var text = ""
        while !text.contains("\n") {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        let port = text.split(separator: ":").last.flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        guard text.hasPrefix("listening on http://127.0.0.1:"), let port else {
            process.terminate()
            throw PeerError(output: text)
        }
        self.port = port
    }

    /// Sends SIGTERM (if it still runs) and waits: its exit status.
    @discardableResult
    func stop() -> Int32 {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        return process.terminationStatus
    }

    struct PeerError: Error, CustomStringConvertible {
        var output: String
        var description: String { "pg-peer did not start: \(output)" }
    }
}
