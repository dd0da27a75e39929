import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A loopback HTTP/1.1 listener for a test that plays a server the project does not ship: a hostile proxy in
/// front of a real `vote serve` (answering with what it chooses), or a server that is slow to answer. Each
/// connection is read on a thread of its own (never on Swift concurrency's pool), answered by `handle` with the
/// bytes it returns, and closed.
public final class TestHTTPListener: @unchecked Sendable {
    /// A request as it came: its method, path and body, and every byte of it.
    public struct Request: Sendable {
        public var method: String
        public var path: String
        public var body: [UInt8]
        public var raw: [UInt8]
    }

    /// An answer read back: status, content type and body.
    public struct Answer: Sendable {
        public var status: Int
        public var contentType: String
        public var body: [UInt8]

        public init(status: Int, contentType: String, body: [UInt8]) {
            self.status = status
            self.contentType = contentType
            self.body = body
        }

        /// An answer whose body is `object` as JSON.
        public init(status: Int, json object: Any) {
            self.init(
                status: status, contentType: "application/json",
                body: Array((try? JSONSerialization.data(withJSONObject: object)) ?? Data()))
        }

        /// The body as a JSON object (nil if it is not one).
        public var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] }

        /// The answer as HTTP/1.1 bytes, its length given and the connection closed after it.
        public var bytes: [UInt8] {
            Array(
                "HTTP/1.1 \(status) X\r\nContent-Type: \(contentType)\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
                    .utf8) + body
        }
    }

    /// The port it listens on, on 127.0.0.1.
    public let port: Int
    public var url: String { "http://127.0.0.1:\(port)" }
    private let socket: Int32

    /// Listens on an ephemeral loopback port; every request is answered with `handle`'s bytes.
    public init(_ handle: @escaping @Sendable (Request) -> [UInt8]) throws {
        let listener = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && listen(listener, 64) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        guard listener >= 0, bound else {
            close(listener)
            throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "cannot listen on 127.0.0.1"])
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        socket = listener
        Thread.detachNewThread {
            while true {
                let connection = accept(listener, nil, nil)
                if connection < 0 {
                    if errno == EINTR { continue }
                    return
                }
                Thread.detachNewThread {
                    defer { close(connection) }
                    guard let request = Self.read(connection) else { return }
                    Self.write(handle(request), to: connection)
                }
            }
        }
    }

    /// Stops listening (connections under way are still answered).
    public func stop() {
        shutdown(socket, Int32(SHUT_RDWR))
        close(socket)
    }

    /// Sends `request` to the server on 127.0.0.1:`port` as it came (as HTTP/1.0, so the answer comes whole
    /// and unchunked) and reads its answer.
    public static func forward(_ request: Request, to port: Int) -> Answer {
        let connection = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(connection) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(connection, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else { return Answer(status: 502, json: ["error": ["message": "upstream unreachable"]]) }
        var text = String(decoding: request.raw, as: UTF8.self)
        if let line = text.range(of: " HTTP/1.1\r\n") { text.replaceSubrange(line, with: " HTTP/1.0\r\n") }
        write(Array(text.utf8), to: connection)
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = Glibc.read(connection, &buffer, 65536)
            if count <= 0 { break }
            answer += buffer[..<count]
        }
        guard let end = answer.firstRange(of: Array("\r\n\r\n".utf8)) else {
            return Answer(status: 502, json: ["error": ["message": "upstream answer is not HTTP"]])
        }
        let head = String(decoding: answer[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let status = head[0].split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 502
        let type =
            head.dropFirst().first { $0.lowercased().hasPrefix("content-type:") }.map {
                String($0.dropFirst("content-type:".count)).trimmingCharacters(in: .whitespaces)
            } ?? "application/octet-stream"
        return Answer(status: status, contentType: type, body: Array(answer[end.upperBound...]))
    }

    /// A request read whole (its head, then `Content-Length` bytes of body); nil if the peer went away first.
    private static func read(_ connection: Int32) -> Request? {
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            if let end = data.firstRange(of: Array("\r\n\r\n".utf8)) {
                let head = String(decoding: data[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
                let length =
                    head.dropFirst().first { $0.lowercased().hasPrefix("content-length:") }.flatMap {
                        Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
                    } ?? 0
                if data.count - end.upperBound >= length {
                    let parts = head[0].split(separator: " ")
                    guard parts.count >= 2 else { return nil }
                    return Request(
                        method: String(parts[0]), path: String(parts[1]),
                        body: Array(data[end.upperBound..<end.upperBound + length]), raw: data)
                }
            }
            let count = Glibc.read(connection, &buffer, 65536)
            if count <= 0 { return nil }
            data += buffer[..<count]
        }
    }

    private static func write(_ bytes: [UInt8], to connection: Int32) {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes {
                send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if count <= 0 { return }
            sent += count
        }
    }
}

/// What a program run to completion used: its exit status, the CPU time it (and its children) spent, user and
/// system, and the wall time it took; its standard error.
public struct MeasuredRun: Sendable {
    public var status: Int32
    public var cpu: Duration
    public var wall: Duration
    public var err: String
}

/// Runs `executable` with `arguments` and `environment` to completion (standard output discarded) and measures
/// the CPU time it used, from `wait4`'s resource usage of that one child: other tests' programs running at the
/// same time do not count.
public func runMeasuringCPU(
    _ executable: String, _ arguments: [String], environment: [String: String]
) throws -> MeasuredRun {
    let errors = TemporaryDirectory()
    let errPath = errors.child("stderr")
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    let argv = ([executable] + arguments).map { strdup($0) } + [nil]
    let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { (argv + envp).forEach { free($0) } }
    let clock = ContinuousClock()
    let start = clock.now
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, executable, &actions, nil, argv, envp)
    guard spawned == 0 else {
        throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "cannot run \(executable)"])
    }
    var status: Int32 = 0
    var usage = rusage()
    var waited = wait4(pid, &status, 0, &usage)
    while waited < 0 && errno == EINTR { waited = wait4(pid, &status, 0, &usage) }
    guard waited == pid else {
        throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "cannot wait for \(executable)"])
    }
    let wall = clock.now - start
    func duration(_ time: timeval) -> Duration { .seconds(time.tv_sec) + .microseconds(time.tv_usec) }
    let exited = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    return MeasuredRun(
        status: exited, cpu: duration(usage.ru_utime) + duration(usage.ru_stime), wall: wall,
        err: (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "")
}
