internal import COpenSSL
import Foundation
import Synchronization
import VoteLedger

#if canImport(Glibc)
    import Glibc
#endif

/// HTTP/1.1 over non-blocking sockets that wait in `poll` with a deadline, over OpenSSL's TLS for https://: one
/// request on a connection of its own (`request`, what a voter's `vote ballot` talks to its server with), or
/// requests on a kept connection (`Client`, what a witness is asked with each cosigning round of `vote serve`:
/// one connection and one TLS handshake for many rounds, as public witnesses expect). Plain POSIX, so a
/// command-line client needs no event loop, and a thread waiting for a slow answer sleeps in the kernel instead
/// of polling.
public enum BlockingHTTP {
    /// An answer: its status and its body (chunks joined).
    public struct Reply: Sendable {
        public var status: Int
        public var body: [UInt8]
    }

    /// Sends `method` to `path` on `host:port` (over TLS if `tls`, the certificate checked against the
    /// authorities in the PEM file `trusting`, else against the system's: OpenSSL reads `SSL_CERT_FILE` and
    /// `SSL_CERT_DIR`) with `body` (of `contentType`, if given), on a connection of its own closed after it, and
    /// reads the answer, of at most `maxReply` bytes, giving up at `deadline` (connecting and the TLS handshake
    /// included; the host name is resolved first, by the system's resolver).
    public static func request(
        _ method: String, host: String, port: Int, tls: Bool, trusting caFile: String? = nil, path: String,
        contentType: String? = nil, body: [UInt8] = [], maxReply: Int, deadline: ContinuousClock.Instant
    ) throws -> Reply {
        let trust = try tls ? TLSClientContext.trusting(caFile) : nil
        let connection = try Connection(host: host, port: port, tls: trust, deadline: deadline)
        let message = Self.message(
            method, host: host, port: port, path: path, contentType: contentType, body: body, closing: true)
        var answered = false
        return try exchange(message, on: connection, maxReply: maxReply, answered: &answered).reply
    }

    /// A request's bytes: its head (with `Connection: close` if `closing`) and `body`.
    static func message(
        _ method: String, host: String, port: Int, path: String, contentType: String?, body: [UInt8], closing: Bool
    ) -> [UInt8] {
        let authority = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        var head = "\(method) \(path.isEmpty ? "/" : path) HTTP/1.1\r\nHost: \(authority)\r\n"
        if let contentType { head += "Content-Type: \(contentType)\r\n" }
        if !body.isEmpty || method == "POST" { head += "Content-Length: \(body.count)\r\n" }
        if closing { head += "Connection: close\r\n" }
        return Array((head + "\r\n").utf8) + body
    }

