import Election
import FileDriver
import FileStore
import Foundation
import Ledger
import LedgerCrypto
import TestSupport
import Testing
import VoteLedger

/// Secrets stay secret: permissions on everything sensitive, passphrases only from a file, a variable
/// or a terminal prompt with echo off, and never in any output.
@Suite struct SecretsTests {
    /// The ledger and key directories are 0700, the private key, voter secret and token files 0600, and the
    /// ledger directory holds no secret; a private key readable by others is refused, as ssh does.
    @Test func permissions() throws {
        let election = try TestElection()
        func mode(_ path: String) throws -> Int {
            try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
        }
        #expect(try mode(election.ledger) == 0o700)
        #expect(try mode(election.keys) == 0o700)
        #expect(try mode(election.keys + "/authority.key") == 0o600)
        #expect(try mode(election.keys + "/voter.secret") == 0o600)
        #expect(LedgerKeys.secrets(in: election.ledger).isEmpty)
        _ = try election.place(registration: 60, voting: 60)
        let voters = election.write("v.txt", "a\nb\n")
        try election.ok([
            "voter", "authorize", "--place", "1", "--from", voters, "--tokens-out", election.root + "/tokens",
        ])
        #expect(try mode(election.root + "/tokens") == 0o600)

        chmod(election.keys + "/authority.key", 0o640)
        let refused = try election.vote(["candidate", "register", "--place", "1", "--name", "X"])
        #expect(refused.status == 1 && refused.err.contains("accessible by others (mode 640); run chmod 600 on it"))
        chmod(election.keys + "/authority.key", 0o600)
        chmod(election.keys + "/voter.secret", 0o644)
        let secret = try election.vote(["candidate", "register", "--place", "1", "--name", "X"])
        #expect(secret.status == 1 && secret.err.contains("voter secret") && secret.err.contains("chmod 600"))
    }

