import Foundation
public import Ledger

#if canImport(Glibc)
    import Glibc
#endif

/// A witness a writer asks for cosignatures (`--witness NAME=URL=VKEY`): its cosigner (name and key) and
/// where its `add-checkpoint` is (an http:// URL prefix). `vote serve`, `vote cast` and `vote head` ask
/// through it.
public struct WitnessEndpoint: Sendable {
    public let cosigner: Cosigner
    public let host: String
    public let port: Int
    /// The submission prefix's path ("" or "/prefix"), to which "/add-checkpoint" is appended.
    public let path: String

    /// Parses `NAME=URL=VKEY`; NAME must be the verifier key's name, URL an http:// URL.
    public init(option text: String) throws {
        let parts = text.split(separator: "=", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, let cosigner = Cosigner(verifierKey: String(parts[2])), cosigner.name == parts[0],
            parts[1].hasPrefix("http://")
        else {
            throw VoteError(
                .usage, "--witness must be NAME=http://HOST:PORT[/PREFIX]=VKEY, VKEY the cosigner verifier key of NAME")
        }
        let rest = parts[1].dropFirst("http://".count)
        let authority = rest.prefix { $0 != "/" }
        var path = String(rest.dropFirst(authority.count))
        while path.last == "/" { path.removeLast() }
        guard let colon = authority.lastIndex(of: ":"), let port = Int(authority[authority.index(after: colon)...]),
            (1...65535).contains(port), colon > authority.startIndex
        else { throw VoteError(.usage, "--witness \(parts[0]): the URL needs a host and a port (http://HOST:PORT)") }
        self.cosigner = cosigner
        host = String(authority[..<colon])
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
                    host: host, port: port, path: path + "/add-checkpoint", body: Array(body.utf8), deadline: deadline)
                let text = String(decoding: reply.body, as: UTF8.self)
                if reply.status == 409, let size = UInt64(text.dropLast()), text.hasSuffix("\n") {
                    old = size
                    continue
                }
                guard reply.status == 200, let cosigned = SignedNote(parsing: note.serialized + text),
                    cosigner.timestamp(of: cosigned) != nil
                else {
                    return .failure(
                        Refusal(reason: "it answered \(reply.status): \(text.prefix { $0 != "\n" }.prefix(200))"))
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
/// most once a head, so nothing is pooled). Plain POSIX, so the command-line writer needs no event loop.
enum WitnessHTTP {
    struct Reply: Sendable {
        var status: Int
        var body: [UInt8]
    }

    /// The largest answer read, headers and body: cosignature lines or a size.
    static let maxReply = 16 * 1024

    /// POSTs `body` to `path` on `host:port` and reads the answer, giving up at `deadline` (connecting
    /// included; the host name is resolved first, by the system's resolver).
    static func post(
        host: String, port: Int, path: String, body: [UInt8], deadline: ContinuousClock.Instant
    ) throws -> Reply {
        let socket = try connect(host: host, port: port, deadline: deadline)
        defer { close(socket) }
        let request =
            "POST \(path.isEmpty ? "/" : path) HTTP/1.1\r\nHost: \(host):\(port)\r\nContent-Length: \(body.count)\r\n"
            + "Connection: close\r\n\r\n"
        try send(socket, Array(request.utf8) + body, deadline: deadline)
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            if let reply = try parse(answer, complete: false) { return reply }
            try wait(socket, for: Int16(POLLIN), deadline: deadline)
            let count = read(socket, &buffer, buffer.count)
            if count < 0, errno == EINTR || errno == EAGAIN { continue }
            guard count >= 0 else { throw VoteError(.io, "reading the answer: \(String(cString: strerror(errno)))") }
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

    private static func send(_ socket: Int32, _ bytes: [UInt8], deadline: ContinuousClock.Instant) throws {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes {
                Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if count < 0, errno == EAGAIN || errno == EINTR {
                try wait(socket, for: Int16(POLLOUT), deadline: deadline)
                continue
            }
            guard count > 0 else { throw VoteError(.io, "sending the request: \(String(cString: strerror(errno)))") }
            sent += count
        }
    }

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
