import Foundation
import Testing

/// Secrets stay secret: permissions on everything sensitive, passphrases only from a file, a variable
/// or a terminal prompt with echo off, and never in any output.
@Suite struct SecretsTests {
    /// The ledger directory is 0700, the private key, voter secret and token files 0600; a private key
    /// readable by others is refused, as ssh does.
    @Test func permissions() throws {
        let election = try TestElection()
        func mode(_ path: String) throws -> Int {
            try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
        }
        #expect(try mode(election.ledger) == 0o700)
        #expect(try mode(election.ledger + "/authority.key") == 0o600)
        #expect(try mode(election.ledger + "/voter.secret") == 0o600)
        _ = try election.place(registration: 60, voting: 60)
        let voters = election.write("v.txt", "a\nb\n")
        try election.ok(["voter", "authorize", "--place", "1", "--from", voters, "--tokens-out", election.root + "/tokens"])
        #expect(try mode(election.root + "/tokens") == 0o600)

        chmod(election.ledger + "/authority.key", 0o640)
        let refused = try election.vote(["candidate", "register", "--place", "1", "--name", "X"])
        #expect(refused.status == 1 && refused.err.contains("accessible by others (mode 640); run chmod 600 on it"))
        chmod(election.ledger + "/authority.key", 0o600)
        chmod(election.ledger + "/voter.secret", 0o644)
        let secret = try election.vote(["candidate", "register", "--place", "1", "--name", "X"])
        #expect(secret.status == 1 && secret.err.contains("voter secret") && secret.err.contains("chmod 600"))
    }

    /// A passphrase typed at a terminal prompt is not echoed, unlocks the key, and a wrong one is refused
    /// without being repeated; from a file it works the same. Driven through a real pseudo-terminal.
    @Test func passphrasePromptAndFile() throws {
        let root = NSTemporaryDirectory() + "secrets-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let ledger = root + "/ledger"
        let passphrase = "tide-\(UUID().uuidString.prefix(8))-pool"
        SecretsLog.record(passphrase)
        let script = """
            import os, pty, signal, sys, time
            signal.alarm(60)  # a prompt that never returns fails the test instead of hanging it
            def run(args, answers):
                pid, fd = pty.fork()
                if pid == 0:
                    os.execv(args[0], args)
                out = b""
                for answer in answers:
                    while b": " not in out.split(b"\\n")[-1]:
                        chunk = os.read(fd, 1024)
                        if not chunk: break
                        out += chunk
                    os.write(fd, answer.encode() + b"\\n")
                    out += b"\\n"
                while True:
                    try:
                        chunk = os.read(fd, 1024)
                    except OSError:
                        break
                    if not chunk: break
                    out += chunk
                _, status = os.waitpid(pid, 0)
                return os.waitstatus_to_exitcode(status), out.decode(errors="replace")
            vote, ledger, secret = sys.argv[1], sys.argv[2], sys.argv[3]
            code1, out1 = run([vote, "init", "--ledger", ledger, "--passphrase-prompt"], [secret, secret])
            code2, out2 = run([vote, "place", "create", "--ledger", ledger, "--name", "P", "--registration", "now/+1h", "--voting", "+1h/+2h"], [secret])
            code3, out3 = run([vote, "place", "create", "--ledger", ledger, "--name", "Q", "--registration", "now/+1h", "--voting", "+1h/+2h"], ["wrong-" + secret[::-1]])
            print(code1, code2, code3)
            print(repr(out1 + out2 + out3))
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, VoteCLI.path, ledger, passphrase]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = out
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "VOTE_PASSPHRASE")
        process.environment = environment
        try process.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let lines = text.split(separator: "\n")
        #expect(lines.first == "0 0 1", "\(text.prefix(600))")
        #expect(text.contains("created ledger") && text.contains("created place 1: P"))
        #expect(text.contains("the passphrase does not decrypt the private key"))
        #expect(!text.contains(passphrase) && !text.contains(String(passphrase.reversed())), "a passphrase was echoed")
        #expect(try String(contentsOfFile: ledger + "/authority.key", encoding: .utf8).contains("BEGIN ENCRYPTED PRIVATE KEY"))

        let file = root + "/passphrase"
        try (passphrase + "\n").write(toFile: file, atomically: false, encoding: .utf8)
        let fromFile = try VoteCLI.run(["candidate", "register", "--place", "1", "--name", "A", "--ledger", ledger, "--passphrase-file", file])
        #expect(fromFile.status == 0, "\(fromFile.err)")
        let fromEnvironment = try VoteCLI.run(
            ["candidate", "register", "--place", "1", "--name", "B", "--ledger", ledger], environment: ["VOTE_PASSPHRASE": passphrase])
        #expect(fromEnvironment.status == 0, "\(fromEnvironment.err)")
        let none = try VoteCLI.run(["candidate", "register", "--place", "1", "--name", "C", "--ledger", ledger])
        #expect(none.status == 1 && none.err.contains("needs its passphrase"))
    }
}

/// Every token and passphrase the tests use, appended to a file that `.ci/run` greps the whole test
/// output for afterwards: none may ever appear in an error or log line.
enum SecretsLog {
    static let path = ProcessInfo.processInfo.environment["VOTE_SECRETS_LOG"] ?? NSTemporaryDirectory() + "voteledger-secrets-used.txt"
    private static let lock = NSLock()

    static func record(_ secret: String) {
        lock.lock()
        defer { lock.unlock() }
        guard let handle = FileHandle(forWritingAtPath: path) ?? {
            _ = FileManager.default.createFile(atPath: path, contents: nil)
            return FileHandle(forWritingAtPath: path)
        }() else { return }
        handle.seekToEndOfFile()
        handle.write(Data((secret + "\n").utf8))
        try? handle.close()
    }
}
