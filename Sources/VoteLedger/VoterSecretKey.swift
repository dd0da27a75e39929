public import Election
public import Ledger
public import LedgerCrypto

/// The voter secret of a ledger: the key of the HMAC that turns a voter's identity into the voter tag the
/// ledger stores (no identity is ever stored in the clear). The default is the `voter.secret` file in the
/// ledger's key directory, beside the authority key (`FileVoterSecret`); a server or database deployment can
/// keep the secret elsewhere and compute the same two HMACs behind this protocol.
public protocol VoterSecretKey: Sendable {
    /// The voter tag of `identity`: HMAC-SHA256 of the normalised identity (`VoterIdentity.tag`). Throws the
    /// violation of an identity that is not an E.164 number or a member id.
    func tag(_ identity: String) throws(Violation) -> Digest
    /// The commitment that binds the secret to the ledger `ledgerID` (`VoterSecret.commitment`): a writer
    /// refuses a secret whose commitment is not the one block 1 records.
    func commitment(ledgerID: LedgerID) -> Digest
    /// The key that seals the writer's derived state of ledger `ledgerID` (`DerivedStateKey`): derived from
    /// the secret, so only a holder of the key directory can make a snapshot or voter index the service uses.
    func derivedStateKey(ledgerID: LedgerID) -> DerivedStateKey
    /// The AES-256 key of the officer's own records of ledger `ledgerID` kept in the key directory (the contact
    /// book, the mail log): derived from the secret, so they are protected at rest as the secret is.
    func recordsKey(ledgerID: LedgerID) -> [UInt8]
}

/// The voter secret held in this process: 32 bytes, read from `voter.secret` in a key directory by the file
/// driver (`FileDriver`), or new.
public struct FileVoterSecret: VoterSecretKey {
    /// The secret's file name in a key directory.
    public static let fileName = "voter.secret"

    private let secret: [UInt8]

    /// A new random secret (for a new ledger).
    package static func generate() throws -> FileVoterSecret { FileVoterSecret(secret: try SecureRandom.bytes(32)) }

    /// The secret `secret` (exactly 32 bytes) read from `file`, named in the error if it is not.
    package init(_ secret: [UInt8], from file: String) throws(VoteError) {
        guard secret.count == 32 else {
            throw VoteError(.refused, "voter secret \(file) is damaged: it must hold exactly 32 bytes")
        }
        self.init(secret: secret)
    }

    private init(secret: [UInt8]) { self.secret = secret }

    /// The bytes to write into a new ledger's `voter.secret`.
    package var bytes: [UInt8] { secret }

    public func tag(_ identity: String) throws(Violation) -> Digest { try VoterIdentity.tag(identity, secret: secret) }

    public func commitment(ledgerID: LedgerID) -> Digest { VoterSecret.commitment(secret, ledgerID: ledgerID) }

    public func derivedStateKey(ledgerID: LedgerID) -> DerivedStateKey {
        DerivedStateKey(secret: secret, ledgerID: ledgerID)
    }

    public func recordsKey(ledgerID: LedgerID) -> [UInt8] {
        HMACSHA256.authenticationCode(for: Array("voteledger officer records v1".utf8) + ledgerID.bytes, key: secret)
            .bytes
    }
}
