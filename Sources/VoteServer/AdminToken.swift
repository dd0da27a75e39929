import Foundation
import Hummingbird
import Ledger
public import LedgerCrypto
public import VoteLedger

/// The authority's bearer token for the admin routes: 32 random bytes shown once (hex), of which only the
/// SHA-256 is kept, as `admin-token.sha256` in the ledger's key store (a file of mode 0600 in its key directory).
/// A copy of the ledger does not hand out the token; `vote admin-token rotate` replaces it, and a running server
/// reads the stored hash on every admin request, so a rotation takes effect at once.
public enum AdminToken {
    /// Creates a token for the ledger whose key store is `keys` if it has none, handing it to `show`
    /// first (see `rotate`); returns whether one was created.
    public static func createIfMissing(keys: any KeyStore, show: (String) throws -> Void) throws -> Bool {
        guard keys.read(KeyStoreNames.adminTokenHash) == nil else { return false }
        try rotate(keys: keys, show: show)
        return true
    }

    /// Replaces the ledger's token with a new one and returns it; the old one stops working. `show` hands
    /// the new token to the person (prints or writes it) before its hash replaces the old one: if it throws
    /// (standard output full, a file that cannot be created), the old token stays the one that works.
    @discardableResult
    public static func rotate(keys: any KeyStore, show: (String) throws -> Void = { _ in }) throws -> String {
        let token = Hex.encode(try SecureRandom.bytes(32))
        try show(token)
        do {
            try keys.replace(
                KeyStoreNames.adminTokenHash, contents: Array((SHA256.hash(Array(token.utf8)).hex + "\n").utf8))
        } catch { throw VoteError(error) }
        return token
    }

    /// Admits a request whose `Authorization: Bearer` token hashes to the admin token's hash: 401 without one,
    /// 403 with a wrong one. The hashes are compared in constant time; the token is never logged.
    static func authorize(_ request: Request, hash: AdminTokenHash) throws {
        guard let header = request.headers[.authorization], header.lowercased().hasPrefix("bearer ") else {
            throw APIError(
                .unauthorized, "unauthorized", "this route needs the admin token (Authorization: Bearer …)",
                headers: [.wwwAuthenticate: "Bearer"])
        }
        let given = SHA256.hash(Array(header.dropFirst(7).trimmingCharacters(in: .whitespaces).utf8)).bytes
        guard let expected = hash.bytes(), expected.count == given.count else {
            throw APIError(
                .forbidden, "forbidden",
                "the admin token is wrong (no token is configured; run vote admin-token rotate)")
        }
        var difference: UInt8 = 0
        for (a, b) in zip(given, expected) { difference |= a ^ b }
        guard difference == 0 else { throw APIError(.forbidden, "forbidden", "the admin token is wrong") }
    }
}

/// Where the admin routes find the SHA-256 of the admin token: the ledger's key store, read on every admin
/// request (so `vote admin-token rotate` takes effect at once), or a hash given when the server is built (a
/// ledger in memory has no key store).
public enum AdminTokenHash: Sendable {
    /// `admin-token.sha256` in this key store (none there: every token is refused).
    case stored(any KeyStore)
    /// This hash.
    case given(Digest)

    /// The hash of `token`, for `.given`.
    public static func of(_ token: String) -> AdminTokenHash { .given(SHA256.hash(Array(token.utf8))) }

    /// The hash's bytes now; nil if there is none (no token configured, or a stored file that is not a hash).
    func bytes() -> [UInt8]? {
        switch self {
        case .given(let digest): return digest.bytes
        case .stored(let keys):
            guard let stored = keys.read(KeyStoreNames.adminTokenHash) else { return nil }
            return Hex.decode(String(decoding: stored, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        }
    }
}
