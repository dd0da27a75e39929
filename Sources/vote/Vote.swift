import ArgumentParser
import Election
import Foundation
import Ledger
import VoteLedger

/// `vote`: run an election on a VoteLedger ledger, cast and check votes, verify the whole chain.
@main
struct Vote: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vote",
        abstract: "Run elections on a signed, hash-chained ledger that anyone can verify.",
        discussion: """
            Exit codes: 0 success, 1 rejected by a rule or not found, 2 usage error, 3 integrity failure, \
            4 ledger busy. The ledger directory is --ledger, else $VOTE_LEDGER, else ./vote-ledger.
            """,
        subcommands: [
            Init.self, PlaceCommand.self, CandidateCommand.self, VoterCommand.self, Cast.self, Status.self,
            Tally.self, Verify.self, Audit.self, Head.self, Export.self, Log.self, Demo.self,
        ]
    )

    /// Parses, runs, and maps every failure to one line on stderr and the documented exit code.
    static func main() {
        // Swift repairs invalid UTF-8 in argv with U+FFFD; refuse it instead of storing altered names.
        for index in 1..<Int(CommandLine.argc) {
            guard let raw = CommandLine.unsafeArgv[index] else { continue }
            let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(raw).assumingMemoryBound(to: UInt8.self), count: strlen(raw))
            if String(validating: bytes, as: UTF8.self) == nil { fail("argument \(index) is not valid UTF-8", code: 2) }
        }
        var command: any ParsableCommand
        do {
            command = try parseAsRoot()
        } catch {
            if exitCode(for: error) == .success {
                print(fullMessage(for: error))
                Foundation.exit(0)
            }
            fail(message(for: error), code: 2)
        }
        do {
            try command.run()
        } catch let error as VoteError {
            fail(error.message, code: error.exitCode)
        } catch let violation as Violation {
            fail(violation.description, code: 1)
        } catch let error as LedgerError {
            if case .busy = error { fail(error.description, code: 4) }
            if case .damaged = error { fail("integrity failure: \(error)", code: 3) }
            fail(error.description, code: 1)
        } catch let error as ValidationError {
            fail(error.message, code: 2)
        } catch {
            // `vote --help` and `vote help X` arrive here as the help command's "error".
            switch exitCode(for: error) {
            case .success:
                print(fullMessage(for: error))
                Foundation.exit(0)
            case .validationFailure: fail(message(for: error), code: 2)
            default: fail("\(error)", code: 1)
            }
        }
    }

    static func fail(_ message: String, code: Int32) -> Never {
        fflush(nil)  // what stdout already holds comes first
        let line = message.split(whereSeparator: \.isNewline).joined(separator: "; ")
        FileHandle.standardError.write(Data("vote: \(line)\n".utf8))
        Foundation.exit(code)
    }
}

// MARK: - Shared options

/// `--ledger DIR`, defaulting to $VOTE_LEDGER, else ./vote-ledger.
struct LedgerOptions: ParsableArguments {
    @Option(help: "Ledger directory (default: $VOTE_LEDGER, else ./vote-ledger).")
    var ledger: String?

    var path: String {
        ledger ?? ProcessInfo.processInfo.environment["VOTE_LEDGER"] ?? "./vote-ledger"
    }

    /// Opens the ledger for writing (waits up to 10 s for another writer). An encrypted key with no
    /// passphrase file or variable is asked for on the terminal, with echo off.
    func openForWriting(_ passphrase: PassphraseOptions) throws -> ElectionLedger {
        let given = try passphrase.read()
        do {
            return try ElectionLedger.open(at: path, passphrase: given)
        } catch let error as VoteError where given == nil && error.message.hasSuffix("needs its passphrase") && isatty(0) == 1 {
            return try ElectionLedger.open(at: path, passphrase: try PassphraseOptions.prompt("Passphrase for the authority key: "))
        }
    }

    /// Replays the ledger for reading.
    func view() throws -> ElectionView { try ElectionView.replay(path: path) }
}

/// Where the authority key's passphrase comes from: a file, $VOTE_PASSPHRASE, or the terminal with echo
/// off. Never argv.
struct PassphraseOptions: ParsableArguments {
    /// Reads a passphrase from the terminal without echoing it.
    static func prompt(_ text: String) throws -> [UInt8] {
        var saved = termios()
        guard tcgetattr(0, &saved) == 0 else { throw VoteError(.rejected, "cannot read a passphrase: standard input is not a terminal") }
        var quiet = saved
        quiet.c_lflag &= ~tcflag_t(ECHO)
        // Echo off (discarding typeahead) before the prompt appears, so an answer typed after seeing the
        // prompt is never flushed away.
        tcsetattr(0, TCSAFLUSH, &quiet)
        FileHandle.standardError.write(Data(text.utf8))
        defer {
            tcsetattr(0, TCSAFLUSH, &saved)
            FileHandle.standardError.write(Data("\n".utf8))
        }
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while Foundation.read(0, &byte, 1) == 1, byte != 10 { bytes.append(byte) }
        if bytes.last == 13 { bytes.removeLast() }
        guard !bytes.isEmpty else { throw VoteError(.rejected, "no passphrase given") }
        return bytes
    }

