public import LedgerCrypto

/// Standard base64 (RFC 4648 §4) with padding, as C2SP notes and proofs use it.
public enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xff, count: 256)
        for (index, char) in alphabet.enumerated() { table[Int(char)] = UInt8(index) }
        return table
    }()

    public static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        bytes.withUnsafeBytes { append($0, to: &out) }
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends `bytes` in base64 to `out`: a response written as bytes (the server's receipts) gets its
    /// proof lines without a string per line.
    public static func append(_ bytes: UnsafeRawBufferPointer, to out: inout [UInt8]) {
        var at = out.count
        // Padding first, overwritten by every character a byte reaches.
        out.append(contentsOf: repeatElement(UInt8(ascii: "="), count: (bytes.count + 2) / 3 * 4))
        alphabet.withUnsafeBufferPointer { alphabet in
            out.withUnsafeMutableBufferPointer { out in
                var index = 0
                while index < bytes.count {
                    let a = UInt32(bytes[index])
                    let b = index + 1 < bytes.count ? UInt32(bytes[index + 1]) : 0
                    let c = index + 2 < bytes.count ? UInt32(bytes[index + 2]) : 0
                    let triple = a << 16 | b << 8 | c
                    out[at] = alphabet[Int(triple >> 18 & 63)]
                    out[at + 1] = alphabet[Int(triple >> 12 & 63)]
                    if index + 1 < bytes.count { out[at + 2] = alphabet[Int(triple >> 6 & 63)] }
                    if index + 2 < bytes.count { out[at + 3] = alphabet[Int(triple & 63)] }
                    index += 3
                    at += 4
                }
            }
        }
    }

    /// Decodes canonical padded base64; `nil` for anything else (wrong length, bad characters, non-zero
    /// padding bits), so one value has exactly one text form.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 4 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(chars.count / 4 * 3)
        var index = 0
        while index < chars.count {
            let last = index + 4 == chars.count
            let pad =
                last ? (chars[index + 3] == UInt8(ascii: "=") ? (chars[index + 2] == UInt8(ascii: "=") ? 2 : 1) : 0) : 0
            var triple: UInt32 = 0
            for offset in 0..<4 {
                let char = chars[index + offset]
                let value: UInt8
                if offset >= 4 - pad {
                    value = 0
                } else {
                    value = values[Int(char)]
                    guard value != 0xff else { return nil }
                }
                triple = triple << 6 | UInt32(value)
            }
            if pad == 2 && triple & 0xffff != 0 { return nil }
            if pad == 1 && triple & 0xff != 0 { return nil }
            out.append(UInt8(triple >> 16 & 0xff))
            if pad < 2 { out.append(UInt8(triple >> 8 & 0xff)) }
            if pad < 1 { out.append(UInt8(triple & 0xff)) }
            index += 4
        }
        return out
    }
}

/// A C2SP signed note (c2sp.org/signed-note) with Ed25519 signatures (type 0x01): a text ending in a
/// newline, a blank line, and lines "— <key name> base64(key ID || signature)".
public struct SignedNote: Equatable, Sendable {
    /// The signed text, including its final newline.
    public var text: String
    /// (key name, base64 payload) of every signature line, in order.
    public var signatures: [(name: String, payload: [UInt8])]

    public static func == (lhs: SignedNote, rhs: SignedNote) -> Bool {
        lhs.text == rhs.text && lhs.signatures.map(\.name) == rhs.signatures.map(\.name)
            && lhs.signatures.map(\.payload) == rhs.signatures.map(\.payload)
    }

    /// The key ID of an Ed25519 key under `name`: SHA-256(name || 0x0A || 0x01 || public key)[:4].
    public static func keyID(name: String, key: Ed25519PublicKey) -> [UInt8] {
        Array(SHA256.hash(Array(name.utf8) + [0x0A, 0x01] + key.rawRepresentation).bytes.prefix(4))
    }

