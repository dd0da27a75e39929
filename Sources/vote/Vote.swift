import ArgumentParser
import Election
import Foundation
import Ledger
import VoteCommandLine
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
            Receipt.self, Tally.self, Verify.self, Audit.self, Head.self, Publish.self, Copy.self, Export.self,
            Log.self,
            Demo.self,
            Serve.self, AdminTokenCommand.self, BallotCommand.self, WitnessCommand.self,
        ]
    )

    static func main() { CommandLineProgram.main(Vote.self) }
}

// MARK: - Shared options

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
    func read() throws -> VotingToken { try TokenOptions.read(token, file: tokenFile, what: "token") }

    /// A token-shaped secret (a token, an issuance code) from `file`, or `value` (`-`: standard input); `what`
    /// names it in the error, which does not echo what was read.
    static func read(_ value: String?, file: String?, what: String) throws -> VotingToken {
        let text: String
        if let file {
            text = try TokenOptions.firstLine(open(file, O_RDONLY | O_CLOEXEC), source: "\(what) file \(file)")
        } else if value == "-" {
            text = try TokenOptions.firstLine(0, source: "standard input")
        } else {
            text = value ?? ""
        }
        switch VotingToken.parse(text) {
        case .success(let token): return token
        case .failure(.mistyped):
            throw VoteError(
                .refused, "the \(what) is mistyped: its check character does not match (compare it with the letter)")
        case .failure(.malformed):
            throw VoteError(
                .refused, "the \(what) is malformed (expected 33 letters A-Z and digits 2-7, dashes optional)")
        }
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
