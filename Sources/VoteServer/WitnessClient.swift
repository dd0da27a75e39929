public import Ledger
import NIOCore
import NIOHTTP1
import NIOPosix
import VoteLedger

/// A witness `vote serve` asks for cosignatures (`--witness NAME=URL=VKEY`): its cosigner (name and key) and
/// where its `add-checkpoint` is (an http:// URL prefix).
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
        let path = String(rest.dropFirst(authority.count)).trimmingSuffix("/")
        guard let colon = authority.lastIndex(of: ":"), let port = Int(authority[authority.index(after: colon)...]),
            (1...65535).contains(port), colon > authority.startIndex
        else { throw VoteError(.usage, "--witness \(parts[0]): the URL needs a host and a port (http://HOST:PORT)") }
        self.cosigner = cosigner
        host = String(authority[..<colon])
        self.port = port
        self.path = path
    }
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: Character) -> String {
        var text = self
        while text.last == suffix { text.removeLast() }
        return text
    }
}

/// One HTTP/1.1 POST on a connection of its own (a witness is asked rarely: once per head at most).
enum WitnessHTTP {
    struct Reply: Sendable {
        var status: Int
        var contentType: String?
        var body: [UInt8]
    }

    /// The largest answer read: cosignature lines or a size.
    static let maxReply = 16 * 1024

    /// POSTs `body` to `path` on `host:port`, giving up after `timeout` (connecting included).
    static func post(host: String, port: Int, path: String, body: [UInt8], timeout: Duration) async throws -> Reply {
        try await withThrowingTaskGroup(of: Reply?.self) { group in
            group.addTask { try await exchange(host: host, port: port, path: path, body: body) }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let reply = first else {
                throw VoteError(.io, "no answer within \(timeout)")
            }
            return reply
        }
    }

    private static func exchange(host: String, port: Int, path: String, body: [UInt8]) async throws -> Reply {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(
                        wrappingChannelSynchronously: channel)
                }
            }
        return try await channel.executeThenClose { inbound, outbound in
            var head = HTTPRequestHead(version: .http1_1, method: .POST, uri: path)
            head.headers.add(name: "Host", value: "\(host):\(port)")
            head.headers.add(name: "Content-Length", value: String(body.count))
            head.headers.add(name: "Connection", value: "close")
            try await outbound.write(.head(head))
            try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: body))))
            try await outbound.write(.end(nil))
            var reply = Reply(status: 0, contentType: nil, body: [])
            for try await part in inbound {
                switch part {
                case .head(let response):
                    reply.status = Int(response.status.code)
                    reply.contentType = response.headers.first(name: "Content-Type")
                case .body(let buffer):
                    guard reply.body.count + buffer.readableBytes <= maxReply else {
                        throw VoteError(.io, "the answer is larger than \(maxReply) bytes")
                    }
                    reply.body += buffer.readableBytesView
                case .end: return reply
                }
            }
            throw VoteError(.io, "the connection closed before the answer ended")
        }
    }
}
