import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import TestSupport
import Testing
import VoteLedger
import VoteServer

#if canImport(Glibc)
    import Glibc
#endif

/// A raw TCP connection to the server, for what an HTTP client library would not send: bytes trickled one
/// at a time, request lines that are not UTF-8.
final class RawConnection: Sendable {
    private let fd: Int32

    /// Connects to 127.0.0.1:`port` from `source` (another loopback address, 127.0.0.2, is another client of
    /// the server's) or, if nil, from the address the kernel picks.
    init(port: Int, from source: String? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard bound == 0 else { throw VoteError(.io, "cannot bind to \(source)") }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard fd >= 0, connected == 0 else { throw VoteError(.io, "cannot connect to 127.0.0.1:\(port)") }
    }

    deinit { close(fd) }

    /// Sends `bytes`; false once the server has closed the connection.
    func send(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count
    }

    /// Makes `readToEnd` end (with what it has) once nothing has arrived for `seconds`: a bound for a wait
    /// that only a broken server would reach.
    func giveUpReading(after seconds: Int) {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Says no more will be sent (the server reads the end of the stream), keeping the connection open for
    /// the answer.
    func finishSending() { shutdown(fd, Int32(SHUT_WR)) }

    /// Whether the server has closed the connection (a read finds its end, or the connection was reset),
    /// without waiting for it.
    var closedByServer: Bool {
        var byte: UInt8 = 0
        let count = recv(fd, &byte, 1, Int32(MSG_DONTWAIT | MSG_PEEK))
        return count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
    }

    /// Everything the server sends until it closes the connection, read on a thread of its own: a blocking
    /// read on one of the threads Swift concurrency shares (two on a two-core machine) leaves the server in this
    /// process fewer to answer with, and two such reads at once left it none, so both waited for ever.
    func readToEnd() async -> [UInt8] {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                var result: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: 4096)
                while true {
                    let count = recv(self.fd, &buffer, buffer.count, 0)
                    if count <= 0 { break }
                    result += buffer[0..<count]
                }
                continuation.resume(returning: result)
            }
        }
    }
}