    /// `vote init` on a terminal asks for a passphrase (twice, not echoed) without being told to; the
    /// passphrase typed at a later prompt unlocks the key, and a wrong one is refused without being
    /// repeated; from a file it works the same. Driven through a real pseudo-terminal.
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
            code1, out1 = run([vote, "init", "--ledger", ledger], [secret, secret])
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
        #expect(
            try String(contentsOfFile: ledger + ".keys/authority.key", encoding: .utf8).contains(
                "BEGIN ENCRYPTED PRIVATE KEY"))

        #expect(try SecretsTests.usesScrypt(ledger + ".keys/authority.key"), "the key is not encrypted with scrypt")

        let file = root + "/passphrase"
        try (passphrase + "\n").write(toFile: file, atomically: false, encoding: .utf8)
        chmod(file, 0o600)
        let fromFile = try VoteCLI.run([
            "candidate", "register", "--place", "1", "--name", "A", "--ledger", ledger, "--passphrase-file", file,
        ])
        #expect(fromFile.status == 0, "\(fromFile.err)")
        let fromEnvironment = try VoteCLI.run(
            ["candidate", "register", "--place", "1", "--name", "B", "--ledger", ledger],
            environment: ["VOTE_PASSPHRASE": passphrase])
        #expect(fromEnvironment.status == 0, "\(fromEnvironment.err)")
        let none = try VoteCLI.run(["candidate", "register", "--place", "1", "--name", "C", "--ledger", ledger])
        #expect(none.status == 1 && none.err.contains("needs its passphrase"))
    }

    /// Whether the PEM key at `path` is PBES2 with scrypt: its DER names id-scrypt (1.3.6.1.4.1.11591.4.11)
    /// and not id-PBKDF2 (1.2.840.113549.1.5.12). LedgerCryptoTests checks the parameters.
    static func usesScrypt(_ path: String) throws -> Bool {
        let body = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").filter {
            !$0.hasPrefix("-----")
        }
        let der = [UInt8](try #require(Data(base64Encoded: body.joined())))
        func holds(_ oid: [UInt8]) -> Bool {
            (0...(der.count - oid.count)).contains { Array(der[$0..<$0 + oid.count]) == oid }
        }
        return holds([0x06, 0x09, 0x2B, 0x06, 0x01, 0x04, 0x01, 0xDA, 0x47, 0x04, 0x0B])
            && !holds([0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x05, 0x0C])
    }

    /// An empty $VOTE_PASSPHRASE or passphrase file is refused, never taken as "no encryption"; a passphrase
    /// file that group or others can read is refused as a readable key is. Nothing is created or written.
    @Test func unusablePassphraseSourcesAreRefused() throws {
        let election = try TestElection()
        let fresh = election.root + "/fresh"
        let place = ["place", "create", "--name", "P", "--registration", "now/+1h", "--voting", "+1h/+2h"]
        let before = try HostileInputTests.snapshot(election)

        for arguments in [["init", "--ledger", fresh], place + ["--ledger", election.ledger]] {
            let empty = try VoteCLI.run(arguments, environment: ["VOTE_PASSPHRASE": ""])
            #expect(empty.status == 1, "\(empty.err)")
            #expect(
                empty.err
                    == "vote: VOTE_PASSPHRASE is set but empty; unset it for an unencrypted key, or give a passphrase\n"
            )
        }
        let passphrase = "heron-\(UUID().uuidString.prefix(8))-quay"
        SecretsLog.record(passphrase)
        let emptyFile = election.write("empty-passphrase", "\n")
        chmod(emptyFile, 0o600)
        let file = election.write("passphrase", passphrase + "\n")
        for mode in [0o644, 0o640, 0o604, 0o620] as [mode_t] {
            chmod(file, mode)
            for arguments in [["init", "--ledger", fresh], place + ["--ledger", election.ledger]] {
                let readable = try VoteCLI.run(arguments + ["--passphrase-file", file])
                #expect(readable.status == 1)
                #expect(
                    readable.err
                        == "vote: passphrase file \(file) is accessible by others (mode \(String(mode, radix: 8))); run chmod 600 on it\n"
                )
            }
        }
        let emptied = try VoteCLI.run(["init", "--ledger", fresh, "--passphrase-file", emptyFile])
        #expect(emptied.status == 1 && emptied.err == "vote: passphrase file \(emptyFile) is empty\n")
        #expect(!FileManager.default.fileExists(atPath: fresh))
        #expect(try HostileInputTests.snapshot(election) == before)

        chmod(file, 0o600)
        let created = try VoteCLI.run(["init", "--ledger", fresh, "--passphrase-file", file])
        #expect(created.status == 0, "\(created.err)")
        #expect(try SecretsTests.usesScrypt(fresh + ".keys/authority.key"))
    }

    /// A `voter.secret` copied in from another ledger is refused by every writing command (it would tag
    /// the same person differently and let them be authorised twice); nothing is written, and the ledger's
    /// own secret works again once restored.
    @Test func swappedVoterSecretIsRefused() throws {
        let election = try TestElection()
        let other = try TestElection()
        _ = try election.place(registration: 600, voting: 600)
        _ = try election.authorize("member-1")
        let own = election.keys + "/voter.secret"
        let saved = election.root + "/voter.secret.saved"
        try FileManager.default.moveItem(atPath: own, toPath: saved)
        try FileManager.default.copyItem(atPath: other.keys + "/voter.secret", toPath: own)
        chmod(own, 0o600)
        let before = try HostileInputTests.snapshot(election)

        for arguments in [
            ["voter", "authorize", "--place", "1", "--voter", "member-1"],
            ["voter", "authorize", "--place", "1", "--voter", "member-2"],
            ["candidate", "register", "--place", "1", "--name", "Alice"],
        ] {
            let refused = try election.vote(arguments)
            #expect(refused.status == 1 && refused.out.isEmpty, "\(arguments): \(refused.err)")
            #expect(
                refused.err
                    == "vote: \(own) does not belong to this ledger (block 1 commits to another voter secret); restore the ledger's own\n"
            )
        }
        #expect(try HostileInputTests.snapshot(election) == before)

        try FileManager.default.removeItem(atPath: own)
        try FileManager.default.moveItem(atPath: saved, toPath: own)
        let again = try election.vote(["voter", "authorize", "--place", "1", "--voter", "member-1"])
        #expect(again.status == 1 && again.err.contains("voter already authorised"))
        _ = try election.authorize("member-2")
        try election.ok(["verify"])
    }

    /// A `voter.secret` that is a symbolic link is refused as one, not followed (and not reported as
    /// "accessible by others" because of the link's own mode); so is one that is not a regular file, and
    /// one owned by another user.
    @Test func voterSecretLinkIsRefused() throws {
        let election = try TestElection()
        let own = election.keys + "/voter.secret"
        let moved = election.root + "/voter.secret"
        try FileManager.default.moveItem(atPath: own, toPath: moved)
        try FileManager.default.createSymbolicLink(atPath: own, withDestinationPath: moved)
        let place = ["place", "create", "--name", "P", "--registration", "now/+1h", "--voting", "+1h/+2h"]
        let linked = try election.vote(place)
        #expect(linked.status == 1)
        #expect(linked.err == "vote: voter secret \(own) is a symbolic link; refusing to follow it\n")
        try FileManager.default.removeItem(atPath: own)
        #expect(mkfifo(own, 0o600) == 0)
        let fifo = try election.vote(place)
        #expect(fifo.status == 1 && fifo.err == "vote: voter secret \(own) is not a regular file\n")
        try FileManager.default.removeItem(atPath: own)
        try FileManager.default.moveItem(atPath: moved, toPath: own)
        if geteuid() == 0 {  // only root can give the file away to test the owner check
            #expect(chown(own, 65534, 65534) == 0)
            let foreign = try election.vote(place)
            #expect(
                foreign.status == 1
                    && foreign.err
                        == "vote: voter secret \(own) belongs to user 65534, not to you (user 0); only its owner may use it\n"
            )
            #expect(chown(own, 0, 0) == 0)
        }
        try election.ok(place)
    }

    /// A ledger created before voter secret commitments (genesis only, as `vote init` wrote it then) still
    /// opens for writing: its secret is used unchecked, with a warning on stderr, and it verifies.
    @Test func ledgerWithoutCommitmentStillOpens() throws {
        let election = try TestElection()
        let old = election.root + "/old"
        try FileBlockStore.create(
            at: old, name: "Old Union", authority: Ed25519PrivateKey(),
            secrets: [("voter.secret", SecureRandom.bytes(32))],
            ledgerID: LedgerID.random(), timestamp: Clock.now()
        ).close()
        let place = [
            "place", "create", "--name", "P", "--registration", "now/+1h", "--voting", "+1h/+2h", "--ledger", old,
        ]
        let created = try VoteCLI.run(place)
        #expect(created.status == 0 && created.out.hasPrefix("created place 1: P\n"), "\(created.err)")
        #expect(
            created.err
                == "warning: this ledger records no voter secret commitment (it predates them), so voter.secret cannot be checked against it\n"
        )
        let verified = try VoteCLI.run(["verify", "--ledger", old])
        #expect(verified.status == 0, "\(verified.err)")
    }

    /// `vote verify` allows a voter secret commitment only as the first election event: a second one, or
    /// one after another event, breaks the rules (ledgers built with `FileBlockStore.append`, past the contract).
    @Test func verifyRefusesMisplacedCommitment() throws {
        let election = try TestElection()
        let commitment = ElectionEvent.voterSecretCommitment(
            VoterSecret.commitment([UInt8](repeating: 1, count: 32), ledgerID: try LedgerID.random())
        ).ledgerEvent
        try election.ok(["verify"])
        // A second commitment, in block 2.
        try FileBlockStore.open(at: election.ledger).append([commitment], timestamp: Clock.now())
        let second = try election.vote(["verify"])
        #expect(second.status == 3)
        #expect(
            second.err.contains(
                "block 2, event 0 breaks the rules: a voter secret commitment may only be the first election event"),
            "\(second.err)")

        // A ledger without one (created before them) that gets one after its first event.
        let old = election.root + "/old"
        let store = try FileBlockStore.create(
            at: old, name: "Old Union", authority: Ed25519PrivateKey(), ledgerID: LedgerID.random(),
            timestamp: Clock.now())
        let now = Clock.now()
        let place = ElectionEvent.placeCreated(
            Place(
                id: 1, name: "P", description: "", registration: TimeWindow(start: now, end: now + 3_600_000),
                voting: TimeWindow(start: now + 3_600_000, end: now + 7_200_000), maxCandidates: nil))
        try store.append([place.ledgerEvent, commitment], timestamp: now)
        store.close()
        let misplaced = try VoteCLI.run(["verify", "--ledger", old])
        #expect(misplaced.status == 3)
        #expect(
            misplaced.err.contains(
                "block 1, event 1 breaks the rules: a voter secret commitment may only be the first election event"),
            "\(misplaced.err)")
    }
}

/// Every token and passphrase the tests use, appended to a file that `.ci/run` greps the whole test
/// output for afterwards: none may ever appear in an error or log line (`recordSecrets`).
enum SecretsLog {
    static func record(_ secret: String) { recordSecrets([secret]) }
}
