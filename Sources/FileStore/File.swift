public import Ledger

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The store's I/O seam: every write, sync, truncation, rename and removal the file store makes goes
/// through one of these. `PosixIO` does it for real; tests substitute a disk that fails or loses power at
/// a chosen operation. Reads and opens are not routed: a simulated power cut is applied to the real
/// files, and the store then reopens them normally.
public protocol FileIO: AnyObject, Sendable {
    func write(_ bytes: [UInt8], to file: FileHandleRef, at offset: UInt64) throws(LedgerError)
    func sync(_ file: FileHandleRef) throws(LedgerError)
    func truncate(_ file: FileHandleRef, to size: UInt64) throws(LedgerError)
    func syncDirectory(_ path: String) throws(LedgerError)
    func rename(_ from: String, _ to: String) throws(LedgerError)
    func remove(_ path: String) throws(LedgerError)
}

/// An open file as the I/O seam sees it.
public struct FileHandleRef: Sendable {
    public let path: String
    public let descriptor: Int32
}

/// The real thing: POSIX calls, each failure naming the file and the call.
public final class PosixIO: FileIO {
    public static let shared = PosixIO()

    public init() {}

    public func write(_ bytes: [UInt8], to file: FileHandleRef, at offset: UInt64) throws(LedgerError) {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes {
                pwrite(file.descriptor, $0.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
            }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw LedgerError.system("writing \(file.path)") }
            done += n
        }
    }

    public func sync(_ file: FileHandleRef) throws(LedgerError) {
        guard fdatasync(file.descriptor) == 0 else {
            throw LedgerError.system("syncing \(file.path) to disk")
        }
    }

    public func truncate(_ file: FileHandleRef, to size: UInt64) throws(LedgerError) {
        guard ftruncate(file.descriptor, off_t(size)) == 0 else {
            throw LedgerError.system("truncating \(file.path)")
        }
    }

    public func syncDirectory(_ path: String) throws(LedgerError) {
        let fd = Glibc.open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw LedgerError.system("opening directory \(path)") }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw LedgerError.system("syncing directory \(path)") }
    }

    public func rename(_ from: String, _ to: String) throws(LedgerError) {
        guard Glibc.rename(from, to) == 0 else { throw LedgerError.system("renaming \(from) to \(to)") }
    }

    public func remove(_ path: String) throws(LedgerError) {
        guard unlink(path) == 0 else { throw LedgerError.system("removing \(path)") }
    }
}

/// One open file descriptor, closed when the value goes away. Writes, syncs and truncations go through
/// the I/O seam it was opened with. Every open refuses a symbolic link (`O_NOFOLLOW`): a link planted in
/// a ledger directory must never lead the store to read, truncate or overwrite a file elsewhere.
final class File: Sendable {
    let path: String
    let descriptor: Int32
    let io: any FileIO

    fileprivate init(path: String, descriptor: Int32, io: any FileIO) {
        self.path = path
        self.descriptor = descriptor
        self.io = io
    }

    private var ref: FileHandleRef { FileHandleRef(path: path, descriptor: descriptor) }

    deinit { close(descriptor) }

    /// Opens an existing file read-only.
    static func openForReading(_ path: String) throws(LedgerError) -> File {
        try open(path, flags: O_RDONLY, mode: 0, io: PosixIO.shared)
    }

    /// Opens a file read-write, creating it with `mode` if `create`.
    static func openForWriting(
        _ path: String, create: Bool = false, exclusive: Bool = false, mode: mode_t = 0o600, io: any FileIO
    ) throws(LedgerError) -> File {
        var flags = O_RDWR
        if create { flags |= O_CREAT }
        if exclusive { flags |= O_EXCL }
        return try open(path, flags: flags, mode: mode, io: io)
    }

