public import FileStore
import Foundation
import Ledger
import OutputFiles
import VoteLedger

/// The secrets of a file-store ledger, which live in its key directory (`KeyDirectory`), never in the
/// ledger directory: the authority key, the voter secret and the admin token's hash. Ledgers made before
/// the key directory existed kept them in the ledger directory; the first command that needs them moves
/// them out (`moveOut`), so every later copy of the ledger directory is safe to hand out.
public enum LedgerKeys {
    /// Every secret a ledger may have, by file name.
    public static let secretNames = [
        KeyDirectory.privateKeyName, FileVoterSecret.fileName, KeyStoreNames.adminTokenHash,
    ]

    /// The key directory of the ledger at `ledger`: `keys` if given, else the default (`KeyDirectory(defaultFor:)`).
    public static func directory(ledger: String, keys: String?) -> KeyDirectory {
        keys.map { KeyDirectory($0) } ?? KeyDirectory(defaultFor: ledger)
    }

    /// The names of the secrets held in directory `path` (a ledger directory, or a copy of one), which no
    /// public copy should hold.
    public static func secrets(in path: String) -> [String] {
        secretNames.filter { FileManager.default.fileExists(atPath: path + "/" + $0) }
    }

    /// Moves the secrets an older ledger keeps in its directory `ledger` into its key directory `keys`
    /// (created 0700 if missing): each is written there (0600, synced), then removed from the ledger
    /// directory, and `log` says so once. A secret already moved (the same bytes in both places, after a
    /// move cut short) is only removed; two different copies are refused, nothing moved. Does nothing for a
    /// ledger whose directory holds no secret.
    public static func moveOut(ledger: String, keys: KeyDirectory, log: (String) -> Void) throws {
        let found = secrets(in: ledger)
        guard !found.isEmpty else { return }
        try FileBlockSource.requireLedger(at: ledger)
        let created = try keys.create()
        for name in found {
            let (old, new) = (ledger + "/" + name, keys.path + "/" + name)
            let bytes = try ProtectedFile.readPrivate(old, what: name, limit: 1 << 20)
            if FileManager.default.fileExists(atPath: new) {
                guard ProtectedFile.read(new) == bytes else {
                    throw VoteError(
                        .refused,
                        "\(old) and \(new) differ: keep the right one in the key directory \(keys.path) and remove the other"
                    )
                }
            } else {
                try ProtectedFile.replace(new, contents: bytes)
            }
        }
        try OutputFile.syncDirectory(keys.path)
        if created { try OutputFile.syncDirectory(OutputFile.directory(of: keys.path)) }
        for name in found { unlink(ledger + "/" + name) }
        try OutputFile.syncDirectory(ledger)
        log(
            "moved \(found.joined(separator: ", ")) out of the ledger directory \(ledger) into its key directory \(keys.path): a copy of the ledger directory no longer carries them"
        )
    }
}
