internal import COpenSSL

/// Owns one OpenSSL key object and frees it with the Swift value that holds it.
final class PKey: @unchecked Sendable {
    // OpenSSL documents EVP_PKEY as safe for concurrent read-only use (signing, verifying).
    let pointer: OpaquePointer

    init(_ pointer: OpaquePointer) { self.pointer = pointer }

    deinit { EVP_PKEY_free(pointer) }
}

/// An Ed25519 public key (RFC 8032): verifies the ledger authority's signatures.
public struct Ed25519PublicKey: Sendable, Hashable {
    /// The 32-byte encoding of the key.
    public let rawRepresentation: [UInt8]
    private let key: PKey

    /// Imports a 32-byte public key.
    public init(rawRepresentation raw: [UInt8]) throws(CryptoError) {
        guard raw.count == 32 else {
            throw CryptoError(.invalidKey, "Ed25519 public key must be 32 bytes, got \(raw.count)")
        }
        let pointer = raw.withUnsafeBufferPointer {
            EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, $0.baseAddress, 32)
        }
        guard let pointer else { throw CryptoError.openSSL(.invalidKey, "importing the Ed25519 public key") }
        self.rawRepresentation = raw
        self.key = PKey(pointer)
    }

    /// Imports a PEM `PUBLIC KEY` (SubjectPublicKeyInfo) document.
    public init(pem: String) throws(CryptoError) {
        let pointer = try withMemoryBIO(pem) { bio in PEM_read_bio_PUBKEY(bio, nil, nil, nil) }
        guard let pointer else { throw CryptoError.openSSL(.invalidKey, "reading the PEM public key") }
        let owner = PKey(pointer)
        guard vl_pkey_is_ed25519(pointer) == 1 else {
            throw CryptoError(.invalidKey, "the PEM public key is not an Ed25519 key")
        }
        try self.init(rawRepresentation: rawKey(owner.pointer, isPrivate: false))
    }

    /// The key as a PEM `PUBLIC KEY` document.
    public var pem: String {
        get throws(CryptoError) {
            try writeToMemoryBIO("writing the PEM public key") { bio in PEM_write_bio_PUBKEY(bio, key.pointer) }
        }
    }

    /// Whether `signature` is this key's valid signature of `message`.
    public func isValidSignature(_ signature: some Sequence<UInt8>, for message: some Sequence<UInt8>) -> Bool {
        let signature = Array(signature)
        let message = Array(message)
        guard signature.count == 64, let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, nil, nil, key.pointer) == 1 else {
            ERR_clear_error()
            return false
        }
        let result = signature.withUnsafeBufferPointer { sig in
            message.withUnsafeBufferPointer { msg in
                EVP_DigestVerify(context, sig.baseAddress, 64, msg.baseAddress, msg.count)
            }
        }
        if result != 1 { ERR_clear_error() }
        return result == 1
    }

    public static func == (lhs: Ed25519PublicKey, rhs: Ed25519PublicKey) -> Bool {
        lhs.rawRepresentation == rhs.rawRepresentation
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(rawRepresentation) }
}

/// An Ed25519 private key: the ledger authority signs every block header with it.
public struct Ed25519PrivateKey: Sendable {
    private let key: PKey
    /// The matching public key.
    public let publicKey: Ed25519PublicKey

    /// A new random key.
    public init() throws(CryptoError) {
        try self.init(seed: SecureRandom.bytes(32))
    }

