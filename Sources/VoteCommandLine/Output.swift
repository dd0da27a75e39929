public import Foundation
import VoteLedger

// MARK: - Write errors

/// A write that did not reach its destination (standard output, a receipt, a tokens file): what could not
/// be written, and why in words.
public struct WriteError: Error {
    /// "standard output", or a file's path.
    public var destination: String
    /// Why, in words ("no space left on device").
    public var reason: String

    /// The one line the CLI prints when nothing more specific applies.
    public var message: String { "cannot write to \(destination): \(reason)" }

    /// `errno` as words, for writes.
    public static func reason(_ code: Int32, standardOutput: Bool = false) -> String {
        switch code {
        case EPIPE: return "the reader closed the pipe"
        case EBADF where standardOutput: return "standard output is closed"
        case ENOSPC: return "no space left on device"
        case EDQUOT: return "disk quota exceeded"
        default: return VoteError.describe(errno: code)
        }
    }
}

// MARK: - Standard output

/// Everything the CLI prints on standard output goes through here: buffered, written with write(2), every
/// failure reported as a `WriteError` (a token or receipt that never reached its reader must not pass for
/// delivered). `CommandLineProgram.main` flushes what is left when a command returns.
public enum Output {
    /// One thread writes: the CLI's commands run on the main thread.
    nonisolated(unsafe) private static var buffer: [UInt8] = []
    /// Streaming commands (log, export) write out every 64 KiB, so memory stays flat.
    private static let flushThreshold = 1 << 16

    /// Prints `text` and a newline.
    public static func line(_ text: String) throws {
        try write(text + "\n")
    }

    /// Prints `text` as it is.
    public static func write(_ text: String) throws {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= flushThreshold { try flush() }
    }

    /// Prints raw bytes.
    public static func write(_ bytes: Data) throws {
        buffer.append(contentsOf: bytes)
        if buffer.count >= flushThreshold { try flush() }
    }

    /// Writes out everything buffered, and with `durably`, when standard output is a regular file, syncs it
    /// to disk (a token is delivered before its authorisation is recorded). Throws a `WriteError` if
    /// standard output did not take it all; what was not written is dropped.
    public static func flush(durably: Bool = false) throws {
        defer { buffer.removeAll(keepingCapacity: true) }
        var done = 0
        while done < buffer.count {
            let written = buffer.withUnsafeBytes { Foundation.write(1, $0.baseAddress! + done, $0.count - done) }
            if written < 0 {
                if errno == EINTR { continue }
                throw WriteError(destination: "standard output", reason: WriteError.reason(errno, standardOutput: true))
            }
            done += written
        }
        var status = stat()
        if durably, fstat(1, &status) == 0, status.st_mode & S_IFMT == S_IFREG, fsync(1) != 0 {
            throw WriteError(destination: "standard output", reason: WriteError.reason(errno))
        }
    }

    /// Prints `value` as one JSON document with sorted keys.
    public static func json<T: Encodable>(_ value: T) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        try write(try encoder.encode(value))
        try write("\n")
    }

    /// Prints rows as a left-aligned table with a header.
    public static func table(_ header: [String], _ rows: [[String]]) throws {
        let widths = header.indices.map { column in
            ([header] + rows).map { $0[column].count }.max() ?? 0
        }
        for row in [header] + rows {
            let cells = row.enumerated().map { column, cell in
                column == row.count - 1 ? cell : cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
            }
            try line(cells.joined(separator: "  "))
        }
    }

    /// Runs `body`, which prints the report of a command already recorded on the ledger, and flushes it.
    /// If standard output cannot take it, the error says that `recorded` happened all the same.
    public static func report(recorded: String, _ body: () throws -> Void) throws {
        do {
            try body()
            try flush()
        } catch let error as WriteError {
            throw VoteError(.output, "\(recorded), but \(error.message)")
        }
    }

    // MARK: Standard error

    /// A progress line on stderr, only when stderr is a terminal.
    public static func progress(_ text: String) {
        guard isatty(2) == 1 else { return }
        standardError("\r\(text)")
    }

    public static func endProgress() {
        guard isatty(2) == 1 else { return }
        standardError("\n")
    }

    /// A line on stderr (explanations that must not mix with machine-readable stdout).
    public static func note(_ text: String) {
        standardError("\(text)\n")
    }

    /// Writes to stderr; a failure there has nowhere to be reported, so it is ignored.
    public static func standardError(_ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Foundation.write(2, $0.baseAddress!, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            bytes = bytes.dropFirst(written)
        }
    }

    public static func percent(_ share: Double) -> String { String(format: "%.1f%%", share * 100) }

    /// A CSV field (RFC 4180): quoted when it holds a comma, quote or line break.
    public static func csvField(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
