import Foundation
import LedgerCrypto
import VoteLedger

/// An append-only file of records sealed with AES-256-GCM, in the key directory: how the officer's contact book
/// and mail log are kept at rest. Each record is its length (4 bytes, big-endian), the length's complement (4 bytes)
/// and a sealed box of its JSON under the key directory's records key (`VoterSecretKey.recordsKey`), bound to the
/// file's `context` so a record cannot be moved from one file to another. Appends are synced before they return; a
/// record cut short by a crash (the file ends inside it) is dropped before the next append, and a whole record that
/// does not open makes the file damaged: nothing is read past it. The complement tells the two apart: a damaged
/// length that points past the end of the file would otherwise read as a torn tail, and the next append would cut
/// off every record after it.
struct SealedRecords: Sendable {
    let path: String
    private let key: [UInt8]
    private let context: [UInt8]
    /// What the file is, in errors ("contact book").
    private let what: String

    init(path: String, key: [UInt8], context: String, what: String) {
        self.path = path
        self.key = key
        self.context = Array(context.utf8)
        self.what = what
    }

    /// The largest record written or read (a batch of 100,000 long contacts is under 100 MB).
    static let maxRecord = 256 << 20
    /// A record's length and its complement.
    static let header = 8

    /// Every record's bytes in order, and the length of the file's whole records (a torn tail after it).
    func read() throws(VoteError) -> (records: [[UInt8]], intact: Int) {
        guard let bytes = try readFile() else { return ([], 0) }
        var records: [[UInt8]] = []
        var at = 0
        let damaged = { (at: Int) in
            VoteError(.refused, "\(self.what) \(self.path) is damaged at byte \(at) (or sealed under another key)")
        }
        while at < bytes.count {
            // A record the file ends inside of is one a crash cut short: it was never reported written.
            guard bytes.count - at >= SealedRecords.header else { break }
            let length = bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) }
            let complement = bytes[at + 4..<at + 8].reduce(0) { $0 << 8 | Int($1) }
            guard length ^ complement == 0xFFFF_FFFF, length <= SealedRecords.maxRecord else { throw damaged(at) }
            let start = at + SealedRecords.header
            if bytes.count - start < length { break }
            guard let record = AESGCM.open(Array(bytes[start..<start + length]), key: key, context: context) else {
                throw damaged(at)
            }
            records.append(record)
            at = start + length
        }
        return (records, at)
    }

    /// Appends `record`, synced to disk before it returns; a torn tail is cut off first.
    func append(_ record: [UInt8]) throws(VoteError) {
        try append([record])
    }

    /// Appends `records` in one write, synced before it returns.
    func append(_ records: [[UInt8]]) throws(VoteError) {
        let intact = try read().intact
        var bytes: [UInt8] = []
        for record in records {
            let box: [UInt8]
            do { box = try AESGCM.seal(record, key: key, context: context) } catch {
                throw VoteError(.io, "cannot seal a record of \(what): \(error)")
            }
            guard box.count <= SealedRecords.maxRecord else {
                throw VoteError(
                    .refused,
                    "a record of \(what) would be over \(SealedRecords.maxRecord >> 20) MB: use a smaller --batch")
            }
            bytes += withUnsafeBytes(of: UInt32(box.count).bigEndian, Array.init)
            bytes += withUnsafeBytes(of: (~UInt32(box.count)).bigEndian, Array.init) + box
        }
        let created = intact == 0 && access(path, F_OK) != 0
        let descriptor = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw failure("open") }
        defer { close(descriptor) }
        guard ftruncate(descriptor, off_t(intact)) == 0, lseek(descriptor, off_t(intact), SEEK_SET) >= 0 else {
            throw failure("write")
        }
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { write(descriptor, $0.baseAddress!, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw failure("write") }
            written += count
        }
        guard fsync(descriptor) == 0 else { throw failure("sync") }
        // A new file's name is durable only once its directory is synced.
        if created {
            let directory = open((path as NSString).deletingLastPathComponent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard directory >= 0 else { throw failure("sync the directory of") }
            defer { close(directory) }
            guard fsync(directory) == 0 else { throw failure("sync the directory of") }
        }
    }

    /// Holds an exclusive lock on `PATH.lock` (beside the file) until the returned closure is called; a one-line
    /// refusal if another process holds it.
    func lock(_ doing: String) throws(VoteError) -> @Sendable () -> Void {
        let descriptor = open(path + ".lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw failure("lock") }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            throw VoteError(.refused, "another run is \(doing) (\(path).lock is held); wait for it to end")
        }
        return { close(descriptor) }
    }

    /// Cuts the file back to `length` bytes (the records of a batch that was not recorded).
    func truncate(to length: Int) throws(VoteError) {
        let descriptor = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure("open") }
        defer { close(descriptor) }
        guard ftruncate(descriptor, off_t(length)) == 0, fsync(descriptor) == 0 else { throw failure("write") }
    }

    private func readFile() throws(VoteError) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw failure("open")
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw failure("read") }
        guard info.st_mode & S_IFMT == S_IFREG, info.st_mode & 0o077 == 0 else {
            throw VoteError(.refused, "\(what) \(path) must be a regular file only you can read (chmod 600 it)")
        }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        var done = 0
        while done < bytes.count {
            let count = bytes[done...].withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress!, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            done += count
        }
        return Array(bytes[..<done])
    }

    private func failure(_ verb: String) -> VoteError {
        VoteError(.io, "cannot \(verb) \(what) \(path): \(VoteError.describe(errno: errno))")
    }
}
