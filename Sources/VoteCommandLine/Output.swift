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

    /// Prints rows as a left-aligned table with a header, its columns aligned on a terminal by display width.
    public static func table(_ header: [String], _ rows: [[String]]) throws {
        let widths = header.indices.map { column in
            ([header] + rows).map { displayWidth($0[column]) }.max() ?? 0
        }
        for row in [header] + rows {
            let cells = row.enumerated().map { column, cell in
                column == row.count - 1 ? cell : padded(cell, to: widths[column])
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

    /// `part` of `whole` as a percentage with one decimal ("31.3%"), rounded half away from zero on the exact
    /// fraction: the README's rule, which the web pages apply too. Integer arithmetic, so 5 of 16 (31.25) is 31.3
    /// and no binary fraction decides a tie.
    public static func percent(_ part: UInt64, of whole: UInt64) -> String {
        guard whole > 0 else { return "0.0%" }
        let (twice, overflow) = part.multipliedReportingOverflow(by: 2000)
        let tenths =
            overflow
            ? UInt64((Double(part) * 1000 / Double(whole)).rounded(.toNearestOrAwayFromZero))
            : (twice + whole) / (2 * whole)
        return "\(tenths / 10).\(tenths % 10)%"
    }

    /// `count` and the noun in the number it takes: "1 line", "2 lines" (`plural` when not `singular` + "s").
    public static func count(_ count: some BinaryInteger, _ singular: String, _ plural: String? = nil) -> String {
        "\(count) \(count == 1 ? singular : plural ?? singular + "s")"
    }

    // MARK: Display width

    /// Columns `text` takes on a terminal: 2 for a character whose first scalar is East Asian Wide or Fullwidth
    /// (Hangul, CJK ideographs, kana, fullwidth forms, most emoji; Unicode's EastAsianWidth.txt, W and F), else 1.
    /// One per character (grapheme), so combining marks and the vowel and final jamo of a decomposed Hangul
    /// syllable add nothing.
    public static func displayWidth(_ text: String) -> Int {
        text.reduce(0) { width, character in
            width + (character.unicodeScalars.first.map { isWide($0.value) } == true ? 2 : 1)
        }
    }

    /// `text` followed by spaces up to `width` columns.
    public static func padded(_ text: String, to width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - displayWidth(text)))
    }

    /// The East Asian Wide and Fullwidth ranges (Unicode 16 EastAsianWidth.txt, W and F, merged where adjacent).
    private static let wideRanges: [ClosedRange<UInt32>] = [
        0x1100...0x115F, 0x231A...0x231B, 0x2329...0x232A, 0x23E9...0x23EC, 0x23F0...0x23F0, 0x23F3...0x23F3,
        0x25FD...0x25FE, 0x2614...0x2615, 0x2648...0x2653, 0x267F...0x267F, 0x2693...0x2693, 0x26A1...0x26A1,
        0x26AA...0x26AB, 0x26BD...0x26BE, 0x26C4...0x26C5, 0x26CE...0x26CE, 0x26D4...0x26D4, 0x26EA...0x26EA,
        0x26F2...0x26F3, 0x26F5...0x26F5, 0x26FA...0x26FA, 0x26FD...0x26FD, 0x2705...0x2705, 0x270A...0x270B,
        0x2728...0x2728, 0x274C...0x274C, 0x274E...0x274E, 0x2753...0x2755, 0x2757...0x2757, 0x2795...0x2797,
        0x27B0...0x27B0, 0x27BF...0x27BF, 0x2B1B...0x2B1C, 0x2B50...0x2B50, 0x2B55...0x2B55, 0x2E80...0x303E,
        0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF, 0xA960...0xA97F, 0xAC00...0xD7A3,
        0xF900...0xFAFF, 0xFE10...0xFE19, 0xFE30...0xFE6F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x16FE0...0x18CFF,
        0x1B000...0x1B2FF, 0x1F004...0x1F004, 0x1F0CF...0x1F0CF, 0x1F18E...0x1F18E, 0x1F191...0x1F19A,
        0x1F200...0x1F251, 0x1F260...0x1F265, 0x1F300...0x1F320, 0x1F32D...0x1F335, 0x1F337...0x1F37C,
        0x1F37E...0x1F393, 0x1F3A0...0x1F3CA, 0x1F3CF...0x1F3D3, 0x1F3E0...0x1F3F0, 0x1F3F4...0x1F3F4,
        0x1F3F8...0x1F43E, 0x1F440...0x1F440, 0x1F442...0x1F4FC, 0x1F4FF...0x1F53D, 0x1F54B...0x1F54E,
        0x1F550...0x1F567, 0x1F57A...0x1F57A, 0x1F595...0x1F596, 0x1F5A4...0x1F5A4, 0x1F5FB...0x1F64F,
        0x1F680...0x1F6C5, 0x1F6CC...0x1F6CC, 0x1F6D0...0x1F6D2, 0x1F6D5...0x1F6D7, 0x1F6DC...0x1F6DF,
        0x1F6EB...0x1F6EC, 0x1F6F4...0x1F6FC, 0x1F7E0...0x1F7EB, 0x1F7F0...0x1F7F0, 0x1F90C...0x1F93A,
        0x1F93C...0x1F945, 0x1F947...0x1F9FF, 0x1FA70...0x1FAFF, 0x20000...0x2FFFD, 0x30000...0x3FFFD,
    ]

    private static func isWide(_ scalar: UInt32) -> Bool {
        guard scalar >= 0x1100 else { return false }
        return wideRanges.contains { $0.contains(scalar) }
    }

    /// A CSV field (RFC 4180) that a spreadsheet shows as text: quoted when it holds a comma, quote or line break,
    /// and, when it starts with a character that makes a spreadsheet read it as a formula (`=`, `+`, `-`, `@`,
    /// tab or carriage return), quoted with a single quote before that character (OWASP's advice on CSV
    /// injection), so a candidate named `=HYPERLINK(…)` is shown, not run. `vote tally --csv` and
    /// `vote export --format csv` write every name through it.
    public static func csvField(_ text: String) -> String {
        let formula = text.unicodeScalars.first.map { "=+-@\t\r".unicodeScalars.contains($0) } ?? false
        return VoterList.field(text, prefix: formula ? "'" : "")
    }
}