extension ServedLedger {
    /// Sets up place 1 through the API in process (one candidate, three voters), opens voting, serves the
    /// ledger with `limits` on an ephemeral loopback port and runs `test` with the port and the voters'
    /// tokens; then closes the server and verifies the chain. The set-up uses no socket, so a server with
    /// short timeouts cuts off only the clients a test means it to (on a loaded machine a set-up request
    /// sent a second after connecting found its connection closed).
    func serveLive(limits: ServerLimits, _ test: @Sendable (Int, [String]) async throws -> Void) async throws {
        let tokens = try await buildApplication(server, configuration: .init(), logger: quietLogger).test(.router) {
            try await register(.router($0), candidates: ["Ada"], voters: ["member-1", "member-2", "member-3"])
        }
        #expect(tokens.count == 3)
        clock.set(start + hour + 1)
        let app = buildApplication(
            server, configuration: .init(address: .hostname("127.0.0.1", port: 0)), limits: limits, logger: quietLogger)
        try await app.test(.live) { live in try await test(try #require(live.port), tokens) }
        try await close()
    }
}

/// A good request (a read answered in full) on a new connection.
func serving(_ port: Int) async throws -> Bool {
    let response = try await fetch(port, "/api/v1/places/1")
    return response.status == .ok && object(response.body)["id"] as? Int == 1
}

/// The hostile-client table against a live server (a real socket, in process): each kind of bad request
/// gets its status, the server keeps serving (a good request succeeds afterwards), and the ledger's head
/// is the same before and after. Its timeouts are an hour, so no request is cut off because the test was
/// slow to send it; `slowClientsAreCutOff` tests the timeouts.
@Suite struct HostileClientTests {
    @Test func everyHostileRequestIsAnsweredAndChangesNothing() async throws {
        let fixture = try ServedLedger("Hostile")
        let limits = ServerLimits(
            idleTimeout: .seconds(3600), headTimeout: .seconds(3600), bodyTimeout: .seconds(3600), maxConnections: 64,
            failureBurst: 20,
            failureRefillMs: 1000)
        let auth = fixture.auth
        try await fixture.serveLive(limits: limits) { port, tokens in
            @Sendable func head() throws -> String { try fixture.head() }
            // The HTTP table: each request, its status and error code.
            let big = "{\"candidate\":1,\"token\":\"" + String(repeating: "A", count: 70_000) + "\"}"
            let table:
                [(
                    what: String, uri: String, method: HTTPRequest.Method, headers: HTTPFields, body: String?,
                    status: HTTPResponse.Status, code: String?
                )] = [
                    (
                        "oversized JSON body", "/api/v1/places/1/votes", .post, jsonHeaders, big, .contentTooLarge,
                        "body_too_large"
                    ),
                    (
                        "oversized admin JSON body", "/api/v1/places/1/candidates", .post, auth,
                        "{\"name\":\"" + String(repeating: "n", count: 70_000) + "\"}", .contentTooLarge,
                        "body_too_large"
                    ),
                    (
                        "oversized BVC form (answered in the envelope)", "/setVote", .post, formHeaders,
                        "token=" + String(repeating: "A", count: 70_000), .ok, nil
                    ),
                    (
                        "malformed JSON", "/api/v1/places/1/votes", .post, jsonHeaders,
                        "{\"candidate\": 1, \"token\": ", .badRequest, "malformed_json"
                    ),
                    (
                        "JSON of the wrong shape", "/api/v1/places/1/votes", .post, jsonHeaders, "[1, 2, 3]",
                        .badRequest, "malformed_json"
                    ),
                    (
                        "wrong content type", "/api/v1/places/1/votes", .post, [.contentType: "text/plain"],
                        "candidate=1", .unsupportedMediaType, "unsupported_media_type"
                    ),
                    (
                        "no content type", "/api/v1/places/1/status", .post, [:], "{\"token\":\"x\"}",
                        .unsupportedMediaType, "unsupported_media_type"
                    ),
                    (
                        "huge place id", "/api/v1/places/99999999999999999999", .get, [:], nil, .notFound,
                        "place_not_found"
                    ),
                    (
                        "huge place id in a vote", "/api/v1/places/99999999999999999999/votes", .post, jsonHeaders,
                        "{\"candidate\":1,\"token\":\"x\"}", .notFound, "place_not_found"
                    ),
                    (
                        "huge candidate id", "/api/v1/places/1/votes", .post, jsonHeaders,
                        "{\"candidate\":99999999999999999999,\"token\":\"\(tokens[0])\"}", .badRequest, "malformed_json"
                    ),
                    (
                        "huge proof index", "/api/v1/proofs/inclusion?index=99999999999999999999", .get, [:], nil,
                        .badRequest, "bad_request"
                    ),
                    (
                        "huge event height", "/api/v1/events?from=99999999999999999999", .get, [:], nil, .badRequest,
                        "bad_request"
                    ),
                    ("percent-encoded non-UTF-8 path", "/api/v1/places/%FF%FE", .get, [:], nil, .notFound, nil),
                    ("unknown route", "/api/v1/ballots", .get, [:], nil, .notFound, "not_found"),
                    ("unknown root route", "/wp-login.php", .get, [:], nil, .notFound, "not_found"),
                ]
            for row in table {
                let before = try head()
                let response = try await fetch(
                    port, row.uri, row.method, headers: row.headers, body: row.body.map { ByteBuffer(string: $0) })
                #expect(response.status == row.status, "\(row.what)")
                if let code = row.code { #expect(errorCode(response.body) == code, "\(row.what)") }
                if row.status == .ok { #expect(object(response.body)["code"] as? Int == 413, "\(row.what)") }
                #expect(
                    response.headers[.contentSecurityPolicy]?.contains("frame-ancestors 'none'") == true, "\(row.what)")
                #expect(response.headers[.xContentTypeOptions] == "nosniff", "\(row.what)")
                #expect(response.headers[HTTPFields.Element.Name("Referrer-Policy")!] == "no-referrer", "\(row.what)")
                #expect(response.headers[.cacheControl] == "no-store", "\(row.what)")
                #expect(try await serving(port), "\(row.what): the server stopped serving")
                #expect(try head() == before, "\(row.what): the ledger changed")
            }

            // Raw requests no HTTP library sends: a request line that is not UTF-8, garbage, a vote whose chunked
            // body has a chunk size that is not hex, and one whose body the client ends before its Content-Length
            // (the last two reach the route, which reads the body).
            let vote = "POST /api/v1/places/1/votes HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            for (what, request, cutShort) in [
                (
                    "raw non-UTF-8 path",
                    Array("GET /api/v1/places/".utf8) + [0xFF, 0xFE, 0x80] + Array(" HTTP/1.1\r\nHost: x\r\n\r\n".utf8),
                    false
                ),
                ("not HTTP", [0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0xFF] + Array("\r\n\r\n".utf8), false),
                (
                    "broken chunked body",
                    Array((vote + "Transfer-Encoding: chunked\r\n\r\n5\r\n{\"can\r\nZZ\r\nabc\r\n").utf8), false
                ),
                ("body cut short", Array((vote + "Content-Length: 100\r\n\r\n{\"candidate\": 1").utf8), true),
            ] {
                let before = try head()
                let connection = try RawConnection(port: port)
                #expect(connection.send(request), "\(what)")
                if cutShort { connection.finishSending() }
                let answer = String(decoding: await connection.readToEnd(), as: UTF8.self)
                // Answered with a client error, or the connection closed without an answer; never a 5xx.
                #expect(answer.isEmpty || answer.hasPrefix("HTTP/1.1 4"), "\(what): \(answer.prefix(40))")
                #expect(try await serving(port), "\(what): the server stopped serving")
                #expect(try head() == before, "\(what): the ledger changed")
            }

            // Thousands of bad tokens from one address (half by the JSON API, half by BVC's /isAuth): refused
            // up to the limit, then 429 with Retry-After (BVC: code 429 in its envelope), while other requests
            // are served; `FailureLimitTests` shows that good tokens from the address are still served.
            let before = try head()
            var refused = 0
            var limited = 0
            for attempt in 0..<2000 {
                let token = String(format: "AAAA-AAAA-AAAA-AAAA-AAAA-AAAA-AAAA-%04d", attempt)
                let code: Int
                if attempt % 2 == 0 {
                    let response = try await fetch(
                        port, "/api/v1/places/1/votes", .post, headers: jsonHeaders,
                        body: body(["candidate": 1, "token": token]))
                    code = response.status.code
                    if code == 429 {
                        #expect(Int(response.headers[HTTPFields.Element.Name("Retry-After")!] ?? "") ?? 0 >= 1)
                        #expect(errorCode(response.body) == "rate_limited")
                    }
                } else {
                    let response = try await fetch(port, "/isAuth?token=" + token)
                    #expect(response.status == .ok)
                    code = object(response.body)["code"] as? Int ?? 0
                }
                if code == 400 { refused += 1 } else if code == 429 { limited += 1 }
            }
            #expect(refused == 20)
            #expect(limited == 1980)
            #expect(try await serving(port))
            #expect(try head() == before)
            // Once the bucket refills, a bad token is told what is wrong with it again.
            fixture.clock.set(fixture.start + hour + 1 + 5000)
            let again = try await fetch(
                port, "/api/v1/places/1/votes", .post, headers: jsonHeaders,
                body: body(["candidate": 1, "token": "AAAA-AAAA-AAAA-AAAA-AAAA-AAAA-AAAA-0000"]))
            #expect(again.status == .badRequest)
        }
    }

    /// Slow clients against a server with a 1 s idle timeout and a body due 300 ms after its headers: each
    /// is cut off eventually (asserted: closed, not how fast), the server keeps serving and nothing is
    /// recorded. The good request between them is sent whole in one write right after connecting, and sent
    /// again if the idle timeout closed its connection first: that closing is the behaviour under test.
    @Test func slowClientsAreCutOff() async throws {
        let fixture = try ServedLedger("Hostile")
        let limits = ServerLimits(idleTimeout: .seconds(1), bodyTimeout: .milliseconds(300), maxConnections: 64)
        try await fixture.serveLive(limits: limits) { port, _ in
            @Sendable func head() throws -> String { try fixture.head() }
            let request = "GET /api/v1/places/1 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
            func serving() async throws -> Bool {
                for _ in 0..<5 {
                    let connection = try RawConnection(port: port)
                    guard connection.send(Array(request.utf8)) else { continue }
                    let answer = String(decoding: await connection.readToEnd(), as: UTF8.self)
                    if !answer.isEmpty { return answer.hasPrefix("HTTP/1.1 200") && answer.contains("\"id\":1") }
                }
                return false
            }
            // Slow clients: headers one byte per 100 ms are cut off by the idle timeout (headers are one
            // request part, and none completes). Asserted: eventually closed, not how fast.
            do {
                let before = try head()
                let connection = try RawConnection(port: port)
                let slow =
                    Array("GET /api/v1/places HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ".utf8)
                    + Array(repeating: UInt8(ascii: "a"), count: 3_000)  // at 100 ms a byte, 5 minutes at least
                var sent = 0
                while sent < slow.count, connection.send([slow[sent]]), !connection.closedByServer {
                    sent += 1
                    try await Task.sleep(for: .milliseconds(100))
                }
                #expect(sent < slow.count, "the slow client was never cut off")
                #expect(try await serving(), "slow client: the server stopped serving")
                #expect(try head() == before)
            }
            // A body trickled one byte per 100 ms (each byte restarts the idle timeout) is cut off by the body
            // deadline. Asserted: eventually closed, and nothing recorded.
            do {
                let before = try head()
                let connection = try RawConnection(port: port)
                let headers =
                    "POST /api/v1/places/1/votes HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    + "Content-Length: 100000\r\n\r\n"
                #expect(connection.send(Array(headers.utf8)))
                var sent = 0
                // At most 3,000 bytes (5 minutes at least, however slow the machine) before it counts as never.
                while sent < 3_000, connection.send([UInt8(ascii: " ")]), !connection.closedByServer {
                    sent += 1
                    try await Task.sleep(for: .milliseconds(100))
                }
                #expect(sent < 3_000, "the slow body was never cut off")
                #expect(try await serving(), "slow body: the server stopped serving")
                #expect(try head() == before)
            }
            // A client that connects and sends nothing is closed too.
            do {
                let connection = try RawConnection(port: port)
                #expect(await connection.readToEnd().isEmpty)
            }

        }
    }

    /// One address opening connections and trickling header lines into them (300 from 127.0.0.2, each with
    /// half a request head) against `vote serve` serving 200 at once, at most 40 per address: the connections
    /// beyond 40 are closed at once, another client (127.0.0.1) is served while the 40 are held, and the 40
    /// are answered once their heads are complete. The real binary, because Hummingbird's in-process live test
    /// server leaves out the limit of connections served at once. Its timeouts are an hour, so only the caps
    /// are at work; nothing is asserted about how fast (the waits are generous bounds for a broken server,
    /// which would hold every connection for the hour and leave the other client in the listen backlog).
    @Test func oneAddressCannotTakeEveryConnection() async throws {
        let election = try ProcessLedger("Hostile")
        _ = try await election.register(candidates: ["Ada"], voters: ["member-1"])
        let server = try ServeProcess(
            ledger: election.ledger, clockOffset: 0, adminTokenFile: election.tokenFile,
            arguments: ["--max-connections", "200", "--max-connections-per-address", "40"])
        let port = server.port
        do {
            var attackers: [RawConnection] = []
            for _ in 0..<300 {
                let connection = try RawConnection(port: port, from: "127.0.0.2")
                _ = connection.send(Array("GET /api/v1/places/1 HTTP/1.1\r\nHost: 127.0.0.1\r\n".utf8))
                attackers.append(connection)
            }
            // The server closes the 260 beyond the cap (nothing else closes a connection within the hour).
            let closed = try await waitFor(
                "the server to close the 260 connections beyond the cap (the last value: which were closed)",
                every: .milliseconds(100), read: { attackers.map(\.closedByServer) },
                until: { $0.filter { $0 }.count >= 260 })
            #expect(closed.filter { $0 }.count == 260)
            // Another address is served while the 40 are held.
            let other = try RawConnection(port: port)
            other.giveUpReading(after: 120)
            #expect(
                other.send(Array("GET /api/v1/places/1 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8)))
            #expect(String(decoding: await other.readToEnd(), as: UTF8.self).hasPrefix("HTTP/1.1 200"))
            // The 40 held are served once their heads are complete.
            var answered = 0
            for (connection, isClosed) in zip(attackers, closed) where !isClosed {
                _ = connection.send(Array("Connection: close\r\n\r\n".utf8))
                connection.giveUpReading(after: 120)
                let answer = String(decoding: await connection.readToEnd(), as: UTF8.self)
                guard answer.hasPrefix("HTTP/1.1 200") else { break }
                answered += 1
            }
            #expect(answered == 40)
        } catch {
            _ = server.stop()
            throw error
        }
        #expect(server.stop().status == 0)
    }

    /// A request head must arrive in full within the head deadline (20 s here) of the connection opening or
    /// of its previous answer, whatever the idle timeout (an hour here): a client trickling header bytes, one
    /// that sends nothing, and one that holds its connection after an answer are each closed eventually
    /// (asserted: closed, not how fast), and the server keeps serving.
    @Test func requestHeadsHaveADeadline() async throws {
        let fixture = try ServedLedger("Hostile")
        // A deadline of 20 s, not 1: a loaded machine that is slow to send or read a head sent whole must not cut
        // it off (1 s failed so once under load, and 5 s once in CI, where the test client's connection was
        // closed before its request went out). The trickle still needs 120 s to finish.
        let limits = ServerLimits(
            idleTimeout: .seconds(3600), headTimeout: .seconds(20), bodyTimeout: .seconds(3600), maxConnections: 64)
        try await fixture.serveLive(limits: limits) { port, _ in
            // A header line trickled a byte per 100 ms: cut off (within 1,200 bytes, two minutes, or never).
            let connection = try RawConnection(port: port)
            let slow =
                Array("GET /api/v1/places HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ".utf8)
                + Array(repeating: UInt8(ascii: "a"), count: 1200)
            var sent = 0
            while sent < slow.count, connection.send([slow[sent]]), !connection.closedByServer {
                sent += 1
                try await Task.sleep(for: .milliseconds(100))
            }
            try #require(sent < slow.count, "the trickling client was never cut off")
            // A client that connects and sends nothing is closed.
            let silent = try RawConnection(port: port)
            #expect(await silent.readToEnd().isEmpty)
            // A keep-alive connection is answered, then closed when no next head arrives.
            let kept = try RawConnection(port: port)
            #expect(kept.send(Array("GET /api/v1/places/1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)))
            let answer = String(decoding: await kept.readToEnd(), as: UTF8.self)
            #expect(answer.hasPrefix("HTTP/1.1 200"))
            #expect(try await serving(port))
        }
    }
}