    /// The verifier key text "<name>+<hex key ID>+base64(0x01 || public key)".
    public static func verifierKey(name: String, key: Ed25519PublicKey) -> String {
        "\(name)+\(Hex.encode(keyID(name: name, key: key)))+\(Base64.encode([0x01] + key.rawRepresentation))"
    }

    /// The name, key ID and key bytes (signature type first) of a verifier key text
    /// "<name>+<8 lowercase hex digits>+<base64>"; nil if it breaks that shape. The base64 may itself hold "+",
    /// so only the first two separate the fields; a key name is not empty and holds no white space or "+".
    public static func verifierKeyParts(_ text: String) -> (name: String, id: [UInt8], key: [UInt8])? {
        let parts = text.split(separator: "+", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[0].contains(where: { $0.isWhitespace }),
            parts[1].count == 8, parts[1].allSatisfy({ $0.isHexDigit && !$0.isUppercase }),
            let id = Hex.decode(String(parts[1])), let key = Base64.decode(parts[2]), !key.isEmpty
        else { return nil }
        return (String(parts[0]), id, key)
    }

    /// The name and key of an Ed25519 note verifier key (type 0x01, as a log signs with it); nil if it is
    /// malformed, of another type, or its key ID does not match its name and key.
    public static func publicKey(verifierKey text: String) -> (name: String, key: Ed25519PublicKey)? {
        guard let (name, id, raw) = verifierKeyParts(text), raw.count == 33, raw[0] == 0x01,
            let key = try? Ed25519PublicKey(rawRepresentation: Array(raw.dropFirst())),
            keyID(name: name, key: key) == id
        else { return nil }
        return (name, key)
    }

    /// Signs `text` (which must end in a newline) with `key` under `name`.
    public static func sign(_ text: String, name: String, key: any AuthoritySigner) throws -> SignedNote {
        precondition(text.hasSuffix("\n"), "note text ends in a newline")
        let signature = try key.sign(Array(text.utf8))
        return SignedNote(text: text, signatures: [(name, keyID(name: name, key: key.publicKey) + signature)])
    }

    /// The note as text.
    public var serialized: String {
        text + "\n" + signatures.map { "\u{2014} \($0.name) \(Base64.encode($0.payload))\n" }.joined()
    }

    /// Parses a note; `nil` if it breaks the format (control characters, no blank line, bad signature lines).
    public init?(parsing note: String) {
        guard note.hasSuffix("\n"), !note.unicodeScalars.contains(where: { $0.value < 0x20 && $0 != "\n" }) else {
            return nil
        }
        guard let split = note.range(of: "\n\n", options: .backwards) else { return nil }
        text = String(note[..<split.lowerBound]) + "\n"
        signatures = []
        let lines = note[split.upperBound...].split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        guard !lines.isEmpty else { return nil }
        for line in lines {
            let parts = line.split(separator: " ", omittingEmptySubsequences: false)
            // A key name is not empty and holds no "+" and no space of any kind (c2sp.org/signed-note).
            guard parts.count == 3, parts[0] == "\u{2014}", !parts[1].isEmpty, !parts[1].contains("+"),
                !parts[1].unicodeScalars.contains(where: { $0.properties.isWhitespace }),
                let payload = Base64.decode(parts[2]), payload.count > 4
            else { return nil }
            signatures.append((String(parts[1]), payload))
        }
    }

    private init(text: String, signatures: [(name: String, payload: [UInt8])]) {
        self.text = text
        self.signatures = signatures
    }

    /// Whether a signature by `key` under `name` is present and valid. Signatures by other keys are
    /// ignored, as the spec requires; a signature by this key that fails makes the note invalid.
    public func isSigned(by key: Ed25519PublicKey, name: String) -> Bool {
        let id = SignedNote.keyID(name: name, key: key)
        let mine = signatures.filter { $0.name == name && Array($0.payload.prefix(4)) == id }
        return !mine.isEmpty
            && mine.allSatisfy { key.isValidSignature($0.payload.dropFirst(4), for: Array(text.utf8)) }
    }
}

extension String {
    /// Finds `needle` (used for the blank line that separates a note's text from its signatures).
    func range(of needle: String, options: BackwardsOption) -> Range<String.Index>? {
        var index = endIndex
        while index > startIndex {
            index = self.index(before: index)
            if self[index...].hasPrefix(needle) { return index..<self.index(index, offsetBy: needle.count) }
        }
        return nil
    }

