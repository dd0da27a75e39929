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

/// HMAC-SHA256 (RFC 2104), used to turn a voter identity into a keyed tag. Built on the SHA-256 above:
/// OpenSSL 3's one-shot `HMAC()` looks the algorithm up by name on every call, which was a quarter of
/// bulk authorisation's time.
public enum HMACSHA256 {
    /// The 32-byte authentication code of `message` under `key`.
    public static func authenticationCode(for message: [UInt8], key: [UInt8]) -> Digest {
        authenticationCode(key: key) { $0.update(message) }
    }

    /// The 32-byte authentication code, under `key`, of the message `feed` adds in parts (a mapped file, say,
    /// without a copy of it).
    public static func authenticationCode(key: [UInt8], feeding feed: (inout SHA256Hasher) -> Void) -> Digest {
        // A key longer than the 64-byte block is hashed first; then it is zero-padded to the block.
        var block = [UInt8](repeating: 0, count: 64)
        if key.count > 64 {
            SHA256.hash(key).withUnsafeBytes { block.replaceSubrange(0..<32, with: $0) }
        } else {
            block.replaceSubrange(0..<key.count, with: key)
        }
        var inner = SHA256Hasher()
        inner.update(block.map { $0 ^ 0x36 })
        feed(&inner)
        var outer = SHA256Hasher()
        outer.update(block.map { $0 ^ 0x5c })
        outer.update(inner.finalize())
        for index in block.indices { block[index] = 0 }  // key bytes are not left behind
        return outer.finalize()
    }
}

public enum SecureRandom {
    /// `count` random bytes.
    public static func bytes(_ count: Int) throws(CryptoError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        let ok = out.withUnsafeMutableBytes {
            RAND_bytes($0.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(count))
        }
        guard ok == 1 else { throw CryptoError.openSSL(.operationFailed, "random bytes") }
        return out
    }
}
