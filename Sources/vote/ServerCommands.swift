import ArgumentParser
import Foundation
import VoteLedger

/// `vote serve` and `vote admin-token` live in `vote-serve`, a program built and installed beside `vote` (building
/// `vote` builds it too, see Package.swift), so the core build without the server (`VOTE_WITHOUT_SERVER=1`) still
/// has a whole `vote` that says what is missing. These commands hand their arguments, `--help` included, to it.
protocol ServerCommand: ParsableCommand {
    var arguments: [String] { get }
}

extension ServerCommand {
    func run() throws { try runServer([Self.configuration.commandName!] + arguments) }
}

/// The directory `vote` runs from (where `vote-serve` is built and installed beside it).
func ownDirectory() throws -> String {
    var path = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let length = readlink("/proc/self/exe", &path, path.count - 1)
    guard length > 0 else {
        throw VoteError(.io, "cannot find vote's own path: \(VoteError.describe(errno: errno))")
    }
    return (String(decoding: path[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self) as NSString)
        .deletingLastPathComponent
}

/// Whether `vote` typed in a shell runs this program: some directory of `$PATH` holds a `vote` that is this file.
func onPath() throws -> Bool {
    let own = try ownDirectory() + "/vote"
    let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
    return path.split(separator: ":").contains { directory in
        let candidate = "\(directory)/vote"
        var mine = stat(), theirs = stat()
        return stat(own, &mine) == 0 && stat(candidate, &theirs) == 0 && mine.st_dev == theirs.st_dev
            && mine.st_ino == theirs.st_ino
    }
}

/// Replaces this process by `vote-serve` (from vote's own directory) with `arguments`; returns only by throwing,
/// with one line that names the program and how to build it.
func runServer(_ arguments: [String]) throws {
    let program = try ownDirectory() + "/vote-serve"
    let argv = ([program] + arguments).map { strdup($0) } + [nil]
    execv(program, argv)
    let reason = VoteError.describe(errno: errno)
    throw VoteError(
        .refused,
        "vote \(arguments[0]) runs \(program), which cannot be started (\(reason)); `swift build` builds it beside vote"
    )
}

/// `vote serve`, run by `vote-serve serve`.
struct Serve: ServerCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the ledger over HTTP (JSON API under /api/v1, OpenAPI at /api/v1/openapi.json).",
        discussion: "It is the program vote-serve, installed beside vote; its options: vote serve --help.",
        helpNames: [])

    @Argument(parsing: .captureForPassthrough, help: .hidden) var arguments: [String] = []
}

/// `vote admin-token`, run by `vote-serve admin-token`.
struct AdminTokenCommand: ServerCommand {
    static let configuration = CommandConfiguration(
        commandName: "admin-token", abstract: "Manage the admin token of vote serve.",
        discussion: "It is the program vote-serve, installed beside vote; its subcommands: vote admin-token --help.",
        helpNames: [])

    @Argument(parsing: .captureForPassthrough, help: .hidden) var arguments: [String] = []
}
