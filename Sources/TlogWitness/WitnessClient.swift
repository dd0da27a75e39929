internal import COpenSSL
import Foundation
public import Ledger
import VoteLedger

#if canImport(Glibc)
    import Glibc
#endif

/// A witness a writer asks for cosignatures (`--witness NAME=URL=VKEY`): its cosigner (name and key) and
/// where its `add-checkpoint` is (an http:// or https:// URL prefix). `vote serve`, `vote cast` and `vote
/// head` ask through it.
public struct WitnessEndpoint: Sendable {
    public let cosigner: Cosigner
    /// Whether it is asked over TLS (https://), its certificate checked against the system's trusted
    /// authorities (OpenSSL's defaults: `SSL_CERT_FILE` and `SSL_CERT_DIR` name others).
    public let tls: Bool
    public let host: String
    public let port: Int
    /// The submission prefix's path ("" or "/prefix"), to which "/add-checkpoint" is appended.
    public let path: String

    /// Parses `NAME=URL=VKEY`; NAME must be the verifier key's name, URL an http:// or https:// URL (port 80
    /// or 443 unless it names one; an IPv6 host in brackets).
    public init(option text: String) throws {
        let parts = text.split(separator: "=", maxSplits: 2, omittingEmptySubsequences: false)
        let usage =
            "--witness must be NAME=https://HOST[:PORT][/PREFIX]=VKEY (or http://), VKEY the cosigner verifier key of NAME"
        guard parts.count == 3, let cosigner = Cosigner(verifierKey: String(parts[2])), cosigner.name == parts[0],
            let scheme = ["http://", "https://"].first(where: { parts[1].hasPrefix($0) })
        else { throw VoteError(.usage, usage) }
        let rest = parts[1].dropFirst(scheme.count)
        let authority = rest.prefix { $0 != "/" }
        var path = String(rest.dropFirst(authority.count))
        while path.last == "/" { path.removeLast() }
        tls = scheme == "https://"
        var host = authority
        var port = tls ? 443 : 80
        if let colon = authority.lastIndex(of: ":"), !authority[colon...].contains("]") {
            guard let named = Int(authority[authority.index(after: colon)...]), (1...65535).contains(named) else {
                throw VoteError(.usage, "--witness \(parts[0]): the URL's port must be a number from 1 to 65535")
            }
            host = authority[..<colon]
            port = named
        }
        if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        guard !host.isEmpty, !host.contains(where: { $0.isWhitespace || $0 == "@" }) else {
            throw VoteError(.usage, "--witness \(parts[0]): the URL needs a host")
        }
        self.cosigner = cosigner
        self.host = String(host)
        self.port = port
        self.path = path
    }

    /// Why a witness did not cosign.
    public struct Refusal: Error, Sendable {
        public var reason: String

        public init(reason: String) { self.reason = reason }
    }

    /// A witness's valid cosignature lines.
    public typealias Lines = [(name: String, payload: [UInt8])]

    /// Asks this witness to cosign `note` (the signed head `checkpoint` of the ledger `source` reads), from
    /// `old`, the size it last cosigned (nil: unknown, asked from 0 and learned from its 409), with a
    /// consistency proof from there; gives up after `timeout`. Blocks the calling thread; returns the
    /// witness's valid cosignature lines.
    public func cosign(
        _ note: SignedNote, checkpoint: Checkpoint, source: some BlockSource, from old: UInt64?, timeout: Duration
    ) -> Result<Lines, Refusal> {
        let deadline = ContinuousClock.now + timeout
        var old = old ?? 0
        for _ in 0..<2 {
            guard old <= checkpoint.treeSize else {
                return .failure(
                    Refusal(
                        reason:
                            "it cosigned \(old) events, more than this ledger's \(checkpoint.treeSize): it saw another history"
                    ))
            }
            do {
                let proof =
                    old == 0 || old == checkpoint.treeSize
                    ? []
                    : try source.consistencyProof(oldSize: old, newSize: checkpoint.treeSize, root: checkpoint.root)
                let body =
                    "old \(old)\n" + proof.map { Base64.encode($0.bytes) + "\n" }.joined() + "\n" + note.serialized
                let reply = try WitnessHTTP.post(
                    host: host, port: port, tls: tls, path: path + "/add-checkpoint", body: Array(body.utf8),
                    deadline: deadline)
                let text = String(decoding: reply.body, as: UTF8.self)
                if reply.status == 409, let size = UInt64(text.dropLast()), text.hasSuffix("\n") {
                    old = size
                    continue
                }
                guard reply.status == 200, let cosigned = SignedNote(parsing: note.serialized + text),
                    cosigner.timestamp(of: cosigned) != nil
                else {
                    // Its first line, at most 200 characters, control characters shown as "?": a witness's text
                    // reaches the operator's terminal and log.
                    let said = String(
                        text.prefix { $0 != "\n" }.prefix(200).map { $0.isASCII && !$0.isPrintable ? "?" : $0 })
                    return .failure(Refusal(reason: "it answered \(reply.status): \(said)"))
                }
                return .success(
                    cosigned.signatures.filter {
                        $0.name == cosigner.name && Array($0.payload.prefix(4)) == cosigner.keyID
                    })
            } catch {
                return .failure(Refusal(reason: VoteError.describe(error)))
            }
        }
        return .failure(Refusal(reason: "it answered 409 twice"))
    }

