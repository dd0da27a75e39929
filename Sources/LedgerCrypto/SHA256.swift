internal import COpenSSL

/// SHA-256 (FIPS 180-4) through OpenSSL's optimised implementation.
public enum SHA256 {
    /// The digest of `bytes`.
    public static func hash<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> Digest {
        var hasher = SHA256Hasher()
        hasher.update(bytes)
        return hasher.finalize()
    }

    /// The digest of the bytes in `raw`.
    public static func hash(_ raw: UnsafeRawBufferPointer) -> Digest {
        var hasher = SHA256Hasher()
        hasher.update(raw)
        return hasher.finalize()
    }
}

/// Incremental SHA-256: feed bytes in any number of pieces, then finalize once.
public struct SHA256Hasher {
    /// The state before any input, set up once: a new hasher copies it instead of calling into OpenSSL,
    /// which matters when hashing millions of tree nodes.
    private static let initial: SHA256_CTX = {
        var context = SHA256_CTX()
        precondition(SHA256_Init(&context) == 1, "SHA-256 failed inside OpenSSL")
        return context
    }()

    private var context: SHA256_CTX

    /// A hasher with no input yet.
    public init() {
        context = SHA256Hasher.initial
    }

    /// Adds the bytes in `raw`.
    public mutating func update(_ raw: UnsafeRawBufferPointer) {
        guard let base = raw.baseAddress, raw.count > 0 else { return }
        SHA256_Update(&context, base, raw.count)
    }

    /// Adds `bytes`, without copying when they are contiguous.
    public mutating func update<Bytes: Sequence<UInt8>>(_ bytes: Bytes) {
        let done: Void? = bytes.withContiguousStorageIfAvailable { buffer in
            update(UnsafeRawBufferPointer(buffer))
        }
        if done == nil {
            let copy = Array(bytes)
            copy.withUnsafeBytes { update($0) }
        }
    }

    /// Adds one byte (a domain-separation prefix, say).
    public mutating func update(byte: UInt8) {
        withUnsafeBytes(of: byte) { update($0) }
    }

    /// Adds a digest's 32 bytes.
    public mutating func update(_ digest: Digest) {
        digest.withUnsafeBytes { update($0) }
    }

    /// The digest of everything added.
    public mutating func finalize() -> Digest {
        var out = Digest.zero
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Digest.byteCount) { buffer in
            SHA256_Final(buffer.baseAddress, &context)
            out = Digest(unsafeUninitializedReading: UnsafeRawBufferPointer(buffer))
        }
        return out
    }
}

/// HMAC-SHA256 (RFC 2104), used to turn a voter identity into a keyed tag.
public enum HMACSHA256 {
    /// The 32-byte authentication code of `message` under `key`.
    public static func authenticationCode(for message: [UInt8], key: [UInt8]) -> Digest {
        var out = Digest.zero
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Int(EVP_MAX_MD_SIZE)) { buffer in
            var length: UInt32 = 0
            // OpenSSL treats a NULL key as "reuse the previous key"; give an empty key a real address.
            let keyStorage = key.isEmpty ? [0] : key
            let result = keyStorage.withUnsafeBytes { keyBytes in
                message.withUnsafeBytes { messageBytes in
                    HMAC(
                        EVP_sha256(), keyBytes.baseAddress, Int32(key.count),
                        messageBytes.baseAddress?.assumingMemoryBound(to: UInt8.self), messageBytes.count,
                        buffer.baseAddress, &length)
                }
            }
            precondition(result != nil && length == 32, "HMAC-SHA256 failed inside OpenSSL")
            out = Digest(unsafeUninitializedReading: UnsafeRawBufferPointer(buffer))
        }
        return out
    }
}

/// Cryptographically secure random bytes from OpenSSL's DRBG.
public enum SecureRandom {
    /// `count` random bytes.
    public static func bytes(_ count: Int) throws(CryptoError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        let ok = out.withUnsafeMutableBytes { RAND_bytes($0.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(count)) }
        guard ok == 1 else { throw CryptoError.openSSL(.operationFailed, "random bytes") }
        return out
    }
}
