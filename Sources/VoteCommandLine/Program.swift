public import ArgumentParser
import Dispatch
import Election
import Foundation
import Ledger
import VoteLedger

/// What every program of the command line shares: how it starts, and how its failures become one line on
/// stderr and an exit code.
public enum CommandLineProgram {
    /// Parses the command line for `root`, runs the command, and maps every failure to one line on stderr and
    /// the documented exit code: the `main` of `vote` and of `vote-serve` (which `vote serve` runs).
    public static func main(_ root: any ParsableCommand.Type) -> Never {
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
            command = try root.parseAsRoot()
        } catch {
            if root.exitCode(for: error) == .success { help(root.fullMessage(for: error)) }
            fail(root.message(for: error), code: 2)
        }
        do {
            if let writing = command as? any AsyncParsableCommand {
                // A writing command awaits the writer: it runs on the concurrency pool while this thread waits.
                try waitFor {
                    var writing = writing
                    try await writing.run()
                }
            } else {
                try command.run()
            }
            try Output.flush()
        } catch let error as ValidationError {
            fail(error.message, code: 2)
        } catch  where error is WriteError || error is VoteError || error is Violation || error is LedgerError {
            let typed = failure(error)
            fail(typed.message, code: exitCode(typed.reason))
        } catch {
            // `vote --help` and `vote help X` arrive here as the help command's "error".
            switch root.exitCode(for: error) {
            case .success: help(root.fullMessage(for: error))
            case .validationFailure: fail(root.message(for: error), code: 2)
            default: fail(VoteError.describe(error), code: 1)
            }
        }
        Foundation.exit(0)
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
        case .violation, .notFound, .passphraseRequired, .refused, .output, .io, .noSpace: return 1
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

/// Runs `body` (a writing command, the server) to completion from a synchronous command: the commands run on
/// the main thread, which waits here while `body` runs on the concurrency pool (so nothing else touches
/// `Output` meanwhile).
public func waitFor<T>(_ body: sending @escaping () async throws -> T) throws -> T {
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
