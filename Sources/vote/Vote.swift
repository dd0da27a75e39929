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
            Receipt.self, Tally.self, Verify.self, Audit.self, Head.self, Export.self, Log.self, Demo.self,
        ] + serverCommands
    )

    #if VOTE_SERVER
        static let serverCommands: [any ParsableCommand.Type] = [Serve.self, AdminTokenCommand.self]
    #else
        /// None in a build without the server (`VOTE_WITHOUT_SERVER=1`, see Package.swift).
        static let serverCommands: [any ParsableCommand.Type] = []
    #endif

    /// Parses, runs, and maps every failure to one line on stderr and the documented exit code.
    static func main() {
        // A closed pipe is a write error to report (EPIPE), not a silent death by SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        // A closed standard descriptor would be reused by the next open() (a ledger file would receive what
        // is printed): hold each slot with /dev/null, read-only for stdout so that printing fails loudly.
        for (descriptor, flags) in [(Int32(0), O_RDONLY), (1, O_RDONLY), (2, O_WRONLY)]
        where fcntl(descriptor, F_GETFD) < 0 {
            guard open("/dev/null", flags) == descriptor else { Foundation.exit(1) }
        }
        // Swift repairs invalid UTF-8 in argv with U+FFFD; refuse it instead of storing altered names.
        for index in 1..<Int(CommandLine.argc) {
            guard let raw = CommandLine.unsafeArgv[index] else { continue }
            let bytes = UnsafeBufferPointer(
                start: UnsafeRawPointer(raw).assumingMemoryBound(to: UInt8.self), count: strlen(raw))
            if String(validating: bytes, as: UTF8.self) == nil { fail("argument \(index) is not valid UTF-8", code: 2) }
        }
        var command: any ParsableCommand
        do {
            command = try parseAsRoot()
        } catch {
            if exitCode(for: error) == .success { help(fullMessage(for: error)) }
            fail(message(for: error), code: 2)
        }
        do {
            try command.run()
            try Output.flush()
        } catch let error as ValidationError {
            fail(error.message, code: 2)
        } catch  where error is WriteError || error is VoteError || error is Violation || error is LedgerError {
            let typed = failure(error)
            fail(typed.message, code: exitCode(typed.reason))
        } catch {
            // `vote --help` and `vote help X` arrive here as the help command's "error".
            switch exitCode(for: error) {
            case .success: help(fullMessage(for: error))
            case .validationFailure: fail(message(for: error), code: 2)
            default: fail(VoteError.describe(error), code: 1)
            }
        }
    }

    // MARK: Errors to exit codes

    /// Any error of a command as the service's typed error; an output failure of the CLI is `.output`.
    static func failure(_ error: any Error) -> VoteError {
        if let error = error as? WriteError { return VoteError(.output, error.message) }
        return VoteError(error)
    }

    /// The documented exit code of each kind of failure; the only place that decides one.
    /// 1 rejected by a rule or not found, 2 usage error, 3 integrity failure, 4 ledger busy.
    static func exitCode(_ reason: VoteError.Reason) -> Int32 {
        switch reason {
        case .violation, .notFound, .passphraseRequired, .refused, .output, .io: return 1
        case .usage: return 2
        case .integrity: return 3
        case .busy, .overloaded: return 4
        }
    }

    /// Prints help text and exits 0, or 1 if it cannot be written.
    static func help(_ text: String) -> Never {
        do {
            try Output.line(text)
            try Output.flush()
        } catch let error as WriteError { fail(error.message, code: 1) } catch { fail("\(error)", code: 1) }
        Foundation.exit(0)
    }

    static func fail(_ message: String, code: Int32) -> Never {
        try? Output.flush()  // what stdout already holds comes first
        let line = message.split(whereSeparator: \.isNewline).joined(separator: "; ")
        Output.standardError("vote: \(line)\n")
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

    /// The service's configuration for this ledger and passphrase (waits up to 10 s for another writer).
    func configuration(_ passphrase: PassphraseOptions) throws -> LedgerConfiguration {
        LedgerConfiguration(.file(path: path), passphrase: try passphrase.source())
    }

    /// Opens the ledger for writing.
    func openForWriting(_ passphrase: PassphraseOptions) throws -> ElectionLedger {
        try VoteLedgerService.openLedger(configuration(passphrase))
    }

    /// Opens the ledger as the writer actor (bulk commands).
    func openWriter(_ passphrase: PassphraseOptions) throws -> LedgerWriter {
        try VoteLedgerService.openWriter(configuration(passphrase))
    }

    /// Opens the file store for reading: the one place a reader, verifier or exporter gets a ledger by path.
    func reader() throws -> LedgerReader { try LedgerReader(path: path) }

    /// Replays the ledger for reading.
    func view() throws -> ElectionView { try ElectionView.replay(try reader()) }
}

/// Where the authority key's passphrase comes from: a file, $VOTE_PASSPHRASE, or the terminal with echo
/// off. Never argv.
struct PassphraseOptions: ParsableArguments {
    /// Reads a passphrase from the terminal without echoing it.
    static func prompt(_ text: String) throws -> [UInt8] {
        var saved = termios()
        guard tcgetattr(0, &saved) == 0 else {
            throw VoteError(.refused, "cannot read a passphrase: standard input is not a terminal")
        }
        var quiet = saved
        quiet.c_lflag &= ~tcflag_t(ECHO)
        // Echo off (discarding typeahead) before the prompt appears, so an answer typed after seeing the
        // prompt is never flushed away.
        tcsetattr(0, TCSAFLUSH, &quiet)
        Output.standardError(text)
        defer {
            tcsetattr(0, TCSAFLUSH, &saved)
            Output.standardError("\n")
        }
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while Foundation.read(0, &byte, 1) == 1, byte != 10 { bytes.append(byte) }
        if bytes.last == 13 { bytes.removeLast() }
        guard !bytes.isEmpty else { throw VoteError(.refused, "no passphrase given") }
        return bytes
    }

