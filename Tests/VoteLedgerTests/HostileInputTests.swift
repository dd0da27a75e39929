import Foundation
import Testing

/// Hostile input to every command: each gets a one-line error and its documented exit code, and the
/// ledger directory is byte-identical afterwards (every file but the writer lock's PID note).
@Suite struct HostileInputTests {
    /// Every file of the ledger directory except `lock`.
    static func snapshot(_ election: TestElection) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: election.ledger) where name != "lock" {
            files[name] = FileManager.default.contents(atPath: election.ledger + "/" + name)
        }
        return files
    }

    /// Runs `vote` through /bin/sh so arguments can carry bytes that are not UTF-8 (`$'\xff'` is not
    /// expressible as a Swift String).
    static func runRaw(_ shellArguments: String) throws -> VoteCLI.Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "exec \"$0\" \(shellArguments)", VoteCLI.path]
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        return VoteCLI.finish(process, out, err)
    }

    @Test func everyCommandRejectsHostileInputCleanly() throws {
        let election = try TestElection()
        _ = try election.place(registration: 600, voting: 600)
        try election.ok(["candidate", "register", "--place", "1", "--name", "Alice"])
        let token = try election.authorize("member-1")
        let root = election.root
        let file = election.write("plain.txt", "not a ledger, not a receipt, not JSON\n")
        let garbage = election.write("garbage.tlog-proof", "{\"receipt\": true}\n")
        let missing = root + "/missing"
        let huge = root + "/huge.txt"
        #expect(FileManager.default.createFile(atPath: huge, contents: nil))
        #expect(truncate(huge, 1 << 30) == 0)  // a 1 GiB line of NUL bytes, sparse on disk
        let big = String(repeating: "N", count: 100_000)
        let emptyPassphrase = election.write("empty-passphrase", "\n")
        chmod(emptyPassphrase, 0o600)
        let readablePassphrase = election.write("readable-passphrase", "readable-by-all\n")
        chmod(readablePassphrase, 0o644)
        let l = election.ledger
        let before = try HostileInputTests.snapshot(election)

        // (arguments, expected exit code, text the one-line error must contain)
        let cases: [([String], Int32, String)] = [
            // init
            (["init", "--ledger", file], 1, "already exists"),
            (["init", "--ledger", l], 1, "already exists and is not empty"),
            (["init", "--ledger", root + "/new", "--name", ""], 1, "ledger name must be 1-200 bytes"),
            (["init", "--ledger", root + "/new", "--name", big], 1, "ledger name must be 1-200 bytes"),
            (["init", "--ledger", root + "/new", "--passphrase-file", missing], 1, "cannot read passphrase file"),
            (["init", "--ledger", root + "/new", "--passphrase-file", root], 1, "cannot read passphrase file"),
            (["init", "--ledger", root + "/new", "--passphrase-file", emptyPassphrase], 1, "is empty"),
            (["init", "--ledger", root + "/new", "--passphrase-file", readablePassphrase], 1, "is accessible by others (mode 644); run chmod 600"),
            // place
            (["place", "create", "--name", "", "--registration", "now/+1d", "--voting", "+1d/+2d", "--ledger", l], 1, "must not be empty"),
            (["place", "create", "--name", big, "--registration", "now/+1d", "--voting", "+1d/+2d", "--ledger", l], 1, "at most 200 characters"),
            (["place", "create", "--name", "a\u{202E}b", "--registration", "now/+1d", "--voting", "+1d/+2d", "--ledger", l], 1, "text-direction"),
            (["place", "create", "--name", "a\u{1B}[31mb", "--registration", "now/+1d", "--voting", "+1d/+2d", "--ledger", l], 1, "control"),
            (["place", "create", "--name", "P", "--registration", "2026-12-01T10:00:00/+1d", "--voting", "+1d/+2d", "--ledger", l], 2, "invalid --registration"),
            (["place", "create", "--name", "P", "--registration", "10000-01-01T00:00:00Z/+1d", "--voting", "+1d/+2d", "--ledger", l], 2, "invalid --registration"),
            (["place", "create", "--name", "P", "--registration", "2026-12-01T25:00:00Z/+1d", "--voting", "+1d/+2d", "--ledger", l], 2, "invalid --registration"),
            (["place", "create", "--name", "P", "--registration", "now/+99999999999d", "--voting", "+1d/+2d", "--ledger", l], 2, "invalid --registration"),
            (["place", "create", "--name", "P", "--registration", "now/+1d", "--voting", "+1d/+2d", "--max-candidates", "-1", "--ledger", l], 2, "max-candidates"),
            (["place", "list", "--status", "", "--ledger", l], 2, "--status must be one of"),
            (["place", "show", "0", "--ledger", l], 1, "place 0 does not exist"),
            (["place", "show", "4294967296", "--ledger", l], 2, "4294967296"),
            (["place", "show", "1", "--ledger", file], 1, "not a ledger: it is not a directory"),
            (["place", "close", "--place", "1", "--ledger", l], 1, "only after voting has closed"),
            (["place", "close", "--place", "7", "--ledger", l], 1, "place 7 does not exist"),
            (["place", "create", "--name", "P", "--registration", "now/+1d", "--voting", "+1d/+2d", "--passphrase-file", readablePassphrase, "--ledger", l], 1, "is accessible by others"),
            // candidate
            (["candidate", "register", "--place", "1", "--name", "", "--ledger", l], 1, "must not be empty"),
            (["candidate", "register", "--place", "1", "--name", big, "--ledger", l], 1, "at most 200 characters"),
            (["candidate", "register", "--place", "1", "--name", "x\u{2066}y", "--ledger", l], 1, "text-direction"),
            (["candidate", "register", "--place", "99999999999999999999", "--name", "x", "--ledger", l], 2, "99999999999999999999"),
            (["candidate", "withdraw", "--place", "1", "--candidate", "0", "--ledger", l], 1, "candidate 0 does not exist"),
            (["candidate", "withdraw", "--place", "1", "--candidate", "4294967296", "--ledger", l], 2, "4294967296"),
            (["candidate", "list", "--place", "2", "--ledger", l], 1, "place 2 does not exist"),
            // voter
            (["voter", "authorize", "--place", "1", "--voter", "", "--ledger", l], 1, "voter identity must be"),
            (["voter", "authorize", "--place", "1", "--voter", big, "--ledger", l], 1, "voter identity must be"),
            (["voter", "authorize", "--place", "1", "--voter", "+82\u{202E}1012345678", "--ledger", l], 1, "voter identity must be"),
            (["voter", "authorize", "--place", "1", "--from", missing, "--tokens-out", root + "/t1", "--ledger", l], 1, "no such file"),
            (["voter", "authorize", "--place", "1", "--from", root, "--tokens-out", root + "/t2", "--ledger", l], 1, "not a readable file"),
            (["voter", "authorize", "--place", "1", "--from", file, "--tokens-out", root, "--ledger", l], 1, "cannot create tokens file"),
            (["voter", "authorize", "--place", "1", "--from", huge, "--tokens-out", root + "/t3", "--ledger", l], 1, "1 line was rejected"),
            // cast and status
            (["cast", "--place", "1", "--candidate", "1", "--token", "", "--ledger", l], 1, "the token is malformed"),
            (["cast", "--place", "1", "--candidate", "1", "--token", big, "--ledger", l], 1, "the token is malformed"),
            (["cast", "--place", "1", "--candidate", "1", "--token", token, "--ledger", l], 1, "not open (the place is registration)"),
            (["cast", "--place", "1", "--candidate", "1", "--token", token, "--receipt-out", root, "--ledger", l], 1, "not open"),
            (["cast", "--place", "1", "--from", huge, "--ledger", l], 1, "1 line was rejected"),
            (["cast", "--place", "1", "--from", missing, "--ledger", l], 1, "no such file"),
            (["status", "--place", "1", "--token", "", "--ledger", l], 1, "the token is malformed"),
            (["status", "--place", "1", "--token", token, "--ledger", file], 1, "not a ledger"),
            // read commands
            (["tally", "--place", "1", "--ledger", ""], 1, "not a ledger"),
            (["tally", "--place", "1", "--ledger", missing], 1, "no such directory"),
            (["verify", "--ledger", file], 1, "not a ledger: it is not a directory"),
            (["verify", "--ledger", root], 1, "no segment files"),
            (["log", "--from", "18446744073709551616", "--ledger", l], 2, "18446744073709551616"),
            (["log", "--from", "5", "--to", "2", "--ledger", l], 2, "--to must not be less than --from"),
            (["export", "--place", "1", "--format", "xml", "--ledger", l], 2, "--format must be csv or json"),
            (["export", "--ledger", l], 2, "give either --place P or --events"),
            // audit and head
            (["audit", garbage, "--ledger", l], 1, "not a receipt"),
            (["audit", file, "--ledger", l], 1, "not a receipt"),
            (["audit", root, "--ledger", l], 1, "cannot read the receipt"),
            (["audit", missing, "--ledger", l], 1, "cannot read the receipt"),
            (["audit", "--head", file, "--ledger", l], 1, "not a signed head"),
            (["audit", "--head", root, "--ledger", l], 1, "not a signed head"),
            (["audit", garbage, "--key", "not-a-key", "--ledger", l], 1, "not a receipt"),
            (["head", "--ledger", file], 1, "not a ledger"),
            (["demo", "--ledger", l], 1, "already exists and is not empty"),
        ]
        for (arguments, status, message) in cases {
            let result = try VoteCLI.run(arguments)
            let lines = result.err.split(separator: "\n")
            let shown = arguments.map { $0.count > 40 ? String($0.prefix(20)) + "…" : $0 }
            #expect(result.status == status, "\(shown): exit \(result.status): \(result.err.prefix(300))")
            #expect(lines.last?.hasPrefix("vote: ") == true && lines.last?.contains(message) == true, "\(shown): \(result.err.prefix(300))")
            // Bulk commands list each rejected line first; every other command says one line.
            #expect(arguments.contains("--from") || lines.count == 1, "\(shown): \(result.err.prefix(300))")
            #expect(lines.allSatisfy { $0.count < 500 }, "\(shown): an error line is too long")
        }

        // Arguments that are not UTF-8.
        for raw in [
            "candidate register --place 1 --name \"$(printf 'x\\377y')\" --ledger \(l)",
            "voter authorize --place 1 --voter \"$(printf '\\300\\200')\" --ledger \(l)",
            "tally --place 1 --ledger \"$(printf '\\377')\"",
        ] {
            let result = try HostileInputTests.runRaw(raw)
            #expect(result.status == 2 && result.err.hasPrefix("vote: argument ") && result.err.hasSuffix("is not valid UTF-8\n"), "\(raw): \(result.err)")
        }
        #expect(try HostileInputTests.snapshot(election) == before)

        // Help is not an error.
        let help = try VoteCLI.run(["--help"])
        #expect(help.status == 0 && help.out.contains("USAGE: vote") && help.err.isEmpty)

        // CRLF line endings are not hostile: they work.
        let crlf = election.write("crlf.txt", "member-2\r\nmember-3\r\n")
        try election.ok(["voter", "authorize", "--place", "1", "--from", crlf, "--tokens-out", root + "/crlf-tokens"])
    }
}
