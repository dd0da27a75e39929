public import FileStore
public import Ledger

/// Everything needed to open a ledger's service: where the ledger is, how its authority key is unlocked or
/// who signs for it, who holds the voter secret, where derived state is kept, and how long to wait for
/// another writer. The CLI builds
/// one from its options, a server from its settings, the tests directly; `VoteLedgerService` opens it.
public struct StoreConfiguration: Sendable {
    /// Where the ledger is kept, and so which store holds it.
    public enum Store: Sendable {
        /// A ledger directory on this machine (the file store), its secrets in the key directory `keys`
        /// (nil: the default, `KeyDirectory(defaultFor:)`).
        case file(path: String, keys: String? = nil)
        /// A new ledger held in memory (the memory store), created by the factory with a new authority key
        /// and voter secret unless `signer` and `voterSecret` are given. Nothing outlives the service, so
        /// every open is a new ledger; the passphrase, lock timeout and I/O do not apply.
        case memory
        /// A ledger in a store outside the core (PostgreSQL), its secrets in the key directory `keys` of this
        /// process. Derived state is kept in memory unless `derived` is given.
        case external(any StoreOpener, keys: String)
    }

    /// Where the authority key's passphrase comes from.
    public enum Passphrase: Sendable {
        /// The key is not encrypted (or a `signer` is given).
        case none
        /// These bytes.
        case given([UInt8])
        /// Asked for only if the key turns out to be encrypted (a terminal prompt, a server's secret store).
        case ask(@Sendable () throws -> [UInt8])

        /// Runs `body` with the passphrase; with `.ask`, first without one, and again with the answer if
        /// `body` fails because the key needs a passphrase.
        public func using<T>(_ body: ([UInt8]?) throws -> T) throws -> T {
            switch self {
            case .none: return try body(nil)
            case .given(let bytes): return try body(bytes)
            case .ask(let ask):
                do { return try body(nil) } catch  where VoteError(error).reason == .passphraseRequired {
                    return try body(try ask())
                }
            }
        }
    }

    public var store: Store
    public var passphrase: Passphrase
    /// Signs blocks and heads instead of the key file (`nil`: the key file, unlocked with `passphrase`; in
    /// memory, a new key).
    public var signer: (any AuthoritySigner)?
    /// Tags voters instead of the `voter.secret` file (`nil`: the file; in memory, a new secret).
    public var voterSecret: (any VoterSecretKey)?
    /// Where the snapshot and the voter index are kept (`nil`: for a file store its ledger directory, as
    /// `FileDerivedStore(ledger:)`; in memory, a `MemoryDerivedStore` of the ledger's own).
    public var derived: (any DerivedStore)?
    /// Seconds to wait for another writer to finish before failing as busy.
    public var lockTimeout: Double
    /// The file store's I/O (tests pass a disk that fails or loses power).
    public var io: any FileIO
    /// Where the store's recovery notes go (a torn tail cut off, an index rebuilt).
    public var log: @Sendable (String) -> Void

    public init(
        _ store: Store, passphrase: Passphrase = .none, signer: (any AuthoritySigner)? = nil,
        voterSecret: (any VoterSecretKey)? = nil, derived: (any DerivedStore)? = nil, lockTimeout: Double = 10,
        io: any FileIO = PosixIO.shared, log: @escaping @Sendable (String) -> Void = standardErrorLog
    ) {
        self.store = store
        self.passphrase = passphrase
        self.signer = signer
        self.voterSecret = voterSecret
        self.derived = derived
        self.lockTimeout = lockTimeout
        self.io = io
        self.log = log
    }

}

/// The one factory of the service: opens a ledger from a `StoreConfiguration` for writing (as one
/// `ElectionLedger` for a single command, or as the `LedgerWriter` actor that many callers share), or
/// creates one. The CLI, the tests and the server all open ledgers here.
public enum VoteLedgerService {
    /// Opens the ledger for writing, holding its writer lock until the returned ledger is closed. Fails at
    /// once, naming the server, if a running `vote serve` is the ledger's writer. A `.memory` ledger is
    /// created here (named `memoryLedgerName`, its first block timed now).
    public static func openLedger(_ configuration: StoreConfiguration) throws -> ElectionLedger {
        switch configuration.store {
        case .file(let path, let keys):
            try ServeMarker.check(ledger: path)
            return try configuration.passphrase.using { passphrase in
                try ElectionLedger.open(
                    at: path, keys: keys, passphrase: passphrase, signer: configuration.signer,
                    voterSecret: configuration.voterSecret, lockTimeout: configuration.lockTimeout,
                    io: configuration.io, derived: configuration.derived, log: configuration.log)
            }
        case .memory:
            return try create(configuration, name: memoryLedgerName, now: Clock.now())
        case .external(let opener, let keys):
            return try configuration.passphrase.using { passphrase in
                try ElectionLedger.open(
                    in: opener, keys: keys, passphrase: passphrase, signer: configuration.signer,
                    voterSecret: configuration.voterSecret, derived: configuration.derived, log: configuration.log)
            }
        }
    }

    /// A reader of the configured ledger (no writer lock, no keys).
    public static func source(_ configuration: StoreConfiguration) throws -> any BlockSource {
        switch configuration.store {
        case .file(let path, _): return try FileBlockSource(path: path)
        case .external(let opener, _): return try opener.source()
        case .memory: throw VoteError(.refused, "a ledger in memory has no reader but its writer's")
        }
    }

    /// The name of a ledger in memory that is opened rather than created by name.
    static let memoryLedgerName = "ledger in memory"

    /// Opens the ledger as the writer actor that group-commits the commands of many concurrent callers.
    public static func openWriter(_ configuration: StoreConfiguration, capacity: Int = 100_000) throws -> LedgerWriter {
        LedgerWriter(try openLedger(configuration), capacity: capacity)
    }

    /// Creates a new ledger named `name` at the configured location (as `create`) and opens it as the writer
    /// actor: how the command line creates a ledger and writes its first blocks.
    public static func createWriter(
        _ configuration: StoreConfiguration, name: String, now: Int64
    ) throws
        -> LedgerWriter
    {
        LedgerWriter(try create(configuration, name: name, now: now))
    }

    /// Creates a new ledger named `name` at the configured location, with a new authority key (in a file
    /// store: encrypted with the configured passphrase, asked for if the source asks) and a new voter
    /// secret, and opens it.
    public static func create(_ configuration: StoreConfiguration, name: String, now: Int64) throws -> ElectionLedger {
        let passphrase: () throws -> [UInt8]? = {
            switch configuration.passphrase {
            case .none: nil
            case .given(let bytes): bytes
            case .ask(let ask): try ask()
            }
        }
        switch configuration.store {
        case .file(let path, let keys):
            return try ElectionLedger.create(
                at: path, keys: keys, name: name, passphrase: try passphrase(), now: now, io: configuration.io,
                derived: configuration.derived)
        case .external(let opener, let keys):
            return try ElectionLedger.create(
                in: opener, keys: keys, name: name, passphrase: try passphrase(), now: now,
                derived: configuration.derived)
        case .memory:
            return try ElectionLedger.createInMemory(
                name: name, now: now, signer: configuration.signer, voterSecret: configuration.voterSecret,
                derived: configuration.derived ?? MemoryDerivedStore(), log: configuration.log)
        }
    }
}
