import Foundation
import TestSupport
import Testing

/// Nothing a voter needs is ever lost: tokens and receipts reach their destination before the ledger says
/// "done", or the command fails saying what was recorded and how to get it back. Every case runs the built
/// `vote` binary.
@Suite struct DeliveryTests {
    /// Where standard output goes.
    enum Sink: String, CaseIterable {
        /// /dev/full: every write fails with ENOSPC.
        case full
        /// File descriptor 1 closed.
        case closed
        /// A pipe whose reader has gone: every write fails with EPIPE (and SIGPIPE, if not ignored).
        case brokenPipe
    }

    /// Runs `vote` with standard output going to `sink`; returns its exit status and standard error.
    static func run(
        _ arguments: [String], stdout sink: Sink, environment: [String: String] = [:]
    ) throws -> VoteCLI.Result {
        let process = Process()
        process.environment = VoteCLI.environment(environment)
        var writeEnd: FileHandle?
        switch sink {
        case .full, .closed:
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments =
                ["-c", "exec \"$0\" \"$@\" " + (sink == .full ? ">/dev/full" : ">&-"), VoteCLI.path] + arguments
        case .brokenPipe:
            var ends: [Int32] = [0, 0]
            #expect(pipe(&ends) == 0)
            for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }  // no other child inherits the read end
            close(ends[0])  // no reader anywhere, before the process starts: deterministic EPIPE
            writeEnd = FileHandle(fileDescriptor: ends[1], closeOnDealloc: true)
            process.executableURL = URL(fileURLWithPath: VoteCLI.path)
            process.arguments = arguments
            process.standardOutput = writeEnd
        }
        let err = Pipe()
        process.standardError = err
        try process.run()
        try writeEnd?.close()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationReason == .exit, "\(arguments): killed by signal \(process.terminationStatus)")
        return VoteCLI.Result(status: process.terminationStatus, out: "", err: String(decoding: errData, as: UTF8.self))
    }

    /// Runs `vote` through /bin/sh under `umask`, with `input` on standard input.
    static func run(
        _ arguments: [String], umask: String = "022", input: String? = nil, environment: [String: String] = [:]
    ) throws -> VoteCLI.Result {
        let process = Process()
        process.environment = VoteCLI.environment(environment)
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "umask \(umask); exec \"$0\" \"$@\"", VoteCLI.path] + arguments
        let inPipe = Pipe()
        process.standardInput = inPipe
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        if let input { inPipe.fileHandleForWriting.write(Data(input.utf8)) }
        try inPipe.fileHandleForWriting.close()
        return VoteCLI.finish(process, out, err)
    }

    /// An election whose place 1 is open for voting (on the election's clock) with two candidates and
    /// `voters` authorised voters; returns their tokens.
    static func openElection(voters: Int) throws -> (TestElection, [String]) {
        let election = try TestElection()
        let opensAt = try election.place()
        try election.ok(["candidate", "register", "--place", "1", "--name", "Alice"])
        try election.ok(["candidate", "register", "--place", "1", "--name", "Bob"])
        let identities = election.write(
            "voters.txt", (1...voters).map { "member-\($0)" }.joined(separator: "\n") + "\n")
        try election.ok([
            "voter", "authorize", "--place", "1", "--from", identities, "--tokens-out", election.root + "/tokens.csv",
        ])
        let tokens = try String(contentsOfFile: election.root + "/tokens.csv", encoding: .utf8)
            .split(separator: "\n").map { String($0.split(separator: ",")[1]) }
        tokens.forEach(SecretsLog.record)
        election.advance(to: opensAt)
        return (election, tokens)
    }

    /// Writes `token` to a file, as a voter would keep it.
    static func tokenFile(_ election: TestElection, _ token: String, _ name: String) -> String {
        election.write(name, token + "\n")
    }

    static func mode(_ path: String) -> Int {
        var status = stat()
        guard lstat(path, &status) == 0 else { return -1 }
        return Int(status.st_mode & 0o7777)
    }

    // MARK: Item 1: a token is delivered before it is authorised

    @Test(arguments: Sink.allCases) func tokenIsNeverLost(sink: Sink) throws {
        let election = try TestElection()
        _ = try election.place()
        let before = try election.fingerprint()
        let failed = try DeliveryTests.run(
            ["voter", "authorize", "--place", "1", "--voter", "member-1", "--ledger", election.ledger], stdout: sink,
            environment: election.environment)
        #expect(failed.status == 1, "\(sink): \(failed.err)")
        #expect(failed.err.split(separator: "\n").count == 1, "\(sink): \(failed.err)")
        #expect(failed.err.contains("the voter was not authorised (nothing was recorded)"), "\(sink): \(failed.err)")
        #expect(try election.fingerprint() == before, "\(sink): the authorisation was recorded")
        // Nothing was recorded, so the same voter can be authorised now.
        #expect(!(try election.authorize("member-1")).isEmpty)
    }

    // MARK: Item 1 and 2: a vote whose receipt cannot be printed can get its receipt again

    @Test func receiptIsRecoverableWhenStdoutFails() throws {
        let (election, tokens) = try DeliveryTests.openElection(voters: Sink.allCases.count)
        for (sink, token) in zip(Sink.allCases, tokens) {
            let file = DeliveryTests.tokenFile(election, token, "token-\(sink)")
            let cast = try DeliveryTests.run(
                ["cast", "--place", "1", "--candidate", "2", "--token-file", file, "--ledger", election.ledger],
                stdout: sink, environment: election.environment)
            #expect(cast.status == 1, "\(sink): \(cast.err)")
            #expect(cast.err.split(separator: "\n").count == 1, "\(sink): \(cast.err)")
            #expect(
                cast.err.contains("the vote was recorded in block") && cast.err.contains("vote receipt --place 1"),
                "\(sink): \(cast.err)")
            #expect(!cast.err.contains(token))
            let receipt = election.root + "/receipt-\(sink)"
            try election.ok(["receipt", "--place", "1", "--token-file", file, "--out", receipt])
            let audit = try election.ok(["audit", receipt])
            #expect(audit.contains("receipt for a vote in place 1 for candidate 2"), "\(audit)")
        }
    }

    // MARK: Item 2: every output path is claimed before the vote is decided

    @Test func badReceiptPathsRecordNothing() throws {
        let (election, tokens) = try DeliveryTests.openElection(voters: 3)
        let root = election.root
        let existing = election.write("existing", "keep me\n")
        let target = root + "/target"
        #expect(symlink(target, root + "/link") == 0)
        #expect(mkfifo(root + "/fifo", 0o600) == 0)
        try FileManager.default.createDirectory(atPath: root + "/directory", withIntermediateDirectories: false)
        let token = DeliveryTests.tokenFile(election, tokens[0], "token-0")
        let before = try election.fingerprint()
        for path in [existing, root + "/link", root + "/fifo", root + "/directory", root + "/missing/receipt"] {
            let result = try election.vote([
                "cast", "--place", "1", "--candidate", "1", "--token-file", token, "--receipt-out", path,
            ])
            #expect(
                result.status == 1 && result.err.hasPrefix("vote: cannot create receipt \(path): "),
                "\(path): \(result.err)")
            #expect(result.err.split(separator: "\n").count == 1)
        }
        #expect(try election.fingerprint() == before, "a vote was recorded")
        #expect(try String(contentsOfFile: existing, encoding: .utf8) == "keep me\n")
        #expect(!FileManager.default.fileExists(atPath: target))
        #expect(try election.ok(["status", "--place", "1", "--token-file", token]) == "not voted\n")

        // Bulk: a left-over receipt, a receipts "directory" that is a file, or one in a missing directory
        // stops the run before anything is cast.
        let votes = election.write("votes.txt", tokens.map { "\($0),1" }.joined(separator: "\n") + "\n")
        let reused = root + "/reused"
        try FileManager.default.createDirectory(atPath: reused, withIntermediateDirectories: false)
        _ = election.write("reused/line-2.tlog-proof", "left over\n")
        for (directory, message) in [
            (reused, "is not empty"), (existing, "exists and is not a directory"),
            (root + "/link", "exists and is not a directory"),
            (root + "/missing/receipts", "its parent directory does not exist"),
        ] {
            let result = try election.vote(["cast", "--place", "1", "--from", votes, "--receipts-out", directory])
            #expect(
                result.status == 1 && result.err.contains(message) && result.err.contains("nothing was cast"),
                "\(directory): \(result.err)")
        }
        #expect(try election.fingerprint() == before, "a bulk vote was recorded")

        // A fresh directory: everything is recorded, every receipt is there and audits.
        let receipts = root + "/receipts"
        let cast = try election.ok([
            "cast", "--place", "1", "--from", votes, "--receipts-out", receipts, "--batch", "2",
        ])
        #expect(cast.contains("cast 3 votes in place 1; 0 rejected"))
        for line in 1...3 { try election.ok(["audit", "\(receipts)/line-\(line).tlog-proof"]) }
    }

    // MARK: Item 2: `vote receipt` is a read command

    @Test func receiptIsReissuedWithoutWriting() throws {
        let (election, tokens) = try DeliveryTests.openElection(voters: 2)
        let token = DeliveryTests.tokenFile(election, tokens[0], "token-0")
        let original = election.root + "/original.tlog-proof"
        try election.ok(["cast", "--place", "1", "--candidate", "1", "--token-file", token, "--receipt-out", original])
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: election.ledger) {
            files[name] = FileManager.default.contents(atPath: election.ledger + "/" + name)
        }
        let printed = try election.ok(["receipt", "--place", "1", "--token-file", token])
        #expect(printed.hasPrefix("c2sp.org/tlog-proof@v1\n"))
        let again = election.write("again.tlog-proof", printed)
        #expect(try election.ok(["audit", again]).contains("candidate 1"))
        #expect(try election.ok(["audit", original]).contains("candidate 1"))
        let json = try #require(
            try json(try election.ok(["receipt", "--place", "1", "--token-file", token, "--json"])) as? [String: Any])
        #expect(json["candidate"] as? Int == 1 && json["receipt"] as? String == printed)
        var after: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: election.ledger) {
            after[name] = FileManager.default.contents(atPath: election.ledger + "/" + name)
        }
        #expect(after == files, "vote receipt wrote to the ledger directory")
        // A token that has not voted has no receipt.
        let other = DeliveryTests.tokenFile(election, tokens[1], "token-1")
        let none = try election.vote(["receipt", "--place", "1", "--token-file", other])
        #expect(
            none.status == 1 && none.err == "vote: this token has not voted in place 1: there is no receipt to issue\n")
    }

    // MARK: Item 2: a full disk under the receipt, said in words

    @Test func receiptOnFullDisk() throws {
        let mountPoint = NSTemporaryDirectory() + "vote-receipt-full-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: mountPoint) }
        let (status, output) = shell("mount -t tmpfs -o size=64k tmpfs '\(mountPoint)'")
        guard status == 0 else {
            print(
                "skipping the full-disk receipt test: cannot mount a tmpfs (\(output.trimmingCharacters(in: .whitespacesAndNewlines)))"
            )
            return
        }
        defer { _ = shell("umount '\(mountPoint)'") }
        _ = shell("dd if=/dev/zero of='\(mountPoint)/filler' bs=4k count=64")
        let (election, tokens) = try DeliveryTests.openElection(voters: 1)
        let token = DeliveryTests.tokenFile(election, tokens[0], "token-0")
        let receipt = mountPoint + "/receipt.tlog-proof"
        let cast = try election.vote([
            "cast", "--place", "1", "--candidate", "1", "--token-file", token, "--receipt-out", receipt,
        ])
        #expect(cast.status == 1 && cast.err.split(separator: "\n").count == 1, "\(cast.err)")
        #expect(
            cast.err.contains("the vote was recorded in block") && cast.err.contains("no space left on device")
                && cast.err.contains("vote receipt --place 1"), "\(cast.err)")
        #expect(!FileManager.default.fileExists(atPath: receipt), "a partial receipt was left behind")
        let again = election.root + "/again.tlog-proof"
        try election.ok(["receipt", "--place", "1", "--token-file", token, "--out", again])
        try election.ok(["audit", again])
    }

    // MARK: Item 7: tokens without argv

    @Test func tokenWithoutArgv() throws {
        let (election, tokens) = try DeliveryTests.openElection(voters: 2)
        let file = DeliveryTests.tokenFile(election, tokens[0], "token-0")
        let l = election.ledger
        #expect(
            try DeliveryTests.run(
                ["status", "--place", "1", "--token", "-", "--ledger", l], input: tokens[1] + "\n",
                environment: election.environment
            ).out == "not voted\n")
        let cast = try DeliveryTests.run(
            ["cast", "--place", "1", "--candidate", "2", "--token", "-", "--ledger", l], input: tokens[1] + "\n",
            environment: election.environment)
        #expect(cast.status == 0, "\(cast.err)")
        #expect(
            try DeliveryTests.run(
                ["status", "--place", "1", "--token", "-", "--ledger", l], input: tokens[1],
                environment: election.environment
            ).out == "voted\n")
        try election.ok(["cast", "--place", "1", "--candidate", "1", "--token-file", file])
        #expect(try election.ok(["status", "--place", "1", "--token-file", file]) == "voted\n")
        let receipt = try DeliveryTests.run(
            ["receipt", "--place", "1", "--token", "-", "--ledger", l], input: tokens[1],
            environment: election.environment)
        #expect(receipt.status == 0 && receipt.out.hasPrefix("c2sp.org/tlog-proof@v1\n"), "\(receipt.err)")
    }

    // MARK: Item 9: receipts are private under any umask

    @Test func receiptModesUnderUmaskZero() throws {
        let (election, tokens) = try DeliveryTests.openElection(voters: 3)
        let l = election.ledger
        let single = election.root + "/single.tlog-proof"
        let first = DeliveryTests.tokenFile(election, tokens[0], "token-0")
        #expect(
            try DeliveryTests.run(
                [
                    "cast", "--place", "1", "--candidate", "1", "--token-file", first, "--receipt-out", single,
                    "--ledger", l,
                ], umask: "000", environment: election.environment
            ).status == 0)
        #expect(DeliveryTests.mode(single) == 0o600)
        let votes = election.write("votes.txt", tokens[1...].map { "\($0),2" }.joined(separator: "\n") + "\n")
        let directory = election.root + "/receipts"
        #expect(
            try DeliveryTests.run(
                ["cast", "--place", "1", "--from", votes, "--receipts-out", directory, "--ledger", l], umask: "000",
                environment: election.environment
            ).status == 0)
        #expect(DeliveryTests.mode(directory) == 0o700)
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) {
            #expect(DeliveryTests.mode(directory + "/" + name) == 0o600, "\(name)")
        }
        let again = election.root + "/again.tlog-proof"
        #expect(
            try DeliveryTests.run(
                ["receipt", "--place", "1", "--token-file", first, "--out", again, "--ledger", l], umask: "000",
                environment: election.environment
            ).status == 0)
        #expect(DeliveryTests.mode(again) == 0o600)
    }

    // MARK: Item 10: every command checks its writes

    @Test(arguments: Sink.allCases) func readCommandsFailWhenOutputFails(sink: Sink) throws {
        let election = try TestElection()
        _ = try election.place()
        let l = election.ledger
        for arguments in [
            ["export", "--events"], ["export", "--place", "1"], ["export", "--place", "1", "--format", "csv"],
            ["tally", "--place", "1"], ["tally", "--place", "1", "--json"], ["log"], ["head"], ["verify"],
            ["place", "list"], ["place", "show", "1"], ["candidate", "list", "--place", "1"], ["--help"],
        ] {
            let result = try DeliveryTests.run(
                arguments == ["--help"] ? arguments : arguments + ["--ledger", l], stdout: sink,
                environment: election.environment)
            #expect(result.status == 1, "\(arguments) \(sink): exit \(result.status): \(result.err.prefix(300))")
            #expect(
                result.err.hasPrefix("vote: cannot write to standard output: ")
                    && result.err.split(separator: "\n").count == 1,
                "\(arguments) \(sink): \(result.err.prefix(300))")
        }
        // A command that records something says so when its report cannot be printed.
        let created = try DeliveryTests.run(
            ["place", "create", "--name", "P2", "--registration", "now/+1h", "--voting", "+1h/+2h", "--ledger", l],
            stdout: sink, environment: election.environment)
        #expect(
            created.status == 1
                && created.err.hasPrefix("vote: place 2 was created, but cannot write to standard output"),
            "\(created.err)")
    }
}