    /// Sends `message` on `connection` and reads one answer of at most `maxReply` bytes, and whether the
    /// connection may carry another request (its length known, nothing after it, no `Connection: close`).
    /// `answered` says whether any byte of an answer came (a kept connection the server closed while idle fails
    /// before any: the request may then be sent again).
    static func exchange(
        _ message: [UInt8], on connection: Connection, maxReply: Int, answered: inout Bool
    ) throws -> Framed {
        try connection.send(message)
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            if var framed = try parse(answer, complete: false, limit: maxReply) {
                // Bytes after the answer, asked for by nobody, leave the connection unfit for another request.
                framed.reusable = framed.reusable && framed.end == answer.count
                return framed
            }
            let count = try connection.receive(into: &buffer)
            if count == 0 {
                guard answered else { throw VoteError(.io, "the connection closed before an answer came") }
                guard var framed = try parse(answer, complete: true, limit: maxReply) else {
                    throw VoteError(.io, "the connection closed before the answer ended")
                }
                framed.reusable = false
                return framed
            }
            answered = true
            answer += buffer[..<count]
            guard answer.count <= maxReply else { throw VoteError(.io, "the answer is larger than \(maxReply) bytes") }
        }
    }

    /// An answer read whole: the reply, where it ends in the bytes read, and whether the server keeps the
    /// connection for another request.
    struct Framed {
        var reply: Reply
        var end: Int
        var reusable: Bool
    }

    /// The answer at the start of `bytes` once it is whole (its length from Content-Length, chunks, or the
    /// connection's end when `complete`); nil while more is to come. Throws on an answer that is not HTTP/1.x, or
    /// whose body would be larger than `limit` bytes, or is framed two ways or with broken chunks.
    static func parse(_ bytes: [UInt8], complete: Bool, limit: Int = 1 << 24) throws -> Framed? {
        guard let end = bytes.firstRange(of: Array("\r\n\r\n".utf8)) else {
            if complete { throw VoteError(.io, "the answer is not HTTP") }
            return nil
        }
        let lines = String(decoding: bytes[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let status = lines[0].split(separator: " ", maxSplits: 2)
        guard status.count >= 2, status[0].hasPrefix("HTTP/1."), let code = Int(status[1]), (100...599).contains(code)
        else { throw VoteError(.io, "the answer is not HTTP") }
        var fields: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { throw VoteError(.io, "the answer is not HTTP") }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            if let earlier = fields[name] {
                guard name != "content-length" || earlier == value else {
                    throw VoteError(.io, "the answer gives two different lengths")
                }
                if name != "content-length" { fields[name] = earlier + ", " + value }
            } else {
                fields[name] = value
            }
        }
        let closes =
            status[0] != "HTTP/1.1"
            || (fields["connection"] ?? "").lowercased().split(separator: ",").contains {
                $0.trimmingCharacters(in: .whitespaces) == "close"
            }
        let start = end.upperBound
        if let coding = fields["transfer-encoding"] {
            guard fields["content-length"] == nil else {
                throw VoteError(.io, "the answer is framed both by Content-Length and by chunks")
            }
            guard coding.lowercased() == "chunked" else {
                throw VoteError(.io, "the answer's transfer coding is not chunked")
            }
            return try unchunked(bytes, from: start, limit: limit).map {
                Framed(reply: Reply(status: code, body: $0.body), end: $0.end, reusable: !closes)
            }
        }
        if code < 200 || code == 204 || code == 304 {
            return Framed(reply: Reply(status: code, body: []), end: start, reusable: !closes)
        }
        if let text = fields["content-length"] {
            guard !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isNumber }), let length = Int(text) else {
                throw VoteError(.io, "the answer's Content-Length is not a number")
            }
            guard length <= limit else { throw VoteError(.io, "the answer is larger than \(limit) bytes") }
            guard bytes.count - start >= length else { return nil }
            return Framed(
                reply: Reply(status: code, body: Array(bytes[start..<start + length])), end: start + length,
                reusable: !closes)
        }
        return complete
            ? Framed(reply: Reply(status: code, body: Array(bytes[start...])), end: bytes.count, reusable: false) : nil
    }

    /// A chunked body from `start`, decoded once its last chunk (and trailer) has come, and where it ends; nil
    /// before. Throws on a chunk size that is not hexadecimal or would take the body past `limit` bytes, or a chunk
    /// not followed by its line end.
    private static func unchunked(_ bytes: [UInt8], from start: Int, limit: Int) throws -> (body: [UInt8], end: Int)? {
        let lineEnd = Array("\r\n".utf8)
        var body: [UInt8] = []
        var at = start
        while true {
            guard let line = bytes[at...].firstRange(of: lineEnd) else { return nil }
            let sizeText = String(decoding: bytes[at..<line.lowerBound], as: UTF8.self).prefix { $0 != ";" }
                .trimmingCharacters(in: .whitespaces)
            guard !sizeText.isEmpty, sizeText.count <= 16, sizeText.allSatisfy({ $0.isASCII && $0.isHexDigit }),
                let size = Int(sizeText, radix: 16)
            else { throw VoteError(.io, "the answer's chunks are malformed") }
            guard size <= limit - body.count else { throw VoteError(.io, "the answer is larger than \(limit) bytes") }
            at = line.upperBound
            if size == 0 {
                // Trailer fields, if any, up to an empty line.
                while true {
                    guard let field = bytes[at...].firstRange(of: lineEnd) else { return nil }
                    let empty = field.lowerBound == at
                    at = field.upperBound
                    if empty { return (body, at) }
                }
            }
            guard bytes.count - at >= size + 2 else { return nil }
            guard bytes[at + size] == 13, bytes[at + size + 1] == 10 else {
                throw VoteError(.io, "the answer's chunks are malformed")
            }
            body += bytes[at..<at + size]
            at += size + 2
        }
    }
}

// MARK: - Kept connections

