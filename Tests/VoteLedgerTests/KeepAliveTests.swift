import Foundation
import TestSupport
import Testing

@testable import BlockingHTTP
@testable import VoteLedger

/// `BlockingHTTP.Client` against a real server (`Tests/keepalive/keepalive_server.py`, over TLS with a test
/// certificate or plain) that counts the connections, TLS handshakes and requests a client costs it: many
/// requests on one connection and one handshake, a connection the server closed while idle (or as a request came)
/// replaced once, answers framed by Content-Length, chunks, `Connection: close` or the connection's end, and
/// hostile answers refused in one line.
@Suite struct KeepAliveTests {
    /// A self-signed certificate for 127.0.0.1 and localhost, made by the openssl tool: its PEM file and key.
    static func certificate(in directory: String) throws -> (certificate: String, key: String) {
        let (certificate, key) = (directory + "/server.pem", directory + "/server.key")
        let made = try runToCompletion(
            "/usr/bin/env",
            [
                "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-days", "2", "-subj", "/CN=keepalive", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
                "-keyout", key, "-out", certificate,
            ])
        #expect(made.status == 0, "\(made.err)")
        return (certificate, key)
    }

    static let deadline = Duration.seconds(300)

    /// `path`'s answer on `client`: status and body text.
    static func get(
        _ client: BlockingHTTP.Client, _ path: String, idempotent: Bool = true
    ) throws -> (status: Int, body: String) {
        let reply = try client.request(
            "GET", path: path, idempotent: idempotent, maxReply: 64 * 1024, deadline: .now + deadline)
        return (reply.status, String(decoding: reply.body, as: UTF8.self))
    }

    @Test func manyRequestsShareOneConnectionAndOneTLSHandshake() throws {
        let root = TemporaryDirectory()
        let (certificate, key) = try Self.certificate(in: root.path)
        let server = try KeepAliveServer(["--cert", certificate, "--key", key], in: root.path)
        let client = BlockingHTTP.Client(host: "127.0.0.1", port: server.port, tls: true, trusting: certificate)
        for round in 0..<12 {
            let path = round % 2 == 0 ? "/sized" : "/chunked"
            let answer = try Self.get(client, path)
            #expect(answer.status == 200 && answer.body == String(path.dropFirst()) + "\n", "\(path): \(answer)")
        }
        #expect(server.count("request /sized") == 6 && server.count("request /chunked") == 6, "\(server.log)")
        #expect(server.count("connection") == 1 && server.count("handshake") == 1, "\(server.log)")
        // A one-shot request still has a connection of its own, closed after it.
        let once = try BlockingHTTP.request(
            "GET", host: "127.0.0.1", port: server.port, tls: true, trusting: certificate, path: "/chunked",
            maxReply: 1024, deadline: .now + Self.deadline)
        #expect(String(decoding: once.body, as: UTF8.self) == "chunked\n")
        #expect(server.count("connection") == 2 && server.count("handshake") == 2, "\(server.log)")
    }

    @Test func aConnectionTheServerClosesIsReplacedOnce() throws {
        let root = TemporaryDirectory()
        let server = try KeepAliveServer(in: root.path)
        let client = BlockingHTTP.Client(host: "127.0.0.1", port: server.port, tls: false)
        // Closed after an answer while idle, unannounced: the next request goes on a new connection.
        #expect(try Self.get(client, "/sized").body == "sized\n")
        #expect(try Self.get(client, "/hang-up").body == "sized\n")
        #expect(try Self.get(client, "/sized").body == "sized\n")
        #expect(server.count("connection") == 2, "\(server.log)")
        // Closed as the request came, before any answer: sent once more on a new connection, and answered.
        #expect(try Self.get(client, "/drop-next").body == "armed\n")
        #expect(try Self.get(client, "/sized").body == "sized\n")
        #expect(server.count("request /sized dropped") == 1, "\(server.log)")
        #expect(server.count("connection") == 3, "\(server.log)")
        // A request that is not safe to repeat is not sent again: its failure says why.
        #expect(try Self.get(client, "/drop-next").body == "armed\n")
        let unrepeated = #expect(throws: VoteError.self) { try Self.get(client, "/sized", idempotent: false) }
        #expect(unrepeated.map(VoteError.describe) == "the connection closed before an answer came")
        #expect(server.count("connection") == 3, "\(server.log)")
        // An answer with Connection: close, or without a length, ends its connection; the next gets a new one.
        #expect(try Self.get(client, "/close").body == "closing\n")
        #expect(try Self.get(client, "/unsized").body == "unsized\n")
        #expect(try Self.get(client, "/sized").body == "sized\n")
        #expect(server.count("connection") == 6, "\(server.log)")
        #expect(client.idleCount == 1)
    }

    @Test func hostileAnswersFailInOneLineAndLeaveNoConnection() throws {
        let root = TemporaryDirectory()
        let server = try KeepAliveServer(in: root.path)
        let client = BlockingHTTP.Client(host: "127.0.0.1", port: server.port, tls: false)
        let refusals = [
            "/huge-chunk": "the answer is larger than 65536 bytes",
            "/bad-chunk": "the answer's chunks are malformed",
            "/both-framings": "the answer is framed both by Content-Length and by chunks",
            "/two-lengths": "the answer gives two different lengths",
            "/not-http": "the answer is not HTTP",
        ]
        for (path, reason) in refusals.sorted(by: { $0.key < $1.key }) {
            let error = #expect(throws: VoteError.self, "\(path)") { try Self.get(client, path) }
            #expect(error.map(VoteError.describe) == reason, "\(path)")
            #expect(client.idleCount == 0, "\(path)")
        }
        // Bytes after the answer (a second answer nobody asked for) are never read as the next request's answer.
        #expect(try Self.get(client, "/garbage-after").body == "sized\n")
        #expect(try Self.get(client, "/sized").body == "sized\n")
        #expect(server.count("connection") == refusals.count + 2, "\(server.log)")
    }
}
