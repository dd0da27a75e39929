public import ArgumentParser
public import FileDriver
public import FileStore
import Foundation
public import Ledger
public import VoteLedger

#if VOTE_POSTGRES
    import PostgresStore
    public import ServiceLifecycle
#endif

// Options every program of the command line takes alike.

/// `--ledger DIR`, defaulting to $VOTE_LEDGER, else ./vote-ledger; or `--store URL`, a PostgreSQL database,
/// defaulting to $VOTE_DATABASE_URL; `--keys DIR`, defaulting to $VOTE_KEYS, else the ledger directory's
/// sibling `DIR.keys` (`KeyDirectory(defaultFor:)`; a database ledger has no default).
public struct LedgerOptions: ParsableArguments {
    public init() {}

    @Option(help: "Ledger directory (default: $VOTE_LEDGER, else ./vote-ledger).")
    public var ledger: String?

    @Option(
        help: ArgumentHelp(
            "The ledger's PostgreSQL database instead of a directory (default: $VOTE_DATABASE_URL).",
            discussion: "postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE, or postgres://USER@/DATABASE?host=SOCKETDIR",
            valueName: "url"))
    public var store: String?

    @Option(help: "Key directory: the authority key and other secrets (default: $VOTE_KEYS, else LEDGER.keys).")
    public var keys: String?

    public func validate() throws {
        if ledger != nil, store != nil {
            throw ValidationError("--ledger and --store name two ledgers: give one")
        }
    }