    /// Imports the 32-byte private key (the RFC 8032 seed).
    public init(seed: [UInt8]) throws(CryptoError) {
        guard seed.count == 32 else {
            throw CryptoError(.invalidKey, "Ed25519 private key must be 32 bytes, got \(seed.count)")
        }
        let pointer = seed.withUnsafeBufferPointer {
            EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nil, $0.baseAddress, 32)
        }
        guard let pointer else { throw CryptoError.openSSL(.invalidKey, "importing the Ed25519 private key") }
        try self.init(owning: PKey(pointer))
    }

    private init(owning key: PKey) throws(CryptoError) {
        self.key = key
        self.publicKey = try Ed25519PublicKey(rawRepresentation: rawKey(key.pointer, isPrivate: false))
    }

    /// Imports a PEM `PRIVATE KEY` or `ENCRYPTED PRIVATE KEY` (PKCS #8) document. An encrypted key needs
    /// its passphrase; a missing or wrong one is reported as such, never prompted for.
    public init(pem: String, passphrase: [UInt8]? = nil) throws(CryptoError) {
        let encrypted = pem.contains("BEGIN ENCRYPTED PRIVATE KEY")
        if encrypted && passphrase == nil {
            throw CryptoError(.passphraseRequired, "the private key is encrypted and needs its passphrase")
        }
        if let passphrase { try checkPassphrase(passphrase) }
        var secret = passphrase.map { $0 + [0] } ?? [0]
        defer { for index in secret.indices { secret[index] = 0 } }
        let pointer = try withMemoryBIO(pem) { bio in
            secret.withUnsafeBufferPointer { secretBytes in
                PEM_read_bio_PrivateKey(
                    bio, nil,
                    { buffer, size, _, user in
                        // Copies the passphrase OpenSSL asked for; never prompts on a terminal.
                        guard let buffer, let user else { return 0 }
                        let secret = user.assumingMemoryBound(to: CChar.self)
                        let length = Int32(strlen(secret))
                        guard length <= size else { return 0 }
                        memcpy(buffer, secret, Int(length))
                        return length
                    },
                    UnsafeMutableRawPointer(mutating: secretBytes.baseAddress))
            }
        }
        guard let pointer else {
            if encrypted {
                ERR_clear_error()
                throw CryptoError(.wrongPassphrase, "the passphrase does not decrypt the private key")
            }
            throw CryptoError.openSSL(.invalidKey, "reading the PEM private key")
        }
        let owner = PKey(pointer)
        guard vl_pkey_is_ed25519(pointer) == 1 else {
            throw CryptoError(.invalidKey, "the PEM private key is not an Ed25519 key")
        }
        try self.init(owning: owner)
    }

    /// The 32-byte private key (seed). Handle with care: whoever holds it can sign blocks.
    public var seed: [UInt8] {
        get throws(CryptoError) { try rawKey(key.pointer, isPrivate: true) }
    }

    /// The key as PKCS #8 PEM; encrypted when a passphrase is given, with PBES2: scrypt (N = 2^14, r = 8,
    /// p = 5, a random 16-byte salt) and AES-256-CBC. Keys written earlier with PBKDF2 still read.
    public func pem(passphrase: [UInt8]? = nil) throws(CryptoError) -> String {
        try pem(passphrase: passphrase, cost: .standard)
    }

    /// The work factor of the scrypt that derives an encrypted key's AES key from its passphrase.
    struct ScryptCost {
        var n: UInt64
        var r: UInt64
        var p: UInt64

        /// OWASP's minimum for scrypt at 16 MiB of memory (N = 2^14, r = 8, p = 5), one of its settings
        /// equivalent to N = 2^17, p = 1, which OpenSSL would refuse to decrypt: it caps the memory of a
        /// PKCS #8 scrypt at 32 MiB.
        static let standard = ScryptCost(n: 1 << 14, r: 8, p: 5)
    }

    /// `pem(passphrase:)` at a chosen scrypt cost: not public, so every key written outside this module
    /// (the CLI's included) gets the standard cost; tests of the PEM code use a cheap one.
    func pem(passphrase: [UInt8]?, cost: ScryptCost) throws(CryptoError) -> String {
        let operation = "writing the PEM private key"
        guard let passphrase else {
            return try writeToMemoryBIO(operation) { bio in
                PEM_write_bio_PKCS8PrivateKey(bio, key.pointer, nil, nil, 0, nil, nil)
            }
        }
        try checkPassphrase(passphrase)
        guard let info = EVP_PKEY2PKCS8(key.pointer) else { throw CryptoError.openSSL(.operationFailed, operation) }
        defer { PKCS8_PRIV_KEY_INFO_free(info) }
        // A 16-byte random salt (OpenSSL 3.0 defaults to 8); a random IV.
        let salt = try SecureRandom.bytes(16)
        let made = salt.withUnsafeBufferPointer {
            PKCS5_pbe2_set_scrypt(EVP_aes_256_cbc(), $0.baseAddress, Int32($0.count), nil, cost.n, cost.r, cost.p)
        }
        guard let algorithm = made else { throw CryptoError.openSSL(.operationFailed, operation) }
        var secret = passphrase.map { CChar(bitPattern: $0) }
        defer { for index in secret.indices { secret[index] = 0 } }
        let sealed = secret.withUnsafeBufferPointer { PKCS8_set0_pbe($0.baseAddress, Int32($0.count), info, algorithm) }
        guard let sealed else {
            X509_ALGOR_free(algorithm)  // owned by `sealed` only once that exists
            throw CryptoError.openSSL(.operationFailed, operation)
        }
        defer { X509_SIG_free(sealed) }
        return try writeToMemoryBIO(operation) { bio in PEM_write_bio_PKCS8(bio, sealed) }
    }

    /// The 64-byte Ed25519 signature of `message`.
    public func signature(for message: some Sequence<UInt8>) throws(CryptoError) -> [UInt8] {
        let message = Array(message)
        guard let context = EVP_MD_CTX_new() else { throw CryptoError.openSSL(.operationFailed, "signing") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, nil, nil, key.pointer) == 1 else {
            throw CryptoError.openSSL(.operationFailed, "signing")
        }
        var signature = [UInt8](repeating: 0, count: 64)
        var length = 64
        let ok = signature.withUnsafeMutableBufferPointer { sig in
            message.withUnsafeBufferPointer { msg in
                EVP_DigestSign(context, sig.baseAddress, &length, msg.baseAddress, msg.count)
            }
        }
        guard ok == 1, length == 64 else { throw CryptoError.openSSL(.operationFailed, "signing") }
        return signature
    }
}

