import Foundation
import Hummingbird
import LedgerCrypto
import NIOCore

/// `Idempotency-Key` on the admin writes, votes and anonymous ballots: a retried request (same key, same method, path, media type and
/// body) within `IdempotencyStore.window` gets the first answer again, status and body, tokens included,
/// and records nothing twice. A key sent with a different request is refused (422); a retry while the first
/// is still being answered is told to wait (409, Retry-After). Server errors (5xx) and 429 (too many failed
/// token attempts, which says nothing about the request) are not kept, so their retry runs again. Without the
/// header nothing changes.
struct IdempotencyMiddleware: RouterMiddleware {
    let store: IdempotencyStore
    let clock: @Sendable () -> Int64
    /// The largest body read (413 beyond): the routes' own limit.
    var limit = AdminRoutes.csvLimit

    func handle(
        _ request: Request, context: ServerContext, next: (Request, ServerContext) async throws -> Response
    ) async throws -> Response {
        guard let key = request.headers[.idempotencyKey] else { return try await next(request, context) }
        guard (1...255).contains(key.utf8.count), key.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw APIError(
                .badRequest, "bad_idempotency_key", "the Idempotency-Key header must be 1-255 visible ASCII characters")
        }
        var request = request
        let body = try await JSONBody.bytes(request, limit: limit)
        request.body = .init(buffer: body)
        var hasher = SHA256Hasher()
        for part in [request.method.rawValue, request.uri.path, request.headers[.contentType] ?? ""] {
            hasher.update(Array(part.utf8) + [0])
        }
        hasher.update(Array(body.readableBytesView))
        let fingerprint = hasher.finalize()

        switch store.begin(key, fingerprint: fingerprint, now: clock()) {
        case .replay(let stored): return stored.response
        case .mismatch:
            throw APIError(
                .unprocessableContent, "idempotency_key_reused",
                "this Idempotency-Key was already used for a different request")
        case .inProgress:
            throw APIError(
                .conflict, "idempotency_key_in_use",
                "a request with this Idempotency-Key is still being answered; retry shortly",
                headers: [.retryAfter: "1"])
        case .new: break
        }
        let response: Response
        do {
            response = try await next(request, context)
        } catch {
            let answer = APIError(error)
            guard answer.status.code < 500, answer.status != .tooManyRequests else {
                store.abandon(key)
                throw error
            }
            response = try answer.response(from: request, context: context)
        }
        guard response.status.code < 500, response.status != .tooManyRequests else {
            store.abandon(key)
            return response
        }
        let collected = BodyCollector()
        try await response.body.write(collected)
        let stored = StoredResponse(status: response.status, headers: response.headers, body: collected.buffer)
        store.finish(key, stored)
        return stored.response
    }
}

/// An answer as it was first given.
struct StoredResponse: Sendable {
    var status: HTTPResponse.Status
    var headers: HTTPFields
    var body: ByteBuffer

    var response: Response { Response(status: status, headers: headers, body: .init(byteBuffer: body)) }
}

/// The answers `IdempotencyMiddleware` keeps, in memory and bounded: each for `window` ms after its request
/// arrived, at most `maxEntries` of them and `maxBytes` of bodies (the oldest go first; an answer larger than
/// `maxBytes` is not kept). A server restart forgets them all: then re-issue is the way back to lost tokens.
final class IdempotencyStore: @unchecked Sendable {
    static let window: Int64 = 24 * 3_600_000
    let maxEntries: Int
    let maxBytes: Int

    enum Begin {
        case new, replay(StoredResponse), mismatch, inProgress
    }

    private struct Entry {
        var fingerprint: Digest
        var time: Int64
        var stored: StoredResponse?
    }

    private let lock = NSLock()
    private var entries: [String: Entry] = [:]
    /// Keys in the order their requests arrived (a key appears once; removed keys are skipped when reached).
    private var order: [String] = []
    private var first = 0
    private var bytes = 0

    init(maxEntries: Int = 10_000, maxBytes: Int = 64 << 20) {
        self.maxEntries = maxEntries
        self.maxBytes = maxBytes
    }

    /// What to do with a request under `key`: run it (it is now in progress), or answer it from the store.
    func begin(_ key: String, fingerprint: Digest, now: Int64) -> Begin {
        lock.withLock {
            evict(now: now)
            if let entry = entries[key] {
                guard entry.fingerprint == fingerprint else { return .mismatch }
                return entry.stored.map(Begin.replay) ?? .inProgress
            }
            entries[key] = Entry(fingerprint: fingerprint, time: now)
            order.append(key)
            return .new
        }
    }

    /// Keeps the answer to the request under `key`.
    func finish(_ key: String, _ stored: StoredResponse) {
        lock.withLock {
            guard entries[key] != nil, stored.body.readableBytes <= maxBytes else {
                entries[key] = nil
                return
            }
            entries[key]!.stored = stored
            bytes += stored.body.readableBytes
            evict(now: nil)
        }
    }

    /// Forgets the request under `key`: it failed on the server's side, and a retry runs it again.
    func abandon(_ key: String) {
        lock.withLock { _ = entries.removeValue(forKey: key) }
    }

    /// Number of requests kept (answered or in progress).
    var count: Int { lock.withLock { entries.count } }

    /// Drops the oldest entries while any is older than the window (when `now` is given) or the store is over a
    /// bound. Called with the lock held.
    private func evict(now: Int64?) {
        while first < order.count {
            let key = order[first]
            guard let entry = entries[key] else {
                first += 1
                continue
            }
            let expired = now.map { entry.time <= $0 - IdempotencyStore.window } ?? false
            guard expired || entries.count > maxEntries || bytes > maxBytes else { break }
            bytes -= entry.stored?.body.readableBytes ?? 0
            entries[key] = nil
            first += 1
        }
        if first > 1024 && first * 2 > order.count {
            order.removeFirst(first)
            first = 0
        }
    }
}

/// Gathers a response body's bytes (a class, as `ResponseBody.write` consumes the writer it is given).
private final class BodyCollector: ResponseBodyWriter {
    var buffer = ByteBuffer()
    func write(_ buffer: ByteBuffer) async throws {
        var part = buffer
        self.buffer.writeBuffer(&part)
    }
    func finish(_ trailingHeaders: HTTPFields?) async throws {}
}

extension HTTPFields.Element.Name {
    static let idempotencyKey = HTTPFields.Element.Name("Idempotency-Key")!
}