    /// The database given (`--store`, else $VOTE_DATABASE_URL), if any: then the ledger is there, not in a
    /// directory.
    public var databaseURL: String? {
        store ?? ProcessInfo.processInfo.environment["VOTE_DATABASE_URL"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The store of the database at `url`.
    public static func database(_ url: String) throws -> any StoreOpener {
        #if VOTE_POSTGRES
            return try PostgresOpener(url: url)
        #else
            throw VoteError(
                .refused, "this build of vote has no PostgreSQL store (it was built with VOTE_WITHOUT_SERVER=1)")
        #endif
    }

    /// Where the ledger is, for messages: its directory, or its database's URL without the password.
    public var described: String {
        guard let databaseURL else { return path }
        return (try? LedgerOptions.database(databaseURL).description) ?? "the database given"
    }

    /// The ledger's key directory, where a command needs one: beside a ledger directory by default; a
    /// database ledger's must be given.
    public func requiredKeyDirectory() throws -> KeyDirectory {
        databaseURL == nil ? keyDirectory : try databaseKeys()
    }

    /// The key directory of a database ledger, which has no directory to put it beside: `--keys` or $VOTE_KEYS.
    func databaseKeys() throws -> KeyDirectory {
        guard let keysGiven else {
            throw VoteError(
                .refused,
                "a database ledger keeps its keys in a key directory of each server: give --keys DIR (or set VOTE_KEYS)"
            )
        }
        return KeyDirectory(keysGiven)
    }

    public var path: String {
        ledger ?? ProcessInfo.processInfo.environment["VOTE_LEDGER"] ?? "./vote-ledger"
    }

    /// The key directory given, if any (`--keys`, else $VOTE_KEYS).
    var keysGiven: String? {
        keys ?? ProcessInfo.processInfo.environment["VOTE_KEYS"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The ledger's key directory.
    public var keyDirectory: KeyDirectory { LedgerKeys.directory(ledger: path, keys: keysGiven) }

    /// The store the ledger is in (its driver): the one place the command line picks one.
    public var location: any StoreDriver {
        get throws {
            if let databaseURL {
                return ExternalStoreDriver(try LedgerOptions.database(databaseURL), keys: try databaseKeys().path)
            }
            return FileDriver(path: path, keys: keysGiven)
        }
    }

    #if VOTE_POSTGRES
        /// The store as a program that runs until it is stopped opens it (`vote serve`), and what of the store runs
        /// as a service of that program's lifecycle: a database's connections (`PostgresDatabase`), stopped once
        /// the server has stopped and the ledger is closed; nothing for a directory.
        public func served() throws -> (store: any StoreDriver, services: [any Service]) {
            guard let databaseURL else { return (try location, []) }
            let database = PostgresDatabase()
            let opener = try PostgresOpener(url: databaseURL, database: database)
            return (ExternalStoreDriver(opener, keys: try databaseKeys().path), [database])
        }
    #endif

    /// The service's configuration for this ledger and passphrase (waits up to 10 s for another writer).
    public func configuration(_ passphrase: PassphraseOptions) throws -> StoreConfiguration {
        StoreConfiguration(try location, passphrase: try passphrase.source())
    }

    /// The authority key, for a command that signs without writing (`vote head`, `vote receipt`); secrets an
    /// older ledger keeps in its directory are moved to the key directory first.
    public func authorityKey(_ reader: any BlockSource, passphrase: [UInt8]?) throws -> any AuthoritySigner {
        if databaseURL != nil {
            return try FileBlockStore.loadAuthorityKey(
                from: try databaseKeys(), passphrase: passphrase, genesis: reader.genesis)
        }
        try LedgerKeys.moveOut(ledger: path, keys: keyDirectory, log: standardErrorLog)
        return try FileBlockStore.loadAuthorityKey(from: keyDirectory, passphrase: passphrase, genesis: reader.genesis)
    }

    /// Opens the ledger's writer, the one way a command changes the ledger.
    public func openWriter(_ passphrase: PassphraseOptions) throws -> LedgerWriter {
        try VoteLedgerService.openWriter(configuration(passphrase))
    }

    /// `body` with the ledger's writer, closed afterwards whatever happens (its index and a snapshot saved,
    /// the writer lock released).
    public func withWriter<T>(
        _ passphrase: PassphraseOptions, _ body: (LedgerWriter) async throws -> T
    ) async throws -> T {
        let writer = try openWriter(passphrase)
        do {
            let result = try await body(writer)
            await writer.close()
            return result
        } catch {
            await writer.close()
            throw error
        }
    }

    /// The user's state directory, where readers keep status indexes and remembered heads: $VOTE_STATE_DIR,
    /// else $XDG_STATE_HOME/voteledger, else ~/.local/state/voteledger. The one place it is looked up.
    static func stateDirectory(_ environment: [String: String]) -> String {
        if let explicit = environment["VOTE_STATE_DIR"], !explicit.isEmpty { return explicit }
        if let state = environment["XDG_STATE_HOME"], !state.isEmpty { return state + "/voteledger" }
        return (environment["HOME"] ?? NSHomeDirectory()) + "/.local/state/voteledger"
    }

    /// What a reader of this ledger derives: the writer's snapshot in the ledger directory (a database
    /// ledger's writers keep none), the status indexes and remembered heads in the user's state directory.
    public var derived: FileDerivedStore {
        FileDerivedStore(
            ledger: databaseURL == nil ? path : nil,
            state: LedgerOptions.stateDirectory(ProcessInfo.processInfo.environment))
    }

    /// Opens the ledger for reading, in its directory or its database: the one place a reader, verifier or
    /// exporter gets a ledger.
    public func reader() throws -> any BlockSource {
        // Not through `location`: a reader of a database ledger needs no key directory.
        if let databaseURL { return try LedgerOptions.database(databaseURL).source() }
        return try FileBlockSource(path: path)
    }

    /// Replays the ledger for reading (from the writer's snapshot, if it kept one).
    public func view() throws -> ElectionView { try view(of: try reader()) }

    /// Replays `reader`, this ledger's reader, from the writer's snapshot if it kept one and this user can
    /// read the ledger's key directory to check its seal; else from the genesis block.
    public func view(of reader: any BlockSource) throws -> ElectionView {
        try ElectionView.replay(reader, snapshot: ElectionView.savedSnapshot(in: derived, key: derivedStateKey(reader)))
    }

    /// The key that seals the writer's derived state (`DerivedStateKey`), if this user can read the voter secret
    /// in the ledger's key directory; nil otherwise (an auditor's copy, another user), and then nothing derived
    /// is used.
    public func derivedStateKey(_ reader: any BlockSource) -> DerivedStateKey? {
        guard let keys = try? requiredKeyDirectory(), let secret = try? FileVoterSecret(keys: keys) else { return nil }
        return secret.derivedStateKey(ledgerID: reader.genesis.ledgerID)
    }
}

/// Where the authority key's passphrase comes from: a file, $VOTE_PASSPHRASE, or the terminal with echo
/// off. Never argv.
public struct PassphraseOptions: ParsableArguments {
    public init() {}

    /// Reads a passphrase from the terminal without echoing it.
    public static func prompt(_ text: String) throws -> [UInt8] {
        var saved = termios()
        guard tcgetattr(0, &saved) == 0 else {
            throw VoteError(.refused, "cannot read a passphrase: standard input is not a terminal")
        }
        var quiet = saved
        quiet.c_lflag &= ~tcflag_t(ECHO)
        // Echo off (discarding typeahead) before the prompt appears, so an answer typed after seeing the
        // prompt is never flushed away.
        tcsetattr(0, TCSAFLUSH, &quiet)
        Output.standardError(text)
        defer {
            tcsetattr(0, TCSAFLUSH, &saved)
            Output.standardError("\n")
        }
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while Foundation.read(0, &byte, 1) == 1, byte != 10 { bytes.append(byte) }
        if bytes.last == 13 { bytes.removeLast() }
        guard !bytes.isEmpty else { throw VoteError(.refused, "no passphrase given") }
        return bytes
    }

    @Option(help: "File holding the authority key's passphrase (else $VOTE_PASSPHRASE; else the key is unencrypted).")
    public var passphraseFile: String?

    /// The passphrase given by file or variable; if there is none, the terminal (echo off) is asked if the
    /// key turns out to be encrypted.
    public func source() throws -> StoreConfiguration.Passphrase {
        if let given = try read() { return .given(given) }
        guard isatty(0) == 1 else { return .none }
        return .ask { try PassphraseOptions.prompt("Passphrase for the authority key: ") }
    }

    /// Runs `body` with the passphrase (see `source`).
    public func using<T>(_ body: ([UInt8]?) throws -> T) throws -> T {
        try source().using(body)
    }

    /// The passphrase from `--passphrase-file` or $VOTE_PASSPHRASE, or `nil` if neither is given. An empty
    /// one is refused rather than taken to mean "no encryption", and so is a file others can read (as a
    /// key file is).
    public func read() throws -> [UInt8]? {
        if let passphraseFile {
            var info = stat()
            guard let handle = FileHandle(forReadingAtPath: passphraseFile),
                fstat(handle.fileDescriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG,
                let data = try? handle.readToEnd() ?? Data()
            else { throw VoteError(.refused, "cannot read passphrase file \(passphraseFile)") }
            let mode = info.st_mode & 0o777
            guard mode & 0o077 == 0 else {
                throw VoteError(
                    .refused,
                    "passphrase file \(passphraseFile) is accessible by others (mode \(String(mode, radix: 8))); run chmod 600 on it"
                )
            }
            var bytes = Array(data)
            while let last = bytes.last, last == 10 || last == 13 { bytes.removeLast() }
            guard !bytes.isEmpty else { throw VoteError(.refused, "passphrase file \(passphraseFile) is empty") }
            return bytes
        }
        if let value = ProcessInfo.processInfo.environment["VOTE_PASSPHRASE"] {
            guard !value.isEmpty else {
                throw VoteError(
                    .refused, "VOTE_PASSPHRASE is set but empty; unset it for an unencrypted key, or give a passphrase")
            }
            return Array(value.utf8)
        }
        return nil
    }
}