    enum BackwardsOption { case backwards }
}

/// A C2SP checkpoint (c2sp.org/tlog-checkpoint): origin, tree size and base64 root, then extension lines.
public struct Checkpoint: Equatable, Sendable {
    public var origin: String
    public var treeSize: UInt64
    public var root: Digest
    /// Opaque extension lines (ours: "height H" and "time T" with T in ms since the Unix epoch).
    public var extensions: [String]

    public init(origin: String, treeSize: UInt64, root: Digest, extensions: [String] = []) {
        self.origin = origin
        self.treeSize = treeSize
        self.root = root
        self.extensions = extensions
    }

    /// The note text.
    public var text: String {
        ([origin, String(treeSize), Base64.encode(root.bytes)] + extensions).map { $0 + "\n" }.joined()
    }

    /// Parses a checkpoint's note text; `nil` if malformed.
    public init?(text: String) {
        guard text.hasSuffix("\n") else { return nil }
        let lines = text.dropLast().split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard lines.count >= 3, !lines[0].isEmpty, let size = UInt64(lines[1]), String(size) == lines[1],
            let rootBytes = Base64.decode(lines[2]), let root = Digest(bytes: rootBytes),
            lines.dropFirst(3).allSatisfy({ !$0.isEmpty })
        else { return nil }
        self.init(origin: lines[0], treeSize: size, root: root, extensions: Array(lines.dropFirst(3)))
    }

    /// The value of extension line "`key` VALUE", if present.
    public func extensionValue(_ key: String) -> String? {
        extensions.first { $0.hasPrefix(key + " ") }.map { String($0.dropFirst(key.count + 1)) }
    }
}

/// A C2SP tlog-proof (c2sp.org/tlog-proof): the event bytes as `extra`, the leaf index, the RFC 9162
/// inclusion proof, and the signed checkpoint it proves inclusion under.
public struct TlogProof: Equatable, Sendable {
    public static let header = "c2sp.org/tlog-proof@v1"

    /// The event bytes (type || payload) whose leaf hash is proven.
    public var extra: [UInt8]?
    public var index: UInt64
    public var proof: [Digest]
    public var checkpoint: SignedNote

    public init(extra: [UInt8]?, index: UInt64, proof: [Digest], checkpoint: SignedNote) {
        self.extra = extra
        self.index = index
        self.proof = proof
        self.checkpoint = checkpoint
    }

    public var serialized: String {
        var lines = [TlogProof.header]
        if let extra { lines.append("extra " + Base64.encode(extra)) }
        lines.append("index \(index)")
        lines += proof.map { Base64.encode($0.bytes) }
        return lines.map { $0 + "\n" }.joined() + "\n" + checkpoint.serialized
    }

    /// Parses a proof; `nil` if malformed.
    public init?(parsing text: String) {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count > 3, lines[0] == TlogProof.header else { return nil }
        var at = 1
        if lines[at].hasPrefix("extra ") {
            guard let bytes = Base64.decode(lines[at].dropFirst(6)) else { return nil }
            extra = bytes
            at += 1
        }
        guard lines[at].hasPrefix("index "), let index = UInt64(lines[at].dropFirst(6)),
            String(index) == lines[at].dropFirst(6)
        else { return nil }
        self.index = index
        at += 1
        proof = []
        while at < lines.count, !lines[at].isEmpty {
            guard let bytes = Base64.decode(lines[at]), let digest = Digest(bytes: bytes) else { return nil }
            proof.append(digest)
            at += 1
        }
        guard at < lines.count, proof.count <= 64,
            let note = SignedNote(parsing: lines[(at + 1)...].joined(separator: "\n"))
        else { return nil }
        checkpoint = note
    }
}
