public import LedgerCrypto

/// Signs for a ledger's authority: block header hashes and C2SP notes (signed heads). The default is the
/// key file beside a file ledger (`FileBlockStore.loadAuthorityKey`); a server or database deployment can hold
/// the key elsewhere (another process, a hardware module) and sign through this protocol. Whoever signs,
/// the ledger's bytes are the same: Ed25519 signatures are deterministic.
public protocol AuthoritySigner: Sendable {
    /// The public key; a writer refuses a signer whose key is not the genesis authority key.
    var publicKey: Ed25519PublicKey { get }
    /// The Ed25519 signature of `message`.
    func sign(_ message: [UInt8]) throws -> [UInt8]
}

extension AuthoritySigner {
    /// Signs a C2SP note (a signed head) under `name`.
    public func signNote(_ text: String, name: String) throws(LedgerError) -> SignedNote {
        do { return try SignedNote.sign(text, name: name, key: self) } catch {
            throw LedgerError.key("signing the head failed: \(error)")
        }
    }
}

/// A key held in this process signs for itself.
extension Ed25519PrivateKey: AuthoritySigner {
    public func sign(_ message: [UInt8]) throws -> [UInt8] { try signature(for: message) }
}