// MARK: - OpenSSL plumbing

private func rawKey(_ key: OpaquePointer, isPrivate: Bool) throws(CryptoError) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: 32)
    var length = 32
    let ok = bytes.withUnsafeMutableBufferPointer {
        isPrivate
            ? EVP_PKEY_get_raw_private_key(key, $0.baseAddress, &length)
            : EVP_PKEY_get_raw_public_key(key, $0.baseAddress, &length)
    }
    guard ok == 1, length == 32 else { throw CryptoError.openSSL(.invalidKey, "exporting the Ed25519 key") }
    return bytes
}

/// OpenSSL hands passphrases to its callback as C strings in a 1,024-byte buffer: refuse what it would
/// silently cut, so a key written with a passphrase can always be read back with it.
private func checkPassphrase(_ passphrase: [UInt8]) throws(CryptoError) {
    guard !passphrase.isEmpty, passphrase.count <= 1024, !passphrase.contains(0) else {
        throw CryptoError(.invalidPassphrase, "a passphrase must be 1-1024 bytes with no NUL byte")
    }
}

/// Runs `body` with a read-only memory BIO over `text`. The BIO borrows the bytes without copying them,
/// so it must not outlive the buffer: everything happens inside one `withUnsafeBytes`.
private func withMemoryBIO<R>(_ text: String, _ body: (OpaquePointer) -> R) throws(CryptoError) -> R {
    let bytes = Array(text.utf8)
    let result: R? = bytes.withUnsafeBytes { raw in
        guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
        defer { BIO_free(bio) }
        return body(bio)
    }
    guard let result else { throw CryptoError.openSSL(.operationFailed, "allocating a memory buffer") }
    return result
}

/// Runs a PEM writer against a fresh memory BIO and returns what it wrote.
private func writeToMemoryBIO(_ operation: String, _ write: (OpaquePointer) -> Int32) throws(CryptoError) -> String {
    guard let bio = BIO_new(BIO_s_mem()) else { throw CryptoError.openSSL(.operationFailed, operation) }
    defer { BIO_free(bio) }
    guard write(bio) == 1 else { throw CryptoError.openSSL(.operationFailed, operation) }
    var data: UnsafeMutablePointer<CChar>?
    let length = vl_bio_mem_data(bio, &data)
    guard let data, length > 0 else { throw CryptoError.openSSL(.operationFailed, operation) }
    return String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
}