extension BlockingHTTP {
    /// Requests to one server on kept connections: HTTP/1.1 without `Connection: close`, each answer read
    /// exactly by its length or chunks, the connection (and its TLS session) kept for the next request. A
    /// connection the server closed while it was idle is noticed before it is used, or, if the server closes it
    /// as the request goes, the request is sent once more on a new one when it is safe to repeat. One left idle
    /// longer than `idleLimit` (shorter than servers' usual keep-alive) is closed rather than used. Safe to use
    /// from several threads: each request takes a connection of its own from a small pool (a new one if none is
    /// idle) and gives it back after.
    public final class Client: Sendable {
        public let host: String
        public let port: Int
        public let tls: Bool
        let caFile: String?
        let idleLimit: Duration
        /// Idle connections, the most recently used last.
        private let idle = Mutex<[Kept]>([])
        /// How many idle connections are kept at most; more are closed.
        static let keptAtMost = 4

        /// A client of `host:port` (over TLS if `tls`, the certificate checked against the authorities in the
        /// PEM file `trusting`, else the system's), closing connections idle for `idleLimit`.
        public init(
            host: String, port: Int, tls: Bool, trusting caFile: String? = nil, idleLimit: Duration = .seconds(30)
        ) {
            self.host = host
            self.port = port
            self.tls = tls
            self.caFile = caFile
            self.idleLimit = idleLimit
        }

        /// Sends `method` to `path` with `body` (of `contentType`, if given) on a kept connection and reads the
        /// answer, of at most `maxReply` bytes, giving up at `deadline`. If `idempotent` (sending it twice does
        /// what sending it once does), a kept connection that the server closed before answering is replaced by
        /// a new one and the request sent again, once.
        public func request(
            _ method: String, path: String, contentType: String? = nil, body: [UInt8] = [], idempotent: Bool,
            maxReply: Int, deadline: ContinuousClock.Instant
        ) throws -> Reply {
            let message = BlockingHTTP.message(
                method, host: host, port: port, path: path, contentType: contentType, body: body, closing: false)
            if let kept = takeIdle() {
                kept.connection.deadline = deadline
                var answered = false
                do {
                    return try exchange(message, on: kept, maxReply: maxReply, answered: &answered)
                } catch  where !answered && idempotent && ContinuousClock.now < deadline {
                    // The server closed the idle connection as the request went: once more, on a new one.
                }
            }
            let trust = try tls ? TLSClientContext.trusting(caFile) : nil
            let fresh = Kept(try Connection(host: host, port: port, tls: trust, deadline: deadline))
            var answered = false
            return try exchange(message, on: fresh, maxReply: maxReply, answered: &answered)
        }

        /// `message`'s answer on `kept`, which goes back to the pool if the server keeps it.
        private func exchange(_ message: [UInt8], on kept: Kept, maxReply: Int, answered: inout Bool) throws -> Reply {
            let framed = try BlockingHTTP.exchange(
                message, on: kept.connection, maxReply: maxReply, answered: &answered)
            if framed.reusable {
                kept.lastUsed = .now
                idle.withLock { idle in
                    idle.append(kept)
                    if idle.count > Self.keptAtMost { idle.removeFirst() }
                }
            }
            return framed.reply
        }

        /// The most recently used idle connection fit for another request, if any; those the server closed
        /// (or sent anything on unasked) or that were idle too long are closed.
        private func takeIdle() -> Kept? {
            while let kept = idle.withLock({ $0.popLast() }) {
                if ContinuousClock.now - kept.lastUsed < idleLimit && kept.connection.isQuiet { return kept }
            }
            return nil
        }

        /// The number of idle connections kept (for tests).
        var idleCount: Int { idle.withLock { $0.count } }
    }

    /// A connection kept for another request, and when it was last used. Used by one thread at a time: it is
    /// either in its client's pool, under the pool's lock, or taken from it by the one request using it.
    final class Kept: @unchecked Sendable {
        let connection: Connection
        var lastUsed = ContinuousClock.now

        init(_ connection: Connection) { self.connection = connection }
    }
}

