public import LedgerCrypto

/// A witness that cosigns a log's checkpoints (c2sp.org/tlog-cosignature, Ed25519 type 0x04): its name and
/// public key. A cosignature is one more signature line on the checkpoint's signed note, "— <name>
/// base64(key ID || timestamp || signature)", stating that as of the timestamp this is the largest tree of the
/// log the witness has seen consistent with everything it cosigned before.
public struct Cosigner: Equatable, Sendable {
    /// The signature type byte of Ed25519 cosignatures, in the key ID and the verifier key.
    public static let signatureType: UInt8 = 0x04

    /// The witness's name (a schema-less URL, by convention), to which its key ID commits.
    public let name: String
    public let key: Ed25519PublicKey

    public init(name: String, key: Ed25519PublicKey) {
        self.name = name
        self.key = key
    }

    /// SHA-256(name || 0x0A || 0x04 || public key)[:4].
    public var keyID: [UInt8] {
        Array(SHA256.hash(Array(name.utf8) + [0x0A, Self.signatureType] + key.rawRepresentation).bytes.prefix(4))
    }

    /// The verifier key text "<name>+<hex key ID>+base64(0x04 || public key)".
    public var verifierKey: String {
        "\(name)+\(Hex.encode(keyID))+\(Base64.encode([Self.signatureType] + key.rawRepresentation))"
    }

    /// Parses a verifier key of an Ed25519 cosigner; nil if it is malformed, of another type, or its key ID
    /// does not match its name and key.
    public init?(verifierKey text: String) {
        guard let (name, id, raw) = SignedNote.verifierKeyParts(text), raw.count == 33, raw[0] == Self.signatureType,
            let key = try? Ed25519PublicKey(rawRepresentation: Array(raw.dropFirst()))
        else { return nil }
        self.init(name: name, key: key)
        guard keyID == id else { return nil }
    }

    /// The timestamp of this witness's cosignature on `note`, if one is there and valid. Lines of other
    /// names or key IDs are ignored; if several lines carry this key, all must verify and the latest time is
    /// taken.
    public func timestamp(of note: SignedNote) -> UInt64? {
        let id = keyID
        let mine = note.signatures.filter { $0.name == name && Array($0.payload.prefix(4)) == id }
        var latest: UInt64?
        for line in mine {
            guard line.payload.count == 4 + 8 + 64 else { return nil }
            let time = line.payload[4..<12].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            // A time of 0 or of 2^63 - 1 and beyond names no moment a witness signed at; Go's verifier refuses
            // them too.
            guard time > 0, time < UInt64(Int64.max),
                key.isValidSignature(line.payload.suffix(64), for: Cosignature.message(note.text, timestamp: time))
            else { return nil }
            latest = max(latest ?? 0, time)
        }
        return latest
    }
}

/// Making cosignatures (the witness's side).
public enum Cosignature {
    /// The signed message: "cosignature/v1\n", "time T\n", then the note's text (the checkpoint's lines,
    /// including its final newline, without signature lines).
    public static func message(_ noteText: String, timestamp: UInt64) -> [UInt8] {
        Array("cosignature/v1\ntime \(timestamp)\n\(noteText)".utf8)
    }

    /// The signature line's payload for `noteText`, by `key` under `name`, at `timestamp` (POSIX seconds,
    /// not zero): key ID || u64 big-endian timestamp || Ed25519 signature.
    public static func sign(
        _ noteText: String, name: String, key: any AuthoritySigner, timestamp: UInt64
    ) throws -> [UInt8] {
        precondition(timestamp > 0 && timestamp <= UInt64(Int64.max), "a cosignature's time is after 1970")
        let cosigner = Cosigner(name: name, key: key.publicKey)
        let time = (0..<8).reversed().map { UInt8(truncatingIfNeeded: timestamp >> (UInt64($0) * 8)) }
        return cosigner.keyID + time + (try key.sign(message(noteText, timestamp: timestamp)))
    }
}
