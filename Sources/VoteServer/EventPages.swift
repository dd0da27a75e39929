import Election
import Foundation
import Hummingbird
import JSONViews
import Ledger
import VoteLedger

/// `GET /api/v1/events`: the ledger's events as JSON lines (as `vote export --events` prints them), a page at
/// a time: `limit` events (default `defaultLimit`, at most `maxLimit`) from event index `from` (the cursor;
/// the next page's is in the `Link: …; rel="next"` header of a full page, and is the last line's `index` + 1).
/// A full page holds only events the ledger already had, which never change (nothing is ever rewritten), so
/// it carries an ETag and `Cache-Control: immutable` and is answered 304 to a client that has it; a page that
/// reaches the head is not cached. Pages are read on NIO's thread pool, at most `concurrentReaders` at once,
/// so readers of the whole ledger neither hold the threads the writer runs on nor take the disk from it.
struct EventPages: Sendable {
    static let defaultLimit: UInt64 = 1000
    static let maxLimit: UInt64 = 10_000
    /// What a full page's ETag names besides the ledger and the range: the lines' shape, should it change.
    private static let shape = "events-v1"

    let server: LedgerServer
    private let gate: Gate

    init(server: LedgerServer, concurrentReaders: Int) {
        self.server = server
        gate = Gate(max(1, concurrentReaders))
    }

    func response(_ request: Request) async throws -> Response {
        let query = request.uri.queryParameters
        let from = try EventPages.number(query.get("from"), "from") ?? 0
        let limit = try EventPages.number(query.get("limit"), "limit") ?? EventPages.defaultLimit
        guard (1...EventPages.maxLimit).contains(limit) else {
            throw APIError(.badRequest, "bad_request", "limit must be 1 to \(EventPages.maxLimit) events")
        }
        let view = server.view()
        let treeSize = view.head.treeSize
        let (end, overflow) = from.addingReportingOverflow(limit)
        let full = !overflow && end <= treeSize
        var headers: HTTPFields = [.contentType: "application/x-ndjson"]
        let etag = "\"\(EventPages.shape)-\(server.genesis.ledgerID)-\(from)-\(limit)\""
        if full {
            headers[.link] = "</api/v1/events?from=\(end)&limit=\(limit)>; rel=\"next\""
            // Only a page served without withheld events carries this tag, and such a page never changes: an event
            // is withheld from when it is written until its place's voting ends, never after.
            if EventPages.matches(request.headers[values: .ifNoneMatch], etag) {
                headers[.eTag] = etag
                headers[.cacheControl] = EventPages.final
                return Response(status: .notModified, headers: headers)
            }
        }
        let indexes = from..<(full ? end : max(from, treeSize))
        // While a place's results are embargoed, its events are shown as the public sees them (§11.20).
        let now = server.clock()
        let embargo = Embargo.withholdsAny(view.state, at: now) ? view.state : nil
        let (lines, withheld) = try await gate.run {
            try await server.read { try EventPages.read($0, indexes: indexes, embargo: embargo, at: now) }
        }
        if withheld {
            // The page changes when voting ends: no cache may keep it.
            headers[.cacheControl] = "no-store"
        } else if full {
            headers[.eTag] = etag
            headers[.cacheControl] = EventPages.final
        }
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: lines)))
    }

    /// How a page that can never change may be cached.
    private static let final = "public, max-age=31536000, immutable"

    /// The lines of the events whose indexes are in `indexes`, a block at a time from the one holding the first,
    /// each block as the public sees it at `time` under the embargoes of `embargo` (none if nil); and whether
    /// any event of them is withheld.
    private static func read(
        _ source: any BlockSource, indexes: Range<UInt64>, embargo: ElectionState?, at time: Int64
    ) throws -> (Data, Bool) {
        var lines = Data()
        var withheld = false
        guard !indexes.isEmpty, var height = try source.height(ofEvent: indexes.lowerBound) else {
            return (lines, withheld)
        }
        while var block = try source.block(at: height) {
            if let embargo {
                let shown = try Embargo.publicBlock(block, embargo, at: time)
                withheld = withheld || shown.bytes != block.bytes
                block = shown
            }
            lines.append(try EventLineJSON.lines(of: block, indexes: indexes))
            if block.header.treeSize >= indexes.upperBound { break }
            height += 1
        }
        return (lines, withheld)
    }

    /// A non-negative integer query parameter; nil if absent, 400 if malformed.
    private static func number(_ text: String?, _ name: String) throws -> UInt64? {
        guard let text else { return nil }
        guard let value = UInt64(text) else {
            throw APIError(.badRequest, "bad_request", "query parameter \(name) must be a non-negative integer")
        }
        return value
    }

    /// Whether an If-None-Match header names `etag` (or is `*`).
    private static func matches(_ values: [String], _ etag: String) -> Bool {
        values.flatMap { $0.split(separator: ",") }.contains {
            let tag = $0.trimmingCharacters(in: .whitespaces)
            return tag == "*" || tag == etag || tag == "W/" + etag
        }
    }
}

/// At most `limit` holders at once; the others wait in arrival order.
final class Gate: @unchecked Sendable {
    private let lock = NSLock()
    private var free: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(_ limit: Int) { free = limit }

    func run<T>(_ body: () async throws -> T) async throws -> T {
        await withCheckedContinuation { continuation in
            let admitted = lock.withLock {
                guard free > 0 else {
                    waiting.append(continuation)
                    return false
                }
                free -= 1
                return true
            }
            if admitted { continuation.resume() }
        }
        defer {
            let next = lock.withLock {
                if waiting.isEmpty { free += 1 }
                return waiting.isEmpty ? nil : waiting.removeFirst()
            }
            next?.resume()
        }
        return try await body()
    }
}

extension HTTPFields.Element.Name {
    static let link = HTTPFields.Element.Name("Link")!
}
