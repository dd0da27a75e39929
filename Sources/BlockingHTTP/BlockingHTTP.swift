internal import COpenSSL
import Foundation
import VoteLedger

#if canImport(Glibc)
    import Glibc
#endif

/// One HTTP/1.1 request on a connection of its own, on non-blocking sockets that wait in `poll` with a
/// deadline, over OpenSSL's TLS for https://: what a witness is asked with (at most once a head, so nothing is
/// pooled) and what a voter's `vote ballot` talks to its server with. Plain POSIX, so a command-line client needs
/// no event loop, and a thread waiting for a slow answer sleeps in the kernel instead of polling.
public enum BlockingHTTP {
    /// An answer: its status and its body (chunks joined).
    public struct Reply: Sendable {
        public var status: Int
        public var body: [UInt8]
    }

    /// Sends `method` to `path` on `host:port` (over TLS if `tls`, the certificate checked against the
    /// authorities in the PEM file `trusting`, else against the system's: OpenSSL reads `SSL_CERT_FILE` and
    /// `SSL_CERT_DIR`) with `body` (of `contentType`, if given), and reads the answer, of at most `maxReply`
    /// bytes, giving up at `deadline` (connecting and the TLS handshake included; the host name is resolved first,
    /// by the system's resolver).
    public static func request(
        _ method: String, host: String, port: Int, tls: Bool, trusting caFile: String? = nil, path: String,
        contentType: String? = nil, body: [UInt8] = [], maxReply: Int, deadline: ContinuousClock.Instant
    ) throws -> Reply {
        let trust = try tls ? TLSClientContext.trusting(caFile) : nil
        let connection = try Connection(host: host, port: port, tls: trust, deadline: deadline)
        let authority = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        var head = "\(method) \(path.isEmpty ? "/" : path) HTTP/1.1\r\nHost: \(authority)\r\n"
        if let contentType { head += "Content-Type: \(contentType)\r\n" }
        if !body.isEmpty || method == "POST" { head += "Content-Length: \(body.count)\r\n" }
        try connection.send(Array((head + "Connection: close\r\n\r\n").utf8) + body)
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            if let reply = try parse(answer, complete: false) { return reply }
            let count = try connection.receive(into: &buffer)
            if count == 0 {
                guard let reply = try parse(answer, complete: true) else {
                    throw VoteError(.io, "the connection closed before the answer ended")
                }
                return reply
            }
            answer += buffer[..<count]
            guard answer.count <= maxReply else { throw VoteError(.io, "the answer is larger than \(maxReply) bytes") }
        }
    }

    /// The reply in `bytes` once it is whole (its length from Content-Length, chunks, or the connection's
    /// end when `complete`); nil while more is to come. Throws on an answer that is not HTTP/1.x.
    static func parse(_ bytes: [UInt8], complete: Bool) throws -> Reply? {
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
            fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let body = Array(bytes[end.upperBound...])
        if fields["transfer-encoding"]?.lowercased() == "chunked" {
            return try unchunked(body).map { Reply(status: code, body: $0) }
        }
        if let length = fields["content-length"] {
            guard let length = Int(length), length >= 0 else { throw VoteError(.io, "the answer is not HTTP") }
            return body.count >= length ? Reply(status: code, body: Array(body.prefix(length))) : nil
        }
        return complete ? Reply(status: code, body: body) : nil
    }

    /// A chunked body decoded once its last chunk has come; nil before.
    private static func unchunked(_ bytes: [UInt8]) throws -> [UInt8]? {
        var body: [UInt8] = []
        var at = 0
        while true {
            guard let line = bytes[at...].firstRange(of: Array("\r\n".utf8)) else { return nil }
            let sizeText = String(decoding: bytes[at..<line.lowerBound], as: UTF8.self).prefix { $0 != ";" }
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16), size >= 0 else {
                throw VoteError(.io, "the answer's chunks are malformed")
            }
            at = line.upperBound
            if size == 0 { return body }
            guard bytes.count >= at + size + 2 else { return nil }
            body += bytes[at..<at + size]
            at += size + 2
        }
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
