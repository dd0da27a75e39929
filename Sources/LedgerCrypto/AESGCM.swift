internal import COpenSSL

/// AES-256-GCM (NIST SP 800-38D) through OpenSSL: how an officer's own records (the contact book, the mail
/// log) are kept encrypted at rest in the key directory. A sealed box is a random 96-bit nonce, the ciphertext
/// and the 128-bit tag.
public enum AESGCM {
    /// Bytes a sealed box adds to what it seals: the nonce and the tag.
    public static let overhead = nonceSize + tagSize
    static let nonceSize = 12
    static let tagSize = 16

    /// `plaintext` sealed under the 32-byte `key`, bound to `context` (authenticated, not stored).
    public static func seal(_ plaintext: [UInt8], key: [UInt8], context: [UInt8]) throws(CryptoError) -> [UInt8] {
        try seal(plaintext, key: key, context: context, nonce: try SecureRandom.bytes(nonceSize))
    }

    /// `seal` with the nonce given (the published test vectors'); never reuse a nonce under one key.
    static func seal(
        _ plaintext: [UInt8], key: [UInt8], context: [UInt8], nonce: [UInt8]
    ) throws(CryptoError)
        -> [UInt8]
    {
        precondition(key.count == 32 && nonce.count == nonceSize, "AES-256-GCM takes a 32-byte key, a 12-byte nonce")
        guard let cipher = EVP_CIPHER_CTX_new() else { throw CryptoError.openSSL(.operationFailed, "AES-GCM") }
        defer { EVP_CIPHER_CTX_free(cipher) }
        var out = [UInt8](repeating: 0, count: plaintext.count + 16)
        var length: Int32 = 0
        var total = 0
        var tag = [UInt8](repeating: 0, count: tagSize)
        let ok =
            EVP_EncryptInit_ex(cipher, EVP_aes_256_gcm(), nil, key, nonce) == 1
            && (context.isEmpty || EVP_EncryptUpdate(cipher, nil, &length, context, Int32(context.count)) == 1)
            && out.withUnsafeMutableBufferPointer { buffer in
                guard EVP_EncryptUpdate(cipher, buffer.baseAddress, &length, plaintext, Int32(plaintext.count)) == 1
                else { return false }
                total = Int(length)
                guard EVP_EncryptFinal_ex(cipher, buffer.baseAddress! + total, &length) == 1 else { return false }
                total += Int(length)
                return true
            }
            && EVP_CIPHER_CTX_ctrl(cipher, EVP_CTRL_GCM_GET_TAG, Int32(tagSize), &tag) == 1
        guard ok else { throw CryptoError.openSSL(.operationFailed, "AES-GCM sealing") }
        return nonce + out[..<total] + tag
    }

    /// What `seal` sealed in `box` under `key` and `context`; nil if the box was not sealed so (another key or
    /// context, damaged, cut short).
    public static func open(_ box: [UInt8], key: [UInt8], context: [UInt8]) -> [UInt8]? {
        precondition(key.count == 32, "AES-256-GCM takes a 32-byte key")
        guard box.count >= overhead, let cipher = EVP_CIPHER_CTX_new() else { return nil }
        defer { EVP_CIPHER_CTX_free(cipher) }
        let nonce = Array(box[..<nonceSize])
        let ciphertext = Array(box[nonceSize..<(box.count - tagSize)])
        var tag = Array(box.suffix(tagSize))
        var out = [UInt8](repeating: 0, count: ciphertext.count + 16)
        var length: Int32 = 0
        var total = 0
        let ok =
            EVP_DecryptInit_ex(cipher, EVP_aes_256_gcm(), nil, key, nonce) == 1
            && (context.isEmpty || EVP_DecryptUpdate(cipher, nil, &length, context, Int32(context.count)) == 1)
            && out.withUnsafeMutableBufferPointer { buffer in
                guard EVP_DecryptUpdate(cipher, buffer.baseAddress, &length, ciphertext, Int32(ciphertext.count)) == 1
                else { return false }
                total = Int(length)
                guard EVP_CIPHER_CTX_ctrl(cipher, EVP_CTRL_GCM_SET_TAG, Int32(tagSize), &tag) == 1,
                    EVP_DecryptFinal_ex(cipher, buffer.baseAddress! + total, &length) == 1
                else { return false }
                total += Int(length)
                return true
            }
        return ok ? Array(out[..<total]) : nil
    }
}
