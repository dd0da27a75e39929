import Foundation
import Hummingbird

/// Failed token attempts per client address, as a token bucket: an address may fail `failureBurst` times
/// in a row, then once per `failureRefillMs`; beyond that every token-bearing request from it is answered
/// 429 with Retry-After until the bucket refills. Guessing a 160-bit voting token or the admin token is
/// hopeless anyway; this keeps a guesser from costing the server a hash and a roll lookup per try.
/// It runs on the server's clock (tests step it), so no test waits for a bucket to refill.
final class FailureLimiter: @unchecked Sendable {
    private let burst: Double
    private let refillMs: Double
    private let clock: @Sendable () -> Int64
    private let lock = NSLock()
    /// Remaining attempts and when they were counted, per address. Only addresses that failed recently
    /// are held: an entry whose bucket has refilled is dropped when the table grows.
    private var buckets: [String: (tokens: Double, at: Int64)] = [:]
    private static let pruneAbove = 10_000

    init(limits: ServerLimits, clock: @escaping @Sendable () -> Int64) {
        burst = Double(max(1, limits.failureBurst))
        refillMs = Double(max(1, limits.failureRefillMs))
        self.clock = clock
    }

    /// Throws 429 if `key` has no attempts left (a request that carries a token is refused before it is
    /// looked at). The key is worked out only if some address has failed lately: formatting the client's
    /// address for every vote cost more than the check.
    func check(_ key: @autoclosure () -> String) throws {
        let now = clock()
        let tokens = lock.withLock { buckets.isEmpty ? burst : level(key(), now: now) }
        guard tokens >= 1 else {
            let wait = Int(((1 - tokens) * refillMs / 1000).rounded(.up))
            throw APIError(
                .tooManyRequests, "rate_limited", "too many failed token attempts from this address; retry later",
                headers: [.retryAfter: String(max(1, wait))])
        }
    }

    /// Counts one failed attempt against `key`.
    func fail(_ key: String) {
        let now = clock()
        lock.withLock {
            buckets[key] = (max(0, level(key, now: now) - 1), now)
            if buckets.count > Self.pruneAbove {
                buckets = buckets.filter { level($0.key, now: now) < burst }
            }
        }
    }

    /// Runs `body` for a request from `key` carrying a token: refused at once if the address is limited;
    /// a failure that means the token was wrong (malformed, unknown, wrong admin token) is counted.
    func guarding<T>(_ key: @autoclosure () -> String, _ body: () async throws -> T) async throws -> T {
        try check(key())
        do { return try await body() } catch {
            if FailureLimiter.isBadToken(error) { fail(key()) }
            throw error
        }
    }

    /// Whether `error` says the token itself was wrong.
    static func isBadToken(_ error: any Error) -> Bool {
        let answer = APIError(error)
        return ["malformed_token", "token_mistyped", "token_not_authorized", "forbidden"].contains(answer.code)
    }

    /// Attempts left for `key` now (lock held).
    private func level(_ key: String, now: Int64) -> Double {
        guard let entry = buckets[key] else { return burst }
        return min(burst, entry.tokens + Double(max(0, now - entry.at)) / refillMs)
    }
}
