import FileStore
import Foundation
public import VoteLedger

/// Derived state in files, as the file store's ledgers have always kept it: `snapshot.bin` and `voters.idx`
/// in the ledger directory (only its writer writes them), `<id>.status.idx` and `<id>.head` in the user's
/// state directory (readers must not modify a ledger, FORMAT.md §5.8, and may not be able to write there).
/// An item whose directory is not given is not kept.
public struct FileDerivedStore: DerivedStore {
    /// The ledger directory, for the snapshot and the voter index.
    public let ledger: String?
    /// The user's state directory, for status indexes and remembered heads.
    public let state: String?

    public init(ledger: String? = nil, state: String? = nil) {
        self.ledger = ledger
        self.state = state
    }

    /// The file of `item`, if its directory is given.
    public func path(of item: DerivedItem) -> String? {
        switch item {
        case .snapshot: ledger.map { $0 + "/" + ElectionView.snapshotFile }
        case .statusIndex(let id): state.map { $0 + "/\(id).status.idx" }
        case .head(let id): state.map { $0 + "/\(id).head" }
        }
    }

    public var voterIndexPath: String? { ledger.map { $0 + "/" + VoterIndex.fileName } }

    public func location(of item: DerivedItem) -> String { path(of: item) ?? "nowhere (no directory given)" }

    /// Maps the file read-only: a status index of a million voters is searched, not read. Never through a
    /// symbolic link, and only a regular file.
    public func read(_ item: DerivedItem) -> DerivedBytes? {
        guard let path = path(of: item) else { return nil }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        guard info.st_size > 0 else { return DerivedBytes(copying: []) }
        let length = Int(info.st_size)
        guard let mapping = mmap(nil, length, PROT_READ, MAP_SHARED, descriptor, 0), mapping != MAP_FAILED else {
            return nil
        }
        return DerivedBytes(bytes: UnsafeRawBufferPointer(start: mapping, count: length)) { _ in
            munmap(mapping, length)
        }
    }

    /// Replaces the file by a rename (under a temporary name of this process's own, as several readers may
    /// save a status index at once), creating the state directory (0700) if need be.
    public func write(_ item: DerivedItem, _ bytes: [UInt8]) throws {
        guard let path = path(of: item) else { return }
        if case .snapshot = item {
            try ProtectedFile.replace(path, contents: bytes)
            return
        }
        try FileManager.default.createDirectory(
            atPath: state!, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try ProtectedFile.replace(path, contents: bytes, temporary: path + ".tmp-\(getpid())")
    }
}
