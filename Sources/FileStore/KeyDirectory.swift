public import Ledger
public import LedgerCrypto

#if canImport(Glibc)
    import Glibc
#endif

/// The key directory of a ledger: the authority key and the application's other secrets (the voter secret,
/// the admin token's hash), kept apart from the ledger directory so that the ledger directory holds only
/// what anyone may read, and a copy of it is safe to hand to any auditor (FORMAT.md §5.7). The directory is
/// created with mode 0700 and its files 0600; a writer refuses one that group or others can access.
public struct KeyDirectory: Sendable {
    /// The authority key's file name.
    public static let privateKeyName = "authority.key"

    /// The directory path.
    public let path: String

    public init(_ path: String) { self.path = path }

    /// The key directory of the ledger at `ledger` when none is given: its sibling `LEDGER.keys` (for
    /// `./vote-ledger`, `./vote-ledger.keys`). A sibling is outside the ledger directory, so copying,
    /// publishing or serving that directory never carries a secret; it is found again without any setting
    /// and for any number of ledgers, it lives on the same disk as the ledger it belongs to (one backup plan
    /// for both), and it needs neither the ledger id (unknown before `init`) nor a home directory (absent
    /// for many service accounts). A ledger named `.` or ending in `..` is resolved first, so its keys
    /// are never inside it.
    public init(defaultFor ledger: String) {
        var base = ledger
        while base.count > 1, base.hasSuffix("/") { base.removeLast() }
        let last = base.split(separator: "/").last.map(String.init) ?? base
        if last == "." || last == "..", let resolved = realpath(base, nil) {
            base = String(cString: resolved)
            free(resolved)
        }
        self.init(base + ".keys")
    }

    /// The authority key file.
    public var privateKeyPath: String { path + "/" + KeyDirectory.privateKeyName }

    /// Makes the directory ready to take a new ledger's keys: created 0700 if missing, else refused unless
    /// it is protected (only this user can enter it) and holds none of `names` (the keys of another
    /// ledger are never overwritten). Returns whether it was created.
    func prepareForNewKeys(_ names: [String]) throws(LedgerError) -> Bool {
        let created = try create()
        for name in names where FileSystem.kind(path + "/" + name) != .missing {
            throw LedgerError.invalidRequest(
                "key directory \(path) already holds \(name) (the keys of another ledger?); give another key directory"
            )
        }
        return created
    }

    /// The keys a new ledger wrote into a key directory, which `remove` takes back if the ledger is not created
    /// after all.
    public struct NewKeys: Sendable {
        let files: [String]
        let createdDirectory: String?

        /// Removes the files written (and the directory, if it was made for them).
        public func remove() {
            for file in files { unlink(file) }
            if let createdDirectory { rmdir(createdDirectory) }
        }
    }

    /// Writes a new ledger's authority key (encrypted with `passphrase`, if given) and its other `secrets`
    /// into this directory, created 0700 if missing, each file 0600 and synced, before the ledger they belong
    /// to appears. Refuses a directory that holds any of them already (another ledger's keys are never
    /// overwritten). What it wrote is removed again if it fails part-way.
    public func storeNewKeys(
        authority: Ed25519PrivateKey, passphrase: [UInt8]?, secrets: [(name: String, contents: [UInt8])],
        io: any FileIO = PosixIO.shared
    ) throws(LedgerError) -> NewKeys {
        let privatePEM: String
        do { privatePEM = try authority.pem(passphrase: passphrase) } catch {
            throw LedgerError.key("cannot encode the authority key: \(error.message)")
        }
        let created = try prepareForNewKeys([KeyDirectory.privateKeyName] + secrets.map(\.name))
        var written = NewKeys(files: [], createdDirectory: created ? path : nil)
        do throws(LedgerError) {
            for (name, contents) in [(KeyDirectory.privateKeyName, Array(privatePEM.utf8))] + secrets {
                let file = path + "/" + name
                do throws(LedgerError) {
                    try FileSystem.createFile(file, contents: contents, mode: 0o600, io: io)
                } catch {
                    // Another init on the same key directory got there first.
                    guard FileSystem.kind(file) == .missing else {
                        throw LedgerError.invalidRequest("key directory \(path) already holds \(name) (another init?)")
                    }
                    throw error
                }
                written = NewKeys(files: written.files + [file], createdDirectory: written.createdDirectory)
            }
            try io.syncDirectory(path)
            if created { try io.syncDirectory(FileBlockStore.parentDirectory(of: path)) }
        } catch {
            written.remove()
            throw error
        }
        return written
    }

    /// Creates the directory (0700) if it is missing, else refuses it unless only this user can enter it.
    /// Returns whether it was created.
    public func create() throws(LedgerError) -> Bool {
        // Another process may make it at the same moment (two inits): then it is checked as found.
        if FileSystem.kind(path) == .missing, mkdir(path, 0o700) == 0 { return true }
        if FileSystem.kind(path) == .missing {
            throw LedgerError.io("creating key directory \(path): \(errnoText())")
        }
        try FileSystem.requirePrivateDirectory(path)
        return false
    }
}