    @Option(help: "File holding the authority key's passphrase (else $VOTE_PASSPHRASE; else the key is unencrypted).")
    var passphraseFile: String?

    /// The passphrase given by file or variable; if there is none, the terminal (echo off) is asked if the
    /// key turns out to be encrypted.
    func source() throws -> LedgerConfiguration.Passphrase {
        if let given = try read() { return .given(given) }
        guard isatty(0) == 1 else { return .none }
        return .ask { try PassphraseOptions.prompt("Passphrase for the authority key: ") }
    }

    /// Runs `body` with the passphrase (see `source`).
    func using<T>(_ body: ([UInt8]?) throws -> T) throws -> T {
        try source().using(body)
    }

    /// The passphrase from `--passphrase-file` or $VOTE_PASSPHRASE, or `nil` if neither is given. An empty
    /// one is refused rather than taken to mean "no encryption", and so is a file others can read (as a
    /// key file is).
    func read() throws -> [UInt8]? {
        if let passphraseFile {
            var info = stat()
            guard let handle = FileHandle(forReadingAtPath: passphraseFile),
                fstat(handle.fileDescriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG,
                let data = try? handle.readToEnd() ?? Data()
            else { throw VoteError(.refused, "cannot read passphrase file \(passphraseFile)") }
            let mode = info.st_mode & 0o777
            guard mode & 0o077 == 0 else {
                throw VoteError(
                    .refused,
                    "passphrase file \(passphraseFile) is accessible by others (mode \(String(mode, radix: 8))); run chmod 600 on it"
                )
            }
            var bytes = Array(data)
            while let last = bytes.last, last == 10 || last == 13 { bytes.removeLast() }
            guard !bytes.isEmpty else { throw VoteError(.refused, "passphrase file \(passphraseFile) is empty") }
            return bytes
        }
        if let value = ProcessInfo.processInfo.environment["VOTE_PASSPHRASE"] {
            guard !value.isEmpty else {
                throw VoteError(
                    .refused, "VOTE_PASSPHRASE is set but empty; unset it for an unencrypted key, or give a passphrase")
            }
            return Array(value.utf8)
        }
        return nil
    }
}

/// Where a voter's token comes from: a file, standard input (`--token -`), or the argument itself, which
/// every local user can read in the process table while the command runs.
struct TokenOptions: ParsableArguments {
    @Option(
        help:
            "The voter's token, or - to read it from standard input. A value given here is visible to other local users (ps); prefer --token-file or -."
    )
    var token: String?
    @Option(help: "File holding the voter's token (its first line).") var tokenFile: String?

    /// Whether a token was given at all.
    var given: Bool { token != nil || tokenFile != nil }

    /// The `validate()` of a command that needs a token.
    func requireGiven() throws {
        guard given else { throw ValidationError("give the token with --token-file FILE or --token -") }
    }

    func validate() throws {
        if token != nil && tokenFile != nil { throw ValidationError("give the token once: --token or --token-file") }
    }

    /// The token, or an error that does not echo what was read.
    func read() throws -> VotingToken {
        let text: String
        if let tokenFile {
            text = try TokenOptions.firstLine(open(tokenFile, O_RDONLY | O_CLOEXEC), source: "token file \(tokenFile)")
        } else if token == "-" {
            text = try TokenOptions.firstLine(0, source: "standard input")
        } else {
            text = token ?? ""
        }
        guard let token = VotingToken(typed: text) else { throw Cast.malformedToken }
        return token
    }

    /// The first line of `descriptor` (at most 1 KiB is read; a token is 39 characters), which is closed
    /// unless it is standard input.
    private static func firstLine(_ descriptor: Int32, source: String) throws -> String {
        guard descriptor >= 0 else {
            throw VoteError(.refused, "cannot read \(source): \(VoteError.describe(errno: errno))")
        }
        defer { if descriptor != 0 { close(descriptor) } }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1024)
        while bytes.count < 1024, !bytes.contains(10) {
            let count = Foundation.read(descriptor, &chunk, 1024 - bytes.count)
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else {
                throw VoteError(.refused, "cannot read \(source): \(VoteError.describe(errno: errno))")
            }
            if count == 0 { break }
            bytes += chunk[..<count]
        }
        let line = bytes.split(separator: 10, maxSplits: 1, omittingEmptySubsequences: false).first ?? []
        return String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// `--json` on read commands.
struct JSONOption: ParsableArguments {
    @Flag(help: "Print JSON (stable keys, see README).")
    var json = false
}

// MARK: - Output

/// Runs `body`, which uses the writer actor, to completion from a synchronous command: the commands run on
/// the main thread, which waits here while `body` runs on the concurrency pool (so nothing else touches
/// `Output` meanwhile).
func waitFor<T>(_ body: sending @escaping () async throws -> T) throws -> T {
    let box = ResultBox<T>()
    let done = DispatchSemaphore(value: 0)
    Task {
        do { box.result = .success(try await body()) } catch { box.result = .failure(error) }
        done.signal()
    }
    done.wait()
    return try box.result!.get()
}

/// The outcome of `waitFor`'s task, handed to the waiting thread (the semaphore orders the accesses).
private final class ResultBox<T>: @unchecked Sendable {
    var result: Result<T, any Error>?
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