    @Option(help: "File holding the authority key's passphrase (else $VOTE_PASSPHRASE; else the key is unencrypted).")
    var passphraseFile: String?

    /// The passphrase from `--passphrase-file` or $VOTE_PASSPHRASE, or `nil` if neither is given. An empty
    /// one is refused rather than taken to mean "no encryption", and so is a file others can read (as a
    /// key file is).
    func read() throws -> [UInt8]? {
        if let passphraseFile {
            var info = stat()
            guard let handle = FileHandle(forReadingAtPath: passphraseFile),
                fstat(handle.fileDescriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG,
                let data = try? handle.readToEnd() ?? Data()
            else { throw VoteError(.rejected, "cannot read passphrase file \(passphraseFile)") }
            let mode = info.st_mode & 0o777
            guard mode & 0o077 == 0 else {
                throw VoteError(
                    .rejected,
                    "passphrase file \(passphraseFile) is accessible by others (mode \(String(mode, radix: 8))); run chmod 600 on it")
            }
            var bytes = Array(data)
            while let last = bytes.last, last == 10 || last == 13 { bytes.removeLast() }
            guard !bytes.isEmpty else { throw VoteError(.rejected, "passphrase file \(passphraseFile) is empty") }
            return bytes
        }
        if let value = ProcessInfo.processInfo.environment["VOTE_PASSPHRASE"] {
            guard !value.isEmpty else {
                throw VoteError(.rejected, "VOTE_PASSPHRASE is set but empty; unset it for an unencrypted key, or give a passphrase")
            }
            return Array(value.utf8)
        }
        return nil
    }
}

/// `--json` on read commands.
struct JSONOption: ParsableArguments {
    @Flag(help: "Print JSON (stable keys, see README).")
    var json = false
}

// MARK: - Output

extension String {
    /// Whether a line of an input file holds only whitespace (skipped, not an error). One printable
    /// ASCII byte settles it without Unicode property lookups, which bulk files would pay per line.
    var isBlank: Bool {
        if utf8.contains(where: { $0 > 0x20 && $0 < 0x7F }) { return false }
        return allSatisfy(\.isWhitespace)
    }
}

enum Output {
    /// Prints `value` as one JSON document with sorted keys.
    static func json<T: Encodable>(_ value: T) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        print(String(decoding: try encoder.encode(value), as: UTF8.self))
    }

    /// Prints rows as a left-aligned table with a header.
    static func table(_ header: [String], _ rows: [[String]]) {
        let widths = header.indices.map { column in
            ([header] + rows).map { $0[column].count }.max() ?? 0
        }
        for row in [header] + rows {
            let cells = row.enumerated().map { column, cell in
                column == row.count - 1 ? cell : cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
            }
            print(cells.joined(separator: "  "))
        }
    }

    /// A progress line on stderr, only when stderr is a terminal.
    static func progress(_ text: String) {
        guard isatty(2) == 1 else { return }
        FileHandle.standardError.write(Data("\r\(text)".utf8))
    }

    static func endProgress() {
        guard isatty(2) == 1 else { return }
        FileHandle.standardError.write(Data("\n".utf8))
    }

    /// A line on stderr (explanations that must not mix with machine-readable stdout).
    static func note(_ text: String) {
        FileHandle.standardError.write(Data("\(text)\n".utf8))
    }

    static func percent(_ share: Double) -> String { String(format: "%.1f%%", share * 100) }

    /// A CSV field (RFC 4180): quoted when it holds a comma, quote or line break.
    static func csvField(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

/// Parses a time window option or fails as a usage error.
func parseWindow(_ text: String, option: String, now: Int64) throws -> TimeWindow {
    guard let (start, end) = Timestamp.parseWindow(text, now: now) else {
        throw VoteError(
            .usage,
            "invalid \(option): expected START/END as ISO 8601 times with an offset (2026-12-01T09:00:00+09:00/2026-12-05T18:00:00+09:00) or relative (+10m/+2h)"
        )
    }
    return TimeWindow(start: start, end: end)
}
