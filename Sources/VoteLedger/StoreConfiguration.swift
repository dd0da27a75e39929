import Foundation
public import Ledger

/// Everything needed to open a ledger's service: which store holds it (its driver), how its authority key is
/// unlocked or who signs for it, who holds the voter secret, where derived state is kept, and how long to wait
/// for another writer. The CLI builds one from its options, a server from its settings, the tests directly;
/// `VoteLedgerService` opens it.
public struct StoreConfiguration: Sendable {
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

        /// The passphrase to encrypt a new key with: the given bytes, the answer if asked for, or none.
        public func forNewKey() throws -> [UInt8]? {
            switch self {
            case .none: nil
            case .given(let bytes): bytes
            case .ask(let ask): try ask()
            }
        }
    }

    /// The store that holds the ledger: `.file(path:)` (the `FileDriver` target), `.memory`, or PostgreSQL's.
    public var store: any StoreDriver
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
    /// Where the store's recovery notes go (a torn tail cut off, an index rebuilt).
    public var log: @Sendable (String) -> Void

    public init(
        _ store: some StoreDriver, passphrase: Passphrase = .none, signer: (any AuthoritySigner)? = nil,
        voterSecret: (any VoterSecretKey)? = nil, derived: (any DerivedStore)? = nil, lockTimeout: Double = 10,
        log: @escaping @Sendable (String) -> Void = StoreConfiguration.standardError
    ) {
        self.store = store
        self.passphrase = passphrase
        self.signer = signer
        self.voterSecret = voterSecret
        self.derived = derived
        self.lockTimeout = lockTimeout
        self.log = log
    }

    /// Writes one line to standard error: where recovery notes go unless the caller says otherwise.
    @Sendable public static func standardError(_ line: String) {
        let text = line + "\n"
        _ = text.withCString { write(2, $0, strlen($0)) }
    }
}

/// The one factory of the service: opens a ledger from a `StoreConfiguration` for writing (as one
/// `ElectionLedger` for a single command, or as the `LedgerWriter` actor that many callers share), or
/// creates one. The CLI, the tests and the server all open ledgers here.
public enum VoteLedgerService {
    /// Opens the ledger for writing, holding its writer lock until the returned ledger is closed. Fails at
    /// once, naming the server, if a running `vote serve` is the ledger's writer. The memory driver creates
    /// its ledger here (its first block timed now).
    public static func openLedger(_ configuration: StoreConfiguration) throws -> ElectionLedger {
        try ElectionLedger(configuration.store.open(configuration), log: configuration.log)
    }

    /// A reader of the configured ledger (no writer lock, no keys).
    public static func source(_ configuration: StoreConfiguration) throws -> any BlockSource {
        try configuration.store.source()
    }

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

    /// Creates a new ledger named `name` in the configured store, with a new authority key (in a key
    /// directory: encrypted with the configured passphrase, asked for if the source asks) and a new voter
    /// secret, and opens it.
    public static func create(_ configuration: StoreConfiguration, name: String, now: Int64) throws -> ElectionLedger {
        try ElectionLedger(configuration.store.create(name: name, now: now, configuration), log: configuration.log)
    }
}
