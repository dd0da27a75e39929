public import FileStore
import Foundation
public import Ledger
import LedgerCrypto
import OutputFiles
public import VoteLedger

/// The file store's driver: a ledger directory on this machine (`FileBlockStore`), its secrets in a key
/// directory (`KeyDirectory`; by default `KeyDirectory(defaultFor:)`), what the service derives beside the log
/// (`FileDerivedStore(ledger:)`) unless configured elsewhere.
public struct FileDriver: StoreDriver {
    /// The ledger directory.
    public let path: String
    /// The key directory, if not the default.
    public let keys: String?
    /// The store's I/O (tests pass a disk that fails or loses power).
    public let io: any FileIO

    public init(path: String, keys: String? = nil, io: any FileIO = PosixIO.shared) {
        self.path = path
        self.keys = keys
        self.io = io
    }

    /// The key directory this driver keeps the ledger's secrets in.
    public var keyDirectory: KeyDirectory { LedgerKeys.directory(ledger: path, keys: keys) }

    /// Fails at once, naming the server, if a running `vote serve` is the ledger's writer; moves the secrets
    /// an older ledger keeps in its own directory to the key directory (`LedgerKeys.moveOut`); then waits up to
    /// the lock timeout for another writer to finish and opens the writer, signing with the configured signer
    /// else the key file (unlocked with the passphrase), tagging voters with the configured secret else the file.
    public func open(_ configuration: StoreConfiguration) throws -> OpenedStore {
        try ServeMarker.check(ledger: path)
        let keys = keyDirectory
        try LedgerKeys.moveOut(ledger: path, keys: keys, log: configuration.log)
        let store = try configuration.passphrase.using { passphrase in
            try FileBlockStore.open(
                at: path, keys: keys.path, passphrase: passphrase, signer: configuration.signer,
                lockTimeout: configuration.lockTimeout, io: io, log: configuration.log)
        }
        return try OpenedStore(
            appender: store, derived: configuration.derived ?? FileDerivedStore(ledger: store.directory.path),
            keys: keys, given: configuration.voterSecret)
    }

    /// A new authority key (encrypted with the configured passphrase) and a new voter secret in the key
    /// directory, the genesis block and block 1, all in one step (`FileBlockStore.create`).
    public func create(name: String, now: Int64, _ configuration: StoreConfiguration) throws -> OpenedStore {
        let keys = keyDirectory
        let (authority, secret) = (try Ed25519PrivateKey(), try FileVoterSecret.generate())
        let first = try NewLedger(name: name, timestamp: now, authority: authority, secret: secret)
        let store = try FileBlockStore.create(
            at: path, keys: keys.path, name: name, authority: authority,
            passphrase: try configuration.passphrase.forNewKey(), secrets: [(FileVoterSecret.fileName, secret.bytes)],
            firstEvents: first.firstEvents, ledgerID: first.ledgerID, timestamp: now, io: io)
        return try OpenedStore(
            appender: store, derived: configuration.derived ?? FileDerivedStore(ledger: store.directory.path),
            keys: keys, given: secret)
    }

    public func source() throws -> any BlockSource { try FileBlockSource(path: path) }
}

/// The driver of a store outside the core (PostgreSQL: any `StoreOpener`) whose secrets are kept in a key
/// directory of this process. What the service derives is kept in memory (rebuilt from the store at each
/// open) unless configured elsewhere. Other processes may write the same ledger meanwhile.
public struct ExternalStoreDriver: StoreDriver {
    public let opener: any StoreOpener
    /// The key directory.
    public let keys: KeyDirectory

    public init(_ opener: any StoreOpener, keys: String) {
        self.opener = opener
        self.keys = KeyDirectory(keys)
    }

    public func open(_ configuration: StoreConfiguration) throws -> OpenedStore {
        let genesis = try opener.source().genesis
        let store = try configuration.passphrase.using { passphrase in
            try opener.openWriter(
                signer: try configuration.signer
                    ?? FileBlockStore.loadAuthorityKey(from: keys, passphrase: passphrase, genesis: genesis))
        }
        return try OpenedStore(
            appender: store, derived: configuration.derived ?? MemoryDerivedStore(), keys: keys,
            given: configuration.voterSecret)
    }

