public import BlindRSA
import Election
import Foundation
import Ledger

/// The private halves of a ledger's ballot keys (anonymous places, RFC 9474 blind signing): each in its key
/// store as `ballot-<16 hex>.key` (PKCS #1 DER; in a key directory, a file of mode 0600; `BallotKey.fileName`),
/// found from the place's public key, never in the ledger's store. A ledger in memory keeps them in memory for
/// as long as it runs.
public final class BallotKeys: @unchecked Sendable {
    /// Where the keys are kept; `nil` for a ledger in memory.
    let keys: (any KeyStore)?
    private let lock = NSLock()
    /// Keys generated or read so far, by their DER SubjectPublicKeyInfo (a ledger in memory has only these).
    private var loaded: [[UInt8]: BlindRSAPrivateKey] = [:]
    /// How many blind signatures were asked of the keys since the ledger was opened: each is an RSA private-key
    /// operation, what an issuance costs the server.
    private var signed = 0
    /// The blind signatures of recorded issuances that were asked for again, by the issuance's roll key
    /// (`VoterRoll.Key.issuance`): a further repeat is answered from here, so a voter's code cannot make the
    /// server sign without bound. Only repeats are kept (a few codes), not every issuance (the whole roll).
    private var repeats: [VoterRoll.Key: [UInt8]] = [:]

    init(keys: (any KeyStore)?) { self.keys = keys }

    /// Generates a new ballot key (3072-bit modulus, e = 65537), saves its private half (synced, 0600) and
    /// returns its public half as the DER SubjectPublicKeyInfo a place-created event records.
    func generate() throws -> [UInt8] {
        let key: BlindRSAPrivateKey
        do { key = try BlindRSAPrivateKey() } catch { throw VoteError(.io, error.message) }
        let der = key.publicKey.derRepresentation
        if let keys {
            try keys.create()
            try keys.replace(BallotKey.fileName(der: der), contents: key.derRepresentation)
        }
        lock.withLock { loaded[der] = key }
        return der
    }

    /// Removes the key with public half `der` (its place was refused, so nothing will ever use it).
    func remove(_ der: [UInt8]) {
        _ = lock.withLock { loaded.removeValue(forKey: der) }
        keys?.remove(BallotKey.fileName(der: der))
    }

    /// The private key whose public half is `der`, read from the key store the first time.
    public func privateKey(for der: [UInt8]) throws -> BlindRSAPrivateKey {
        if let key = lock.withLock({ loaded[der] }) { return key }
        let name = BallotKey.fileName(der: der)
        guard let keys else { throw VoteError(.io, "the ballot key \(name) is not held by this ledger") }
        let path = keys.location(of: name)
        guard let bytes = try keys.readPrivate(name, what: name, limit: 1 << 16) else {
            throw VoteError(.io, "the ballot key \(path) is missing: credentials of its place cannot be issued")
        }
        guard let key = try? BlindRSAPrivateKey(derRepresentation: bytes), key.publicKey.derRepresentation == der else {
            throw VoteError(.io, "\(path) is not the private half of its place's ballot key")
        }
        lock.withLock { loaded[der] = key }
        return key
    }

    /// `key`'s blind signature of `blindedMessage` (RFC 9474 BlindSign), counted in `signatureCount`.
    func blindSign(_ blindedMessage: [UInt8], with key: BlindRSAPrivateKey) throws(BlindRSAError) -> [UInt8] {
        lock.withLock { signed += 1 }
        return try key.blindSign(blindedMessage)
    }

    /// How many blind signatures were asked of the keys since the ledger was opened.
    var signatureCount: Int { lock.withLock { signed } }

    /// The blind signature remembered for a repeat of the recorded issuance `issuance`, if it was repeated before.
    func repeatedAnswer(_ issuance: VoterRoll.Key) -> [UInt8]? { lock.withLock { repeats[issuance] } }

    /// Remembers `blindSignature` as the answer to the recorded issuance `issuance`, asked for again. RSA blind
    /// signatures are deterministic, so the remembered bytes are what signing again would give.
    func remember(_ blindSignature: [UInt8], repeating issuance: VoterRoll.Key) {
        lock.withLock { repeats[issuance] = blindSignature }
    }
}

extension Command {
    /// This place-created command with a new ballot key from `keys`, and the key's public half (to remove it
    /// if the place is refused). Only a `.createPlace` command without a key can take one.
    func withNewBallotKey(_ keys: BallotKeys) throws -> (Command, [UInt8]) {
        guard
            case .createPlace(
                let name, let description, let registration, let voting, let maxCandidates, let resultsAfterClose, nil,
                let ballot, let revoting, let batching) =
                self
        else { throw VoteError(.usage, "only a new place can be given a ballot key") }
        let ballotKey = try keys.generate()
        return (
            .createPlace(
                name: name, description: description, registration: registration, voting: voting,
                maxCandidates: maxCandidates, resultsAfterClose: resultsAfterClose, ballotKey: ballotKey,
                ballot: ballot, revoting: revoting, batching: batching),
            ballotKey
        )
    }
}
