import Foundation
public import Ledger
import VoteLedger

// MARK: - Files handed to people

/// A file written for a person (a receipt, a tokens file), by the CLI or a server. It is claimed before
/// anything is decided: created new (`O_EXCL`, never through a symbolic link, never over a file, FIFO or
/// directory), mode 0600 whatever the umask; then written and synced. A command that ends up recording
/// nothing removes it again. A write that fails throws `VoteError` with `.output`.
///
/// One owner at a time: a bulk job hands it to the writer's `beforeWriting` and waits for the batch.
public final class OutputFile: @unchecked Sendable {
    public let path: String
    private var descriptor: Int32
    /// Bytes written so far.
    public private(set) var size = 0

    /// Creates `path`; `what` names it in the error ("receipt", "tokens file").
    public init(creating path: String, what: String) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            let reason: String
            switch errno {
            case EEXIST: reason = "it already exists (an existing file is never overwritten; give a new name)"
            case ENOENT: reason = "its directory does not exist"
            case ENOTDIR: reason = "a part of the path is not a directory"
            default: reason = VoteError.describe(errno: errno)
            }
            throw VoteError(.io, "cannot create \(what) \(path): \(reason)")
        }
        self.path = path
        self.descriptor = descriptor
    }

    deinit { close() }

    /// The error of a write to `path` that just failed (the reason is `errno`).
    static func writeFailure(_ path: String) -> VoteError {
        VoteError(.output, "cannot write to \(path): \(VoteError.describe(errno: errno))")
    }

    /// Appends `text` and syncs it to disk.
    public func appendDurably(_ text: String) throws { try appendDurably(bytes: Array(text.utf8)) }

    /// Appends `bytes` (a PDF, say) and syncs them to disk.
    public func appendDurably(bytes: [UInt8]) throws {
        var bytes = bytes[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress!, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { throw OutputFile.writeFailure(path) }
            bytes = bytes.dropFirst(written)
            size += written
        }
        guard fsync(descriptor) == 0 else { throw OutputFile.writeFailure(path) }
    }

    /// Cuts the file back to its first `length` bytes (what it held before a batch that was not recorded).
    public func truncate(to length: Int) throws {
        guard ftruncate(descriptor, off_t(length)) == 0, fsync(descriptor) == 0 else {
            throw OutputFile.writeFailure(path)
        }
        size = length
    }

    /// Closes the file (kept).
    public func close() {
        guard descriptor >= 0 else { return }
        _ = Foundation.close(descriptor)
        descriptor = -1
    }

    /// Closes and deletes the file, if the name still points at the file this claimed.
    public func remove() {
        var opened = stat()
        var named = stat()
        if descriptor >= 0, fstat(descriptor, &opened) == 0, lstat(path, &named) == 0,
            opened.st_dev == named.st_dev, opened.st_ino == named.st_ino
        {
            unlink(path)
        }
        close()
    }

    /// Syncs the directory at `path`, so names created in it survive a crash.
    public static func syncDirectory(_ path: String) throws {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw writeFailure(path) }
        defer { _ = Foundation.close(descriptor) }
        guard fsync(descriptor) == 0 else { throw writeFailure(path) }
    }

    /// The directory `path` is in.
    public static func directory(of path: String) -> String {
        let parent = (path as NSString).deletingLastPathComponent
        return parent.isEmpty ? "." : parent
    }
}

// MARK: - Receipts

/// Receipt files: C2SP tlog-proof text (`TlogProof.serialized`, which a server returns as it is), 0600, in
/// directories of their own (0700): a receipt names the voter's choice.
public enum Receipts {
    /// Writes `proof` into `file` (claimed earlier), syncs it and its directory, and closes it: the receipt
    /// survives a crash from here on.
    public static func save(_ proof: TlogProof, to file: OutputFile) throws {
        try file.appendDurably(proof.serialized)
        file.close()
        try OutputFile.syncDirectory(OutputFile.directory(of: file.path))
    }

    /// The receipt of the vote on `line` of a bulk file.
    public static func bulkPath(_ directory: String, line: Int) -> String { directory + "/line-\(line).tlog-proof" }

    /// Makes `path` ready for a bulk run's receipts before anything is cast: a new directory (0700), or an
    /// existing empty one, so that no receipt path is taken when its vote is recorded.
    public static func prepareDirectory(_ path: String) throws {
        if mkdir(path, 0o700) == 0 { return }
        let reason: String
        switch errno {
        case EEXIST:
            var status = stat()
            guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else {
                throw VoteError(.refused, "receipts directory \(path) exists and is not a directory; nothing was cast")
            }
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else {
                throw VoteError(.refused, "cannot read receipts directory \(path); nothing was cast")
            }
            guard names.isEmpty else {
                throw VoteError(
                    .refused,
                    "receipts directory \(path) is not empty (receipts are never overwritten; give a new directory); nothing was cast"
                )
            }
            return
        case ENOENT: reason = "its parent directory does not exist"
        default: reason = VoteError.describe(errno: errno)
        }
        throw VoteError(.io, "cannot create receipts directory \(path): \(reason); nothing was cast")
    }

    /// Reads a receipt file.
    public static func read(_ path: String) throws -> TlogProof {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw VoteError(.refused, "\(path): cannot read the receipt")
        }
        guard data.count < 1 << 20, let text = String(data: data, encoding: .utf8), let proof = TlogProof(parsing: text)
        else {
            throw VoteError(.refused, "\(path): not a receipt (expected a c2sp.org/tlog-proof@v1 document)")
        }
        return proof
    }
}