    /// `note` with the cosignatures of every witness of `witnesses` that gives one, each asked on a thread of
    /// its own (in parallel, each from the size its 409 names, bounded by `timeout`); and why each of the
    /// others did not, by name. Blocks the calling thread for at most about `timeout`.
    public static func cosign(
        _ note: SignedNote, by witnesses: [WitnessEndpoint], source: any BlockSource, timeout: Duration
    ) -> (note: SignedNote, refusals: [(name: String, reason: String)]) {
        guard let checkpoint = Checkpoint(text: note.text) else {
            return (note, witnesses.map { ($0.cosigner.name, "the head is not a checkpoint") })
        }
        let answers = Locked([Result<Lines, Refusal>?](repeating: nil, count: witnesses.count))
        let done = DispatchGroup()
        for (index, witness) in witnesses.enumerated() {
            done.enter()
            Thread.detachNewThread {
                let answer = witness.cosign(note, checkpoint: checkpoint, source: source, from: nil, timeout: timeout)
                answers.withLock { $0[index] = answer }
                done.leave()
            }
        }
        done.wait()
        var cosigned = note
        var refusals: [(name: String, reason: String)] = []
        for (witness, answer) in zip(witnesses, answers.withLock { $0 }) {
            switch answer! {
            case .success(let lines): cosigned.signatures += lines
            case .failure(let refusal): refusals.append((witness.cosigner.name, refusal.reason))
            }
        }
        return (cosigned, refusals)
    }
}

/// One HTTP/1.1 POST on a connection of its own, on blocking sockets with a deadline (a witness is asked at
/// most once a head, so nothing is pooled), over OpenSSL's TLS for an https:// witness. Plain POSIX, so the
/// command-line writer needs no event loop.
enum WitnessHTTP {
    struct Reply: Sendable {
        var status: Int
        var body: [UInt8]
    }

    /// The largest answer read, headers and body: cosignature lines or a size.
    static let maxReply = 16 * 1024

    /// POSTs `body` to `path` on `host:port` (over TLS if `tls`) and reads the answer, giving up at
    /// `deadline` (connecting and the TLS handshake included; the host name is resolved first, by the
    /// system's resolver).
    static func post(
        host: String, port: Int, tls: Bool, path: String, body: [UInt8], deadline: ContinuousClock.Instant
    ) throws -> Reply {
        let connection = try Connection(host: host, port: port, tls: tls, deadline: deadline)
        let authority = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        let request =
            "POST \(path.isEmpty ? "/" : path) HTTP/1.1\r\nHost: \(authority)\r\nContent-Length: \(body.count)\r\n"
            + "Connection: close\r\n\r\n"
        try connection.send(Array(request.utf8) + body)
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
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

/// A connection to a witness: a non-blocking TCP socket, with a TLS session over it for https://, every wait
/// bounded by one deadline.
private final class Connection {
    private let socket: Int32
    private var tls: OpaquePointer?
    private let deadline: ContinuousClock.Instant

    /// The client side of TLS: TLS 1.2 or later, the peer's certificate checked against the system's trusted
    /// authorities (OpenSSL reads `SSL_CERT_FILE` and `SSL_CERT_DIR` for others); nil if OpenSSL cannot make it.
    nonisolated(unsafe) private static let context: OpaquePointer? = {
        guard let context = SSL_CTX_new(TLS_client_method()) else { return nil }
        guard SSL_CTX_set_default_verify_paths(context) == 1, vl_ssl_ctx_require_tls12(context) == 1 else {
            SSL_CTX_free(context)
            return nil
        }
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        vl_ssl_ctx_ignore_unexpected_eof(context)
        return context
    }()

    init(host: String, port: Int, tls: Bool, deadline: ContinuousClock.Instant) throws {
        self.deadline = deadline
        socket = try Self.connect(host: host, port: port, deadline: deadline)
        guard tls else { return }
        guard let context = Self.context, let session = SSL_new(context) else {
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

    func send(_ bytes: [UInt8]) throws {
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
    func receive(into buffer: inout [UInt8]) throws -> Int {
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

    private static func openSSLError() -> String {
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

extension Character {
    /// Whether an ASCII character prints (not a control character).
    fileprivate var isPrintable: Bool { asciiValue.map { $0 >= 0x20 && $0 != 0x7F } ?? true }
}