    private static func open(_ path: String, flags: Int32, mode: mode_t, io: any FileIO) throws(LedgerError) -> File {
        let fd = Glibc.open(path, flags | O_NOFOLLOW | O_CLOEXEC, mode)
        guard fd >= 0 else {
            if errno == ELOOP {
                throw LedgerError.unprotected(
                    "\(path) is a symbolic link; a ledger directory must hold none (remove it and reopen)")
            }
            throw LedgerError.system("opening \(path)")
        }
        return File(path: path, descriptor: fd, io: io)
    }

    /// The file's metadata (type, permissions, owner).
    func status() throws(LedgerError) -> stat {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw LedgerError.system("reading \(path)") }
        return info
    }

    /// Current size in bytes.
    func size() throws(LedgerError) -> UInt64 {
        UInt64(try status().st_size)
    }

    /// Reads up to `count` bytes at `offset`; fewer only at end of file.
    func read(at offset: UInt64, count: Int) throws(LedgerError) -> [UInt8] {
        // Not zero-filled first: a block is up to megabytes, and every byte kept is read from the file.
        var failure: LedgerError?
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            var done = 0
            while done < count {
                let n = pread(descriptor, buffer.baseAddress! + done, count - done, off_t(offset) + off_t(done))
                if n < 0 && errno == EINTR { continue }
                guard n >= 0 else {
                    failure = LedgerError.system("reading \(path)")
                    break
                }
                if n == 0 { break }
                done += n
            }
            initialized = done
        }
        if let failure { throw failure }
        return bytes
    }

    /// Writes all of `bytes` at `offset`.
    func write(_ bytes: [UInt8], at offset: UInt64) throws(LedgerError) {
        try io.write(bytes, to: ref, at: offset)
    }

    /// Makes everything written so far durable (data and the size needed to read it back).
    func sync() throws(LedgerError) {
        try io.sync(ref)
    }

    /// Cuts the file to `size` bytes.
    func truncate(to size: UInt64) throws(LedgerError) {
        try io.truncate(ref, to: size)
    }
}

/// Whole-file reads and replacements for the files an application keeps beside the ledger (a snapshot, a
/// remembered head), with the store's own rule: a symbolic link is never followed.
public enum ProtectedFile {
    /// The bytes of the file at `path`, or nil if it is missing, a symbolic link, or cannot be read.
    public static func read(_ path: String) -> [UInt8]? {
        guard let file = try? File.openForReading(path), let size = try? file.size() else { return nil }
        return try? file.read(at: 0, count: Int(size))
    }

    /// The bytes of a private file (a voter secret), refused unless only this user can read or replace it
    /// (`what` names it in errors); at most `limit` bytes are read.
    public static func readPrivate(_ path: String, what: String, limit: Int) throws(LedgerError) -> [UInt8] {
        let file = try FileSystem.openPrivate(path, what: what)
        return try file.read(at: 0, count: min(limit, Int(try file.status().st_size)))
    }

    /// Replaces the file at `path` with `contents` (mode 0600): written and synced under `PATH.tmp`, created
    /// exclusively, then renamed over `path`, so a reader sees the old file or the new one. A symbolic link
    /// at either name is replaced, never followed.
    /// Writers that may race (several reader processes) each give a `temporary` name of their own.
    public static func replace(_ path: String, contents: [UInt8], temporary: String? = nil) throws(LedgerError) {
        let temporary = temporary ?? path + ".tmp"
        unlink(temporary)
        do {
            try FileSystem.createFile(temporary, contents: contents, mode: 0o600, io: PosixIO.shared)
            try PosixIO.shared.rename(temporary, path)
        } catch {
            unlink(temporary)
            throw error
        }
    }
}

/// The current `errno` as text, e.g. "No space left on device".
func errnoText() -> String {
    String(cString: strerror(errno))
}

/// File system queries the store needs; thin wrappers so callers get `LedgerError`s.
enum FileSystem {
    enum Kind { case missing, directory, file, other }

