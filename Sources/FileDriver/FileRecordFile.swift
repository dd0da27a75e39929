import Foundation
import OutputFiles
import VoteLedger

/// A record file in a key directory (`FileKeyStore.records`): a regular file only this user can read, written
/// in place and synced, locked through `PATH.lock` beside it.
struct FileRecordFile: RecordFile {
    let path: String
    /// What the file is, in errors ("contact book").
    let what: String

    var location: String { path }

    func read() throws(VoteError) -> [UInt8]? {
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

    func write(_ bytes: [UInt8], after length: Int) throws(VoteError) {
        let created = access(path, F_OK) != 0
        let descriptor = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw failure("open") }
        defer { close(descriptor) }
        guard ftruncate(descriptor, off_t(length)) == 0, lseek(descriptor, off_t(length), SEEK_SET) >= 0 else {
            throw failure("write")
        }
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress!, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw failure("write") }
            written += count
        }
        guard fsync(descriptor) == 0 else { throw failure("sync") }
        // A new file's name is durable only once its directory is synced.
        if created {
            let directory = open(OutputFile.directory(of: path), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard directory >= 0 else { throw failure("sync the directory of") }
            defer { close(directory) }
            guard fsync(directory) == 0 else { throw failure("sync the directory of") }
        }
    }

    func truncate(to length: Int) throws(VoteError) {
        let descriptor = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure("open") }
        defer { close(descriptor) }
        guard ftruncate(descriptor, off_t(length)) == 0, fsync(descriptor) == 0 else { throw failure("write") }
    }

    func lock(_ doing: String) throws(VoteError) -> @Sendable () -> Void {
        let descriptor = open(path + ".lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw failure("lock") }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            throw VoteError(.refused, "another run is \(doing) (\(path).lock is held); wait for it to end")
        }
        return { close(descriptor) }
    }

    private func failure(_ verb: String) -> VoteError {
        VoteError(.io, "cannot \(verb) \(what) \(path): \(VoteError.describe(errno: errno))")
    }
}