/// The client side of TLS: TLS 1.2 or later, the peer's certificate checked against the system's trusted
/// authorities (OpenSSL reads `SSL_CERT_FILE` and `SSL_CERT_DIR` for others) or those of one PEM file.
package final class TLSClientContext {
    let context: OpaquePointer

    /// A context trusting the certificates of the PEM file `caFile`, else the system's authorities.
    private init(caFile: String?) throws {
        guard let context = SSL_CTX_new(TLS_client_method()) else {
            throw VoteError(.io, "OpenSSL cannot make a TLS context: \(Connection.openSSLError())")
        }
        self.context = context
        let trusted =
            caFile.map { SSL_CTX_load_verify_locations(context, $0, nil) } ?? SSL_CTX_set_default_verify_paths(context)
        guard trusted == 1 else {
            throw VoteError(
                .io,
                "cannot read trusted certificates from \(caFile ?? "the system's store"): \(Connection.openSSLError())")
        }
        guard vl_ssl_ctx_require_tls12(context) == 1 else {
            throw VoteError(.io, "OpenSSL cannot require TLS 1.2: \(Connection.openSSLError())")
        }
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        vl_ssl_ctx_ignore_unexpected_eof(context)
    }

    deinit { SSL_CTX_free(context) }

    /// The system's authorities, made once (reading the store is not free) and kept for the process.
    nonisolated(unsafe) private static let system = Result { try TLSClientContext(caFile: nil) }

    /// A context trusting `caFile`'s certificates (read anew), or the system's authorities when nil.
    package static func trusting(_ caFile: String?) throws -> TLSClientContext {
        try caFile.map { try TLSClientContext(caFile: $0) } ?? system.get()
    }
}

/// A connection: a non-blocking TCP socket, with a TLS session over it for https:// (or from when a protocol
/// such as SMTP's STARTTLS starts one), every wait bounded by its deadline.
package final class Connection {
    private let socket: Int32
    private var tls: OpaquePointer?
    /// Kept while the session lives.
    private var trust: TLSClientContext?
    /// When every wait gives up; a long conversation (an SMTP session) moves it on before each exchange.
    package var deadline: ContinuousClock.Instant

    /// Connects to `host:port`, with TLS over the connection from the start if `trust` is given.
    package init(host: String, port: Int, tls trust: TLSClientContext?, deadline: ContinuousClock.Instant) throws {
        self.deadline = deadline
        socket = try Self.connect(host: host, port: port, deadline: deadline)
        if let trust { try startTLS(trust, host: host) }
    }

    /// Starts TLS on the connection as its client, the server's certificate checked against `trust` for `host`.
    package func startTLS(_ trust: TLSClientContext, host: String) throws {
        precondition(tls == nil, "TLS is already running on this connection")
        self.trust = trust
        guard let session = SSL_new(trust.context) else {
            throw VoteError(.io, "OpenSSL cannot start a TLS session: \(Self.openSSLError())")
        }
        self.tls = session
        SSL_set_fd(session, socket)
        // The certificate must name the host: an IP address as an IP address, a name by name (and SNI).
        var address = in6_addr()
        let isAddress =
            inet_pton(AF_INET, host, &address) == 1 || inet_pton(AF_INET6, host, &address) == 1
        let named =
            isAddress
            ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(session), host)
            : vl_ssl_set_server_name(session, host) & SSL_set1_host(session, host)
        guard named == 1 else { throw VoteError(.io, "OpenSSL cannot check a certificate for \(host)") }
        _ = try perform { SSL_connect(session) }
    }

    deinit {
        if let tls { SSL_free(tls) }
        close(socket)
    }

    package func send(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let count = try bytes[sent...].withUnsafeBytes { chunk in
                if let tls { return try perform { Int32(SSL_write(tls, chunk.baseAddress, Int32(chunk.count))) } }
                while true {
                    let count = Glibc.send(socket, chunk.baseAddress, chunk.count, Int32(MSG_NOSIGNAL))
                    if count >= 0 { return Int32(count) }
                    guard errno == EAGAIN || errno == EINTR else {
                        throw VoteError(.io, "sending the request: \(String(cString: strerror(errno)))")
                    }
                    try wait(for: Int16(POLLOUT))
                }
            }
            sent += Int(count)
        }
    }

    /// Whether nothing has come from the peer since the last answer was read: no byte and no end. A kept
    /// connection the server closed while it was idle, or sent anything on unasked, is not quiet.
    package var isQuiet: Bool {
        if let tls, SSL_pending(tls) > 0 { return false }
        var poller = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        return poll(&poller, 1, 0) == 0
    }

    /// Reads what has come into `buffer` (waiting for some); 0 at the end of the answer.
    package func receive(into buffer: inout [UInt8]) throws -> Int {
        try buffer.withUnsafeMutableBytes { space in
            if let tls {
                let count = try perform(endsAnswer: true) { SSL_read(tls, space.baseAddress, Int32(space.count)) }
                return Int(max(count, 0))
            }
            while true {
                let count = read(socket, space.baseAddress, space.count)
                if count >= 0 { return count }
                guard errno == EAGAIN || errno == EINTR else {
                    throw VoteError(.io, "reading the answer: \(String(cString: strerror(errno)))")
                }
                try wait(for: Int16(POLLIN))
            }
        }
    }

    /// Runs a TLS operation until it completes, waiting for the socket as it asks; its result. With
    /// `endsAnswer`, the peer's closing the connection is a result of 0 rather than an error.
    private func perform(endsAnswer: Bool = false, _ operation: () -> Int32) throws -> Int32 {
        while true {
            ERR_clear_error()
            let result = operation()
            if result > 0 { return result }
            switch SSL_get_error(tls, result) {
            case SSL_ERROR_WANT_READ: try wait(for: Int16(POLLIN))
            case SSL_ERROR_WANT_WRITE: try wait(for: Int16(POLLOUT))
            case SSL_ERROR_ZERO_RETURN where endsAnswer: return 0
            default:
                let verified = SSL_get_verify_result(tls)
                if verified != X509_V_OK {
                    throw VoteError(
                        .io,
                        "its TLS certificate is not trusted: \(String(cString: X509_verify_cert_error_string(verified)))"
                    )
                }
                if endsAnswer && ERR_peek_error() == 0 { return 0 }
                throw VoteError(.io, "TLS failed: \(Self.openSSLError())")
            }
        }
    }

    static func openSSLError() -> String {
        let code = ERR_get_error()
        guard code != 0 else { return "no reason given" }
        var text = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &text, text.count)
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A connected non-blocking TCP socket to `host:port`, trying each address the resolver gives.
    private static func connect(host: String, port: Int, deadline: ContinuousClock.Instant) throws -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        let resolved = getaddrinfo(host, String(port), &hints, &found)
        guard resolved == 0, let first = found else {
            throw VoteError(.io, "cannot resolve \(host): \(String(cString: gai_strerror(resolved)))")
        }
        defer { freeaddrinfo(first) }
        var failure = "no address"
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let address = next {
            next = address.pointee.ai_next
            let socket = Glibc.socket(address.pointee.ai_family, address.pointee.ai_socktype, 0)
            guard socket >= 0 else { continue }
            _ = fcntl(socket, F_SETFL, fcntl(socket, F_GETFL) | O_NONBLOCK)
            if Glibc.connect(socket, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 { return socket }
            do {
                guard errno == EINPROGRESS else { throw VoteError(.io, String(cString: strerror(errno))) }
                try wait(socket, for: Int16(POLLOUT), deadline: deadline)
                var error: Int32 = 0
                var length = socklen_t(MemoryLayout<Int32>.size)
                getsockopt(socket, SOL_SOCKET, SO_ERROR, &error, &length)
                guard error == 0 else { throw VoteError(.io, String(cString: strerror(error))) }
                return socket
            } catch {
                close(socket)
                failure = VoteError.describe(error)
                if ContinuousClock.now >= deadline { break }
            }
        }
        throw VoteError(.io, "cannot connect to \(host):\(port): \(failure)")
    }

    private func wait(for events: Int16) throws { try Self.wait(socket, for: events, deadline: deadline) }

    /// Waits until `socket` is ready for `events`, or throws when `deadline` passes first.
    private static func wait(_ socket: Int32, for events: Int16, deadline: ContinuousClock.Instant) throws {
        while true {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { throw VoteError(.io, "no answer in time") }
            let (seconds, attoseconds) = left.components
            let milliseconds = Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
            var poller = pollfd(fd: socket, events: events, revents: 0)
            let ready = poll(&poller, 1, milliseconds)
            if ready > 0 { return }
            if ready < 0, errno != EINTR { throw VoteError(.io, String(cString: strerror(errno))) }
        }
    }
}
