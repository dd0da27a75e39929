import Foundation
import Testing

/// Hostile input to every command: each gets a one-line error and its documented exit code, and the
/// ledger directory is byte-identical afterwards (every file but the writer lock's PID note).
@Suite struct HostileInputTests {
    /// Every file of the ledger directory except `lock`, and of its key directory.
    static func snapshot(_ election: TestElection) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: election.ledger) where name != "lock" {
            files[name] = FileManager.default.contents(atPath: election.ledger + "/" + name)
        }
        for name in try FileManager.default.contentsOfDirectory(atPath: election.keys) {
            files["keys/" + name] = FileManager.default.contents(atPath: election.keys + "/" + name)
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
        let link = root + "/link"
        #expect(symlink(root + "/link-target", link) == 0)
        let fifo = root + "/fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        let tokenFile = election.write("token.txt", token + "\n")
        let before = try HostileInputTests.snapshot(election)

        // (arguments, expected exit code, text the one-line error must contain)
        let cases: [([String], Int32, String)] = [
            // init
            (["init", "--ledger", file, "--no-passphrase"], 1, "already exists"),
            (["init", "--ledger", l, "--no-passphrase"], 1, "already exists and is not empty"),
            (
                ["init", "--ledger", root + "/new", "--no-passphrase", "--name", ""], 1,
                "ledger name must be 1-200 bytes"
            ),
            (
                ["init", "--ledger", root + "/new", "--no-passphrase", "--name", big], 1,
                "ledger name must be 1-200 bytes"
            ),
            (["init", "--ledger", root + "/new", "--passphrase-file", missing], 1, "cannot read passphrase file"),
            (["init", "--ledger", root + "/new", "--passphrase-file", root], 1, "cannot read passphrase file"),
            (["init", "--ledger", root + "/new", "--passphrase-file", emptyPassphrase], 1, "is empty"),
            (
                ["init", "--ledger", root + "/new", "--passphrase-file", readablePassphrase], 1,
                "is accessible by others (mode 644); run chmod 600"
            ),
            // place
            (
                ["place", "create", "--name", "", "--registration", "now/+1d", "--voting", "+1d/+2d", "--ledger", l], 1,
                "must not be empty"
            ),
            (
                ["place", "create", "--name", big, "--registration", "now/+1d", "--voting", "+1d/+2d", "--ledger", l],
                1, "at most 200 code points"
            ),
            (
                [
                    "place", "create", "--name", "a\u{202E}b", "--registration", "now/+1d", "--voting", "+1d/+2d",
                    "--ledger", l,
                ], 1, "text-direction"
            ),
            (
                [
                    "place", "create", "--name", "a\u{1B}[31mb", "--registration", "now/+1d", "--voting", "+1d/+2d",
                    "--ledger", l,
                ], 1, "control"
            ),
            (
                [
                    "place", "create", "--name", "P", "--registration", "2026-12-01T10:00:00/+1d", "--voting",
                    "+1d/+2d", "--ledger", l,
                ], 2, "invalid --registration"
            ),
            (
                [
                    "place", "create", "--name", "P", "--registration", "10000-01-01T00:00:00Z/+1d", "--voting",
                    "+1d/+2d", "--ledger", l,
                ], 2, "invalid --registration"
            ),
            (
                [
                    "place", "create", "--name", "P", "--registration", "2026-12-01T25:00:00Z/+1d", "--voting",
                    "+1d/+2d", "--ledger", l,
                ], 2, "invalid --registration"
            ),
            (
                [
                    "place", "create", "--name", "P", "--registration", "now/+99999999999d", "--voting", "+1d/+2d",
                    "--ledger", l,
                ], 2, "invalid --registration"
            ),
            (
                [
                    "place", "create", "--name", "P", "--registration", "now/+1d", "--voting", "+1d/+2d",
                    "--max-candidates", "-1", "--ledger", l,
                ], 2, "max-candidates"
            ),
            (["place", "list", "--status", "", "--ledger", l], 2, "--status must be one of"),
            (["place", "show", "0", "--ledger", l], 1, "place 0 does not exist"),
            (["place", "show", "4294967296", "--ledger", l], 2, "4294967296"),
            (["place", "show", "1", "--ledger", file], 1, "not a ledger: it is not a directory"),
            (["place", "close", "--place", "1", "--ledger", l], 1, "only after voting has closed"),
            (["place", "close", "--place", "7", "--ledger", l], 1, "place 7 does not exist"),
            (
                [
                    "place", "create", "--name", "P", "--registration", "now/+1d", "--voting", "+1d/+2d",
                    "--passphrase-file", readablePassphrase, "--ledger", l,
                ], 1, "is accessible by others"
            ),
            // candidate
            (["candidate", "register", "--place", "1", "--name", "", "--ledger", l], 1, "must not be empty"),
            (["candidate", "register", "--place", "1", "--name", big, "--ledger", l], 1, "at most 200 code points"),
            (["candidate", "register", "--place", "1", "--name", "x\u{2066}y", "--ledger", l], 1, "text-direction"),
            (
                ["candidate", "register", "--place", "99999999999999999999", "--name", "x", "--ledger", l], 2,
                "99999999999999999999"
            ),
            (
                ["candidate", "withdraw", "--place", "1", "--candidate", "0", "--ledger", l], 1,
                "candidate 0 does not exist"
            ),
            (["candidate", "withdraw", "--place", "1", "--candidate", "4294967296", "--ledger", l], 2, "4294967296"),
            (["candidate", "list", "--place", "2", "--ledger", l], 1, "place 2 does not exist"),
            // voter
            (["voter", "authorize", "--place", "1", "--voter", "", "--ledger", l], 1, "voter identity must be"),
            (["voter", "authorize", "--place", "1", "--voter", big, "--ledger", l], 1, "voter identity must be"),
            (
                ["voter", "authorize", "--place", "1", "--voter", "+82\u{202E}1012345678", "--ledger", l], 1,
                "voter identity must be"
            ),
            (
                ["voter", "authorize", "--place", "1", "--from", missing, "--tokens-out", root + "/t1", "--ledger", l],
                1, "no such file"
            ),
            (
                ["voter", "authorize", "--place", "1", "--from", root, "--tokens-out", root + "/t2", "--ledger", l], 1,
                "not a readable file"
            ),
            (
                ["voter", "authorize", "--place", "1", "--from", file, "--tokens-out", root, "--ledger", l], 1,
                "cannot create tokens file"
            ),
            (
                ["voter", "authorize", "--place", "1", "--from", huge, "--tokens-out", root + "/t3", "--ledger", l], 1,
                "no voter was authorised: the one line of"
            ),
            // cast and status
            (["cast", "--place", "1", "--candidate", "1", "--token", "", "--ledger", l], 1, "the token is malformed"),
            (["cast", "--place", "1", "--candidate", "1", "--token", big, "--ledger", l], 1, "the token is malformed"),
            (
                ["cast", "--place", "1", "--candidate", "1", "--token", token, "--ledger", l], 1,
                "not open (the place is registration)"
            ),
            // Output paths are claimed before the vote is decided (here it would be refused anyway).
            (
                ["cast", "--place", "1", "--candidate", "1", "--token", token, "--receipt-out", root, "--ledger", l], 1,
                "cannot create receipt \(root): it already exists"
            ),
            (
                ["cast", "--place", "1", "--candidate", "1", "--token", token, "--receipt-out", file, "--ledger", l], 1,
                "it already exists"
            ),
            (
                ["cast", "--place", "1", "--candidate", "1", "--token", token, "--receipt-out", link, "--ledger", l], 1,
                "it already exists"
            ),
            (
                ["cast", "--place", "1", "--candidate", "1", "--token", token, "--receipt-out", fifo, "--ledger", l], 1,
                "it already exists"
            ),
            (
                [
                    "cast", "--place", "1", "--candidate", "1", "--token", token, "--receipt-out", missing + "/r",
                    "--ledger", l,
                ], 1, "its directory does not exist"
            ),
            (
                [
                    "cast", "--place", "1", "--candidate", "1", "--token", token, "--receipt-out", root + "/claimed",
                    "--ledger", l,
                ], 1, "not open"
            ),
            (
                ["cast", "--place", "1", "--from", file, "--receipts-out", file, "--ledger", l], 1,
                "exists and is not a directory; nothing was cast"
            ),
            (
                ["cast", "--place", "1", "--from", file, "--receipts-out", missing + "/r", "--ledger", l], 1,
                "its parent directory does not exist"
            ),
            // Token input.
            (
                ["cast", "--place", "1", "--candidate", "1", "--ledger", l], 2,
                "give either --candidate C (or --answers A) with --token-file FILE"
            ),
            (
                ["cast", "--place", "1", "--candidate", "1", "--token-file", missing, "--ledger", l], 1,
                "cannot read token file \(missing): no such file"
            ),
            (
                ["cast", "--place", "1", "--candidate", "1", "--token-file", file, "--ledger", l], 1,
                "the token is malformed"
            ),
            (
                ["status", "--place", "1", "--token", token, "--token-file", tokenFile, "--ledger", l], 2,
                "give the token once"
            ),
            (
                ["status", "--place", "1", "--token-file", root, "--ledger", l], 1,
                "cannot read token file \(root): is a directory"
            ),
            (["status", "--place", "1", "--ledger", l], 2, "give the token with --token-file FILE or --token -"),
            // receipt
            (
                ["receipt", "--place", "1", "--token-file", tokenFile, "--ledger", l], 1,
                "this token has not voted in place 1"
            ),
            (
                ["receipt", "--place", "2", "--token-file", tokenFile, "--ledger", l], 1,
                "not authorised to vote in place 2"
            ),
            (
                ["receipt", "--place", "1", "--token-file", tokenFile, "--out", file, "--ledger", l], 1,
                "cannot create receipt"
            ),
            (
                ["receipt", "--place", "1", "--token-file", tokenFile, "--out", root + "/not-voted", "--ledger", l], 1,
                "has not voted"
            ),
            (["receipt", "--place", "1", "--token", "", "--ledger", l], 1, "the token is malformed"),
            (["receipt", "--place", "1", "--token-file", tokenFile, "--ledger", file], 1, "not a ledger"),
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
            #expect(
                lines.last?.hasPrefix("vote: ") == true && lines.last?.contains(message) == true,
                "\(shown): \(result.err.prefix(300))")
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
            #expect(
                result.status == 2 && result.err.hasPrefix("vote: argument ")
                    && result.err.hasSuffix("is not valid UTF-8\n"), "\(raw): \(result.err)")
        }
        #expect(try HostileInputTests.snapshot(election) == before)
        // Claimed output paths are released when the command is refused; nothing is created through a link.
        for path in [root + "/claimed", root + "/not-voted", root + "/link-target", missing] {
            #expect(!FileManager.default.fileExists(atPath: path), "\(path) was left behind")
        }

        // Help is not an error.
        let help = try VoteCLI.run(["--help"])
        #expect(help.status == 0 && help.out.contains("USAGE: vote") && help.err.isEmpty)

        // CRLF line endings are not hostile: they work.
        let crlf = election.write("crlf.txt", "member-2\r\nmember-3\r\n")
        try election.ok(["voter", "authorize", "--place", "1", "--from", crlf, "--tokens-out", root + "/crlf-tokens"])
    }
    // MARK: The ledger directory

    /// What `path` itself is: mode, owner, size, modification time and contents.
    static func fileState(_ path: String) -> String {
        var info = stat()
        guard lstat(path, &info) == 0 else { return "missing" }
        let bytes = FileManager.default.contents(atPath: path).map { Array($0).description } ?? "-"
        return "\(info.st_mode) \(info.st_uid) \(info.st_size) \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec) \(bytes)"
    }

    /// Every file of `directory` as `fileState` sees it, and the directory itself (as ""), whose
    /// modification time changes with its listing.
    static func exactState(_ directory: String) throws -> [String: String] {
        var state = ["": fileState(directory)]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) {
            state[name] = fileState(directory + "/" + name)
        }
        return state
    }

    /// A symbolic link planted for any file of the ledger directory or its key directory, pointing outside
    /// it, never changes its target: a writing command and `vote head` either refuse with one line or
    /// replace the link itself.
    @Test func plantedSymbolicLinksAreNeverFollowed() throws {
        let election = try TestElection()
        _ = try election.place(registration: 600, voting: 600)
        try election.ok(["candidate", "register", "--place", "1", "--name", "Alice"])
        _ = try election.authorize("member-0")
        let l = election.ledger
        let files =
            try FileManager.default.contentsOfDirectory(atPath: l).sorted().map { (l, $0) }
            + FileManager.default.contentsOfDirectory(atPath: election.keys).sorted().map { (election.keys, $0) }
        let names = files.map(\.1)
        for name in [
            "blocks.idx", "leaves.idx", "nodes.idx", "frontier.idx", "lock", "voters.idx", "snapshot.bin",
            "authority.key", "authority.pub", "voter.secret", "segment-00000000.vlseg",
        ] {
            #expect(names.contains(name), "the ledger has no \(name) to replace")
        }
        // Links to be refused: the store opens these itself, and a link there could lead it anywhere.
        let refused: Set = [
            "blocks.idx", "leaves.idx", "nodes.idx", "frontier.idx", "lock", "authority.key", "segment-00000000.vlseg",
        ]
        for (round, (directory, name)) in files.enumerated() {
            let path = directory + "/" + name
            let aside = election.root + "/aside"
            // The target holds the file's own bytes, so following the link would look like success.
            let target = election.root + "/target-\(round)"
            try FileManager.default.copyItem(atPath: path, toPath: target)
            let before = HostileInputTests.fileState(target)
            try FileManager.default.moveItem(atPath: path, toPath: aside)
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)

            for arguments in [["voter", "authorize", "--place", "1", "--voter", "member-\(round + 1)"], ["head"]] {
                let result = try election.vote(arguments)
                let shown = "\(name): vote \(arguments[0])"
                #expect(HostileInputTests.fileState(target) == before, "\(shown) changed the link's target")
                if result.status != 0 {
                    #expect(
                        result.status == 1 && result.err.split(separator: "\n").count == 1
                            && result.err.hasPrefix("vote: "), "\(shown): \(result.err)")
                }
                // `vote head` reads only the segments, the block index and the key.
                let opened =
                    arguments[0] != "head" || ["blocks.idx", "authority.key", "segment-00000000.vlseg"].contains(name)
                if refused.contains(name) && opened {
                    #expect(
                        result.status == 1 && result.err.contains("\(name) is a symbolic link"),
                        "\(shown): \(result.err)")
                }
            }
            try FileManager.default.removeItem(atPath: path)
            try FileManager.default.moveItem(atPath: aside, toPath: path)
        }
        try election.ok(["verify"])
    }

    /// A writer refuses a ledger directory others can write to or that another user owns, and an authority
    /// key another user owns, as ssh refuses such a `~/.ssh`; nothing is written.
    @Test func unprotectedLedgerDirectoryAndForeignKeyAreRefused() throws {
        let election = try TestElection()
        _ = try election.place(registration: 600, voting: 600)
        let l = election.ledger
        let authorize = ["voter", "authorize", "--place", "1", "--voter", "member-1"]
        func refused(
            _ message: String, _ arguments: [String] = authorize, sourceLocation: SourceLocation = #_sourceLocation
        ) throws {
            let before = try HostileInputTests.snapshot(election)
            let result = try election.vote(arguments)
            #expect(
                result.status == 1 && result.err.hasPrefix("vote: ") && result.err.contains(message), "\(result.err)",
                sourceLocation: sourceLocation)
            #expect(result.err.split(separator: "\n").count == 1 && result.out.isEmpty, sourceLocation: sourceLocation)
            #expect(try HostileInputTests.snapshot(election) == before, sourceLocation: sourceLocation)
        }
        chmod(l, 0o777)
        try refused("ledger directory \(l) is writable by others (mode 777)")
        chmod(l, 0o770)
        try refused("is writable by others (mode 770)")
        chmod(l, 0o755)
        try election.ok(authorize)
        // Another user's files: only root can make them, as CI does; elsewhere this part cannot run.
        if geteuid() == 0 {
            #expect(chown(l, 65534, 65534) == 0)
            try refused(
                "ledger directory \(l) belongs to user 65534, not to you (user 0)",
                ["voter", "authorize", "--place", "1", "--voter", "member-2"])
            #expect(chown(l, 0, 0) == 0)
            let key = election.keys + "/authority.key"
            #expect(chown(key, 65534, 65534) == 0)
            try refused(
                "authority key \(key) belongs to user 65534",
                ["voter", "authorize", "--place", "1", "--voter", "member-2"])
            try refused("authority key \(key) belongs to user 65534", ["head"])
            #expect(chown(key, 0, 0) == 0)
        }
        try election.ok(["voter", "authorize", "--place", "1", "--voter", "member-2"])
    }

    /// `vote head` is a read command: even with a torn tail to recover and a fresh writer lock to take, it
    /// leaves every file of the ledger directory, and the directory itself, exactly as they were.
    @Test func headWritesNothing() throws {
        let election = try TestElection()
        _ = try election.place(registration: 600, voting: 600)
        _ = try election.authorize("member-1")
        let segment = election.ledger + "/segment-00000000.vlseg"
        let handle = try #require(FileHandle(forWritingAtPath: segment))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("VLBK torn".utf8))
        try handle.close()
        try FileManager.default.removeItem(atPath: election.ledger + "/lock")
        let before = try HostileInputTests.exactState(election.ledger)
        let head = try election.ok(["head"])
        // Genesis, the voter secret commitment, the place and the authorisation: 4 events.
        #expect(head.hasPrefix("voteledger/") && head.contains("\n4\n"))
        #expect(try HostileInputTests.exactState(election.ledger) == before)
        try election.ok(["head", "--json"])
        #expect(try HostileInputTests.exactState(election.ledger) == before)
        // The next writer recovers the torn tail.
        _ = try election.authorize("member-2")
        try election.ok(["verify"])
    }

    /// Two `vote init`s racing for one path: one creates the ledger, the other says in words what happened,
    /// never a raw "Directory not empty" or "Not a directory" from a rename.
    @Test func racingInitsSayWhatHappened() throws {
        let election = try TestElection()
        for round in 0..<6 {
            let path = election.root + "/race-\(round)"
            let runs = try (0..<2).map { _ in
                try VoteCLI.start(["init", "--ledger", path, "--name", "Race", "--no-passphrase"])
            }
            let results = runs.map { VoteCLI.finish($0.0, $0.1, $0.2) }
            #expect(results.filter { $0.status == 0 }.count == 1, "\(results.map(\.err))")
            for result in results where result.status != 0 {
                #expect(result.status == 1 && result.err.split(separator: "\n").count == 1, "\(result.err)")
                #expect(
                    result.err.contains("\(path) already exists and is not empty")
                        || result.err.contains("\(path) appeared while this ledger was being created")
                        || result.err.contains("\(path).keys already holds authority.key"), "\(result.err)")
            }
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: election.root).filter { $0.contains("creating") }
                    .isEmpty)
            #expect(try VoteCLI.run(["verify", "--ledger", path]).status == 0)
        }
    }
}