    static func kind(_ path: String) -> Kind {
        var info = stat()
        guard stat(path, &info) == 0 else { return .missing }
        switch info.st_mode & S_IFMT {
        case S_IFDIR: return .directory
        case S_IFREG: return .file
        default: return .other
        }
    }

    /// Opens a file only this user may read (an authority key, a voter secret) and checks it: a regular
    /// file, never reached through a symbolic link, owned by this user, with no access for group or others
    /// (as ssh treats private keys). Checked on the open file, so the file checked is the file read.
    /// `what` names it in errors ("authority key").
    static func openPrivate(_ path: String, what: String) throws(LedgerError) -> File {
        let fd = Glibc.open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ELOOP {
                throw LedgerError.unprotected("\(what) \(path) is a symbolic link; refusing to follow it")
            }
            throw LedgerError.system("\(what) \(path) cannot be opened")
        }
        let file = File(path: path, descriptor: fd, io: PosixIO.shared)
        try requireProtected(try file.status(), path: path, what: what, type: S_IFREG, forbidden: 0o077)
        return file
    }

    /// Refuses a directory a writer must not use: one writable by group or others, or owned by another user
    /// (as ssh refuses such a `~/.ssh`). Anyone who can write to it can swap its files or plant links.
    /// Others may read it: a ledger is public. The path may be a symbolic link to the directory; the files
    /// in it may not.
    static func requireProtectedDirectory(_ path: String) throws(LedgerError) {
        var info = stat()
        guard stat(path, &info) == 0 else { throw LedgerError.system("reading \(path)") }
        try requireProtected(info, path: path, what: "ledger directory", type: S_IFDIR, forbidden: 0o022)
    }

    /// Refuses a key directory that group or others can enter, or that another user owns: its files are
    /// secrets, as ssh treats `~/.ssh`.
    static func requirePrivateDirectory(_ path: String) throws(LedgerError) {
        var info = stat()
        guard stat(path, &info) == 0 else { throw LedgerError.io("reading key directory \(path): \(errnoText())") }
        try requireProtected(info, path: path, what: "key directory", type: S_IFDIR, forbidden: 0o077)
    }

    /// The one check behind `openPrivate` and `requireProtectedDirectory`: `info` is of `type`, owned by this
    /// user, and has none of the `forbidden` permission bits.
    private static func requireProtected(
        _ info: stat, path: String, what: String, type: mode_t, forbidden: mode_t
    )
        throws(LedgerError)
    {
        guard info.st_mode & S_IFMT == type else {
            throw LedgerError.unprotected("\(what) \(path) is not a \(type == S_IFDIR ? "directory" : "regular file")")
        }
        guard info.st_uid == geteuid() else {
            throw LedgerError.unprotected(
                "\(what) \(path) belongs to user \(info.st_uid), not to you (user \(geteuid())); only its owner may use it"
            )
        }
        let mode = info.st_mode & 0o7777
        guard mode & forbidden == 0 else {
            let access = forbidden & 0o044 == 0 ? "writable" : "accessible"
            let fix = type == S_IFDIR ? "chmod 700" : "chmod 600"
            throw LedgerError.unprotected(
                "\(what) \(path) is \(access) by others (mode \(String(mode, radix: 8))); run \(fix) on it")
        }
    }

    /// Names in directory `path`, without "." and "..".
    static func list(_ path: String) throws(LedgerError) -> [String] {
        guard let dir = opendir(path) else { throw LedgerError.system("listing \(path)") }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Creates `path` with `contents` and `mode`, failing if it exists, and syncs it.
    static func createFile(_ path: String, contents: [UInt8], mode: mode_t, io: any FileIO) throws(LedgerError) {
        let file = try File.openForWriting(path, create: true, exclusive: true, mode: mode, io: io)
        try file.write(contents, at: 0)
        try file.sync()
    }

    static func makeDirectory(_ path: String, mode: mode_t) throws(LedgerError) {
        guard mkdir(path, mode) == 0 else { throw LedgerError.system("creating directory \(path)") }
    }
}
