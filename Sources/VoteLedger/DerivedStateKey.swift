import Ledger
import LedgerCrypto

/// The key that seals what a writer derives from the chain and keeps beside it (`snapshot.bin`, `voters.idx`):
/// an HMAC-SHA256 key derived from the voter secret, which is kept in the key directory and never in the ledger
/// directory or its database. Someone who can write the ledger directory but holds no key cannot make a
/// snapshot or voter index the service will use: a count shown, exported or certified comes from the chain or
/// from state sealed by the ledger's own writer (DESIGN.md invariant 11). A reader without the key ignores
/// what is sealed and replays the chain.
public struct DerivedStateKey: Sendable {
    /// The domain of the derivation, apart from the voter tag's and the public commitment's (§11.16).
    static let domain = Array("voteledger derived-state seal v1".utf8)
    /// Bytes a seal adds after what it seals.
    public static let sealSize = Digest.byteCount

    private let key: [UInt8]

    /// The key of ledger `ledgerID` under the voter secret `secret` (32 bytes).
    init(secret: [UInt8], ledgerID: LedgerID) {
        key = HMACSHA256.authenticationCode(for: DerivedStateKey.domain + ledgerID.bytes, key: secret).bytes
    }

    /// The seal (HMAC-SHA256 tag) of the message `feed` adds in parts.
    func seal(feeding feed: (inout SHA256Hasher) -> Void) -> Digest {
        HMACSHA256.authenticationCode(key: key, feeding: feed)
    }

    /// `bytes` followed by their seal.
    public func sealed(_ bytes: [UInt8]) -> [UInt8] {
        bytes + seal { $0.update(bytes) }.bytes
    }

    /// What `sealed` sealed, if `stored` ends with the seal of the bytes before it under this key; nil for
    /// anything else (forged, damaged, or sealed under another ledger's key).
    public func opened(_ stored: [UInt8]) -> [UInt8]? {
        guard stored.count >= DerivedStateKey.sealSize else { return nil }
        let body = Array(stored.dropLast(DerivedStateKey.sealSize))
        let expected = seal { $0.update(body) }.bytes
        // Constant time: a forger learns nothing from how long a wrong seal took to refuse.
        var difference: UInt8 = 0
        for (a, b) in zip(expected, stored.suffix(DerivedStateKey.sealSize)) { difference |= a ^ b }
        return difference == 0 ? body : nil
    }
}
