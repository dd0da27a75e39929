import Foundation
import Hummingbird

/// Failed token attempts per client, as a token bucket: a client may fail `failureBurst` times in a row,
/// then once per `failureRefillMs`; beyond that its failed attempts are answered 429 with Retry-After (not
/// with what was wrong) until the bucket refills. A request whose token is good is always served: a voting
/// hall behind one NAT shares one address, and one member's typos must not lock the others out. Guessing a
/// 160-bit voting token or the admin token is hopeless anyway; this keeps a guesser from learning anything
/// from most of its tries. The client is the peer address, or what a trusted proxy says (`ClientResolver`).
/// It runs on the server's clock (tests step it), so no test waits for a bucket to refill.
final class FailureLimiter: @unchecked Sendable {
    private let burst: Double
    private let refillMs: Double
    private let clock: @Sendable () -> Int64
    private let clients: ClientResolver
    private let lock = NSLock()
    /// Remaining attempts and when they were counted, per client. Only clients that failed recently are
    /// held: an entry whose bucket has refilled is dropped when the table grows.
    private var buckets: [String: (tokens: Double, at: Int64)] = [:]
    private static let pruneAbove = 10_000

    init(limits: ServerLimits, clock: @escaping @Sendable () -> Int64) {
        burst = Double(max(1, limits.failureBurst))
        refillMs = Double(max(1, limits.failureRefillMs))
        clients = ClientResolver(trustedProxies: limits.trustedProxies)
        self.clock = clock
    }

    /// Runs `body` for `request`, which carries a token: a failure that means the token was wrong (malformed,
    /// unknown, wrong admin token) is counted against the request's client, and answered 429 if the client
    /// had no attempts left. Any other outcome is `body`'s own. The client is worked out only on a failure:
    /// formatting the client's address for every vote cost more than the check.
    func guarding<T>(
        _ request: Request, _ context: ServerContext, _ body: () async throws -> T
    ) async throws -> T {
        do { return try await body() } catch  where FailureLimiter.isBadToken(error) {
            let left = fail(clients.key(request, peer: context.remoteAddress))
            guard left >= 1 else {
                let wait = Int(((1 - left) * refillMs / 1000).rounded(.up))
                throw APIError(
                    .tooManyRequests, "rate_limited", "too many failed token attempts from this address; retry later",
                    headers: [.retryAfter: String(max(1, wait))])
            }
            throw error
        }
    }

    /// Counts one failed attempt against `key`; returns the attempts it had left before this one.
    private func fail(_ key: String) -> Double {
        let now = clock()
        return lock.withLock {
            let left = level(key, now: now)
            buckets[key] = (max(0, left - 1), now)
            if buckets.count > Self.pruneAbove {
                buckets = buckets.filter { level($0.key, now: now) < burst }
            }
            return left
        }
    }

    /// Whether `error` says the token itself was wrong.
    static func isBadToken(_ error: any Error) -> Bool {
        let answer = APIError(error)
        return ["malformed_token", "token_mistyped", "token_not_authorized", "code_not_authorized", "forbidden"]
            .contains(answer.code)
    }

    /// Attempts left for `key` now (lock held).
    private func level(_ key: String, now: Int64) -> Double {
        guard let entry = buckets[key] else { return burst }
        return min(burst, entry.tokens + Double(max(0, now - entry.at)) / refillMs)
    }
}
