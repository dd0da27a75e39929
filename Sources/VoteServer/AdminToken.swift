import Foundation
import Hummingbird
import Ledger
import LedgerCrypto
import VoteLedger

/// The authority's bearer token for the admin routes: 32 random bytes shown once (hex), of which only the
/// SHA-256 is kept, in `admin-token.sha256` (0600) beside the authority key. A leaked copy of the ledger
/// directory does not hand out the token; `vote admin-token rotate` replaces it, and a running server
/// reads the stored hash on every admin request, so a rotation takes effect at once.
public enum AdminToken {
    static let fileName = "admin-token.sha256"

    /// Creates a token for the ledger at `path` if it has none; returns it (to be shown once), else nil.
    public static func createIfMissing(ledger path: String) throws -> String? {
        guard ProtectedFile.read(path + "/" + fileName) == nil else { return nil }
        return try rotate(ledger: path)
    }

    /// Replaces the ledger's token with a new one and returns it; the old one stops working.
    public static func rotate(ledger path: String) throws -> String {
        let token = Hex.encode(try SecureRandom.bytes(32))
        do {
            try ProtectedFile.replace(
                path + "/" + fileName, contents: Array((SHA256.hash(Array(token.utf8)).hex + "\n").utf8))
        } catch { throw VoteError(error) }
        return token
    }

    /// Admits a request whose `Authorization: Bearer` token hashes to the stored hash: 401 without one,
    /// 403 with a wrong one. The hashes are compared in constant time; the token is never logged.
    static func authorize(_ request: Request, ledger path: String) throws {
        guard let header = request.headers[.authorization], header.lowercased().hasPrefix("bearer ") else {
            throw APIError(
                .unauthorized, "unauthorized", "this route needs the admin token (Authorization: Bearer …)",
                headers: [.wwwAuthenticate: "Bearer"])
        }
        let given = SHA256.hash(Array(header.dropFirst(7).trimmingCharacters(in: .whitespaces).utf8)).bytes
        guard let stored = ProtectedFile.read(path + "/" + fileName),
            let expected = Hex.decode(
                String(decoding: stored, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)),
            expected.count == given.count
        else {
            throw APIError(
                .forbidden, "forbidden",
                "the admin token is wrong (no token is configured; run vote admin-token rotate)")
        }
        var difference: UInt8 = 0
        for (a, b) in zip(given, expected) { difference |= a ^ b }
        guard difference == 0 else { throw APIError(.forbidden, "forbidden", "the admin token is wrong") }
    }
}
