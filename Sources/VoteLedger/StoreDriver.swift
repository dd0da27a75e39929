import Election
public import Ledger
import LedgerCrypto

/// A store as the service opens it: where its blocks are kept, where its secrets are, where what the service
/// derives is kept. Each store's driver lives beside the store (the file driver in `FileDriver`, PostgreSQL's
/// through it, the memory driver here); the service opens any of them through `VoteLedgerService`, and the
/// command line picks one. Adding a store is one driver (README, "Adding a store").
public protocol StoreDriver: Sendable {
    /// Opens the ledger's writer (its lock held until the service closes it) and what the service needs beside
    /// it, as `configuration` says (passphrase, signer, voter secret, derived state, lock timeout, log).
    func open(_ configuration: StoreConfiguration) throws -> OpenedStore
    /// Creates a ledger named `name`, its genesis and block 1 (`NewLedger`) timed `now`, its new secrets kept
    /// first and removed again if the ledger is not made, and opens its writer.
    func create(name: String, now: Int64, _ configuration: StoreConfiguration) throws -> OpenedStore
    /// A reader of the ledger (no writer lock, no keys).
    func source() throws -> any BlockSource
}

/// What a driver hands the service (`ElectionLedger`): the appender (the writer, holding its lock), where
/// the derived state is kept, the voter secret, and the key store of the ballot keys and the officer's records
/// (nil: in memory only).
public struct OpenedStore {
    public var appender: any BlockAppender
    public var derived: any DerivedStore
    public var secret: any VoterSecretKey
    public var keys: (any KeyStore)?
    /// Where the voter secret is kept, to name it when it does not belong to the ledger (nil: given).
    public var secretLocation: String?

    public init(
        appender: any BlockAppender, derived: any DerivedStore, secret: any VoterSecretKey, keys: (any KeyStore)?,
        secretLocation: String?
    ) {
        self.appender = appender
        self.derived = derived
        self.secret = secret
        self.keys = keys
        self.secretLocation = secretLocation
    }
}

/// Where a ledger's secrets are kept, by name (a key directory's files): the private halves of the ballot
/// keys, the admin token's hash, and the officer's record files (`records`: the contact book, the mail log).
/// Never in the ledger's store, so a copy of the store hands none out.
public protocol KeyStore: Sendable {
    /// Where secret `name` is kept, for messages.
    func location(of name: String) -> String
    /// The secret `name`, nil if there is none; throws if it is there but not private to this user or
    /// unreadable (`what` names it), or larger than `limit` bytes.
    func readPrivate(_ name: String, what: String, limit: Int) throws -> [UInt8]?
    /// The secret `name`, nil if it is missing or cannot be read (for what a wrong copy cannot harm: a hash).
    func read(_ name: String) -> [UInt8]?
    /// Makes the store if it does not exist yet (a key directory: 0700).
    func create() throws
    /// Makes `contents` the secret `name` (private to this user), replacing any whole; durable on return.
    /// Refused if the store does not exist.
    func replace(_ name: String, contents: [UInt8]) throws
    /// Removes secret `name`, if there is one.
    func remove(_ name: String)
    /// The append-only file `name` of sealed records kept with the secrets (the officer's contact book and mail
    /// log); `what` names it in errors.
    func records(_ name: String, what: String) -> any RecordFile
}

/// A file of records in a key store (`KeyStore.records`): read whole, cut back and appended to in one durable
/// step, held by one run at a time. What the records are and how they are sealed is its reader's business.
public protocol RecordFile: Sendable {
    /// Where it is kept, for messages.
    var location: String { get }
    /// Its bytes, nil if there is no file yet; refused if it is not private to this user.
    func read() throws(VoteError) -> [UInt8]?
    /// Cuts it to `length` bytes and appends `bytes` (making it, private to this user, if missing): durable on
    /// return, a new file's name included.
    func write(_ bytes: [UInt8], after length: Int) throws(VoteError)
    /// Cuts it back to `length` bytes, durable on return; never makes it (a missing file is an error).
    func truncate(to length: Int) throws(VoteError)
    /// Holds it for one run until the returned closure is called (in this process and in others); refused at
    /// once, saying so, while another run holds it. `doing` says what the other run is doing.
    func lock(_ doing: String) throws(VoteError) -> @Sendable () -> Void
}

/// The names of the secrets in a key store besides the voter secret (`FileVoterSecret.fileName`), the ballot
/// keys (`BallotKey.fileName`) and the authority key.
public enum KeyStoreNames {
    /// The SHA-256 of `vote serve`'s admin token (`AdminToken`).
    public static let adminTokenHash = "admin-token.sha256"
}

/// What a new ledger starts with, the same for every store: a new identity, its authority key, its voter
/// secret, and block 1's event committing to that secret.
public struct NewLedger {
    public let name: String
    public let ledgerID: LedgerID
    public let authority: any AuthoritySigner
    public let secret: any VoterSecretKey
    /// The first block's time, and the genesis's.
    public let timestamp: Int64
    /// Block 1's events: the voter secret's commitment.
    public var firstEvents: [LedgerEvent] {
        [ElectionEvent.voterSecretCommitment(secret.commitment(ledgerID: ledgerID)).ledgerEvent]
    }

    public init(name: String, timestamp: Int64, authority: any AuthoritySigner, secret: any VoterSecretKey) throws {
        self.name = name
        self.timestamp = timestamp
        self.authority = authority
        self.secret = secret
        ledgerID = try LedgerID.random()
    }
}

/// The memory store's driver: a new ledger held in memory each time it is opened or created (nothing
/// outlives the service), signed by the configured signer or a new key, committing to the configured voter
/// secret or a new one. Its ballot keys live as long as it runs; it has no reader but its writer's.
public struct MemoryDriver: StoreDriver {
    /// The name of a ledger in memory that is opened rather than created by name.
    static let ledgerName = "ledger in memory"

    public init() {}

    public func open(_ configuration: StoreConfiguration) throws -> OpenedStore {
        try create(name: MemoryDriver.ledgerName, now: Clock.now(), configuration)
    }

    public func create(name: String, now: Int64, _ configuration: StoreConfiguration) throws -> OpenedStore {
        let first = try NewLedger(
            name: name, timestamp: now, authority: try configuration.signer ?? Ed25519PrivateKey(),
            secret: try configuration.voterSecret ?? FileVoterSecret.generate())
        let ledger = try MemoryBlockSource(
            name: first.name, authority: first.authority, ledgerID: first.ledgerID, timestamp: first.timestamp)
        let appender = try ledger.openWriter(authority: first.authority)
        try appender.append(first.firstEvents, timestamp: first.timestamp)
        return OpenedStore(
            appender: appender, derived: configuration.derived ?? MemoryDerivedStore(), secret: first.secret,
            keys: nil, secretLocation: nil)
    }

    public func source() throws -> any BlockSource {
        throw VoteError(.refused, "a ledger in memory has no reader but its writer's")
    }
}

extension StoreDriver where Self == MemoryDriver {
    /// A new ledger held in memory (`MemoryDriver`).
    public static var memory: MemoryDriver { MemoryDriver() }
}