    /// A new authority key (encrypted with the configured passphrase) and voter secret written to the key
    /// directory first (removed again if the ledger is not created), then the genesis block and block 1.
    public func create(name: String, now: Int64, _ configuration: StoreConfiguration) throws -> OpenedStore {
        let (authority, secret) = (try Ed25519PrivateKey(), try FileVoterSecret.generate())
        let first = try NewLedger(name: name, timestamp: now, authority: authority, secret: secret)
        let newKeys = try keys.storeNewKeys(
            authority: authority, passphrase: try configuration.passphrase.forNewKey(),
            secrets: [(FileVoterSecret.fileName, secret.bytes)])
        let store: any BlockAppender
        do {
            store = try opener.create(
                name: name, authority: authority, ledgerID: first.ledgerID, firstEvents: first.firstEvents,
                timestamp: now)
        } catch {
            newKeys.remove()
            throw error
        }
        return try OpenedStore(
            appender: store, derived: configuration.derived ?? MemoryDerivedStore(), keys: keys, given: secret)
    }

    public func source() throws -> any BlockSource { try opener.source() }
}

extension OpenedStore {
    /// What a driver keeping its secrets in the key directory `keys` hands the service: the voter secret
    /// `given` (configured, or just made), else the one in `keys`.
    fileprivate init(
        appender: any BlockAppender, derived: any DerivedStore, keys: KeyDirectory, given: (any VoterSecretKey)?
    ) throws {
        self.init(
            appender: appender, derived: derived, secret: try given ?? FileVoterSecret(keys: keys),
            keys: FileKeyStore(keys), secretLocation: given == nil ? keys.path + "/" + FileVoterSecret.fileName : nil)
    }
}

extension StoreDriver where Self == FileDriver {
    /// A ledger directory on this machine, its secrets in the key directory `keys` (nil: the default).
    public static func file(path: String, keys: String? = nil, io: any FileIO = PosixIO.shared) -> FileDriver {
        FileDriver(path: path, keys: keys, io: io)
    }
}

extension StoreDriver where Self == ExternalStoreDriver {
    /// A ledger in a store outside the core (PostgreSQL), its secrets in the key directory `keys` of this process.
    public static func external(_ opener: any StoreOpener, keys: String) -> ExternalStoreDriver {
        ExternalStoreDriver(opener, keys: keys)
    }
}

/// A key directory as the service's key store (`KeyStore`): each secret a file, 0600, never read through a
/// symbolic link.
public struct FileKeyStore: KeyStore {
    public let directory: KeyDirectory

    public init(_ directory: KeyDirectory) { self.directory = directory }

    public func location(of name: String) -> String { directory.path + "/" + name }

    public func readPrivate(_ name: String, what: String, limit: Int) throws -> [UInt8]? {
        let path = location(of: name)
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        return try ProtectedFile.readPrivate(path, what: what, limit: limit)
    }

    public func read(_ name: String) -> [UInt8]? { ProtectedFile.read(location(of: name)) }

    public func create() throws { _ = try directory.create() }

    /// Replaces the file by a rename and syncs the directory.
    public func replace(_ name: String, contents: [UInt8]) throws {
        try ProtectedFile.replace(location(of: name), contents: contents)
        try OutputFile.syncDirectory(directory.path)
    }

    public func remove(_ name: String) { unlink(location(of: name)) }

    public func records(_ name: String, what: String) -> any RecordFile {
        FileRecordFile(path: location(of: name), what: what)
    }
}

extension FileVoterSecret {
    /// Reads the secret in the key directory `keys`: exactly 32 bytes in a regular file that only this user
    /// can read or replace (as ssh treats private keys), never through a symbolic link.
    public init(keys: KeyDirectory) throws(VoteError) {
        let file = keys.path + "/" + FileVoterSecret.fileName
        let bytes: [UInt8]
        do { bytes = try ProtectedFile.readPrivate(file, what: "voter secret", limit: 33) } catch {
            throw VoteError(ledger: error)
        }
        try self.init(bytes, from: file)
    }
}
