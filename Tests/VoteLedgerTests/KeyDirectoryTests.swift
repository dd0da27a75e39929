import FileDriver
import Foundation
import LedgerCrypto
import Testing
import VoteLedger

/// The public part of a ledger and its secrets live apart (issue 21): the keys in a key directory of their
/// own, a published copy that holds nothing secret, `vote init` that never makes an unencrypted key by
/// accident, and an admin token that reaches its reader before it replaces the old one.
@Suite struct KeyDirectoryTests {
    /// The files a published copy may hold: the log, the reader's indexes, the public key, the signed head.
    static let publicNames: Set = [
        "segment-00000000.vlseg", "blocks.idx", "leaves.idx", "nodes.idx", "authority.pub", "head.checkpoint",
    ]

    /// The auditor's case of the issue: a copy of the ledger directory, made as the README used to say, and a
    /// copy made by `vote publish`, hold no secret; both verify (without a warning) and count the votes; the
    /// published head checks against the copy; and authorising a voter on either fails with one clear line,
    /// writing nothing.
    @Test func auditorsCopyHoldsNoSecretAndCannotBeWritten() throws {
        let election = try TestElection()
        let opens = try election.place(registration: 600, voting: 600)
        try election.ok(["candidate", "register", "--place", "1", "--name", "Alice"])
        let token = try election.authorize("member-1")
        election.advance(to: opens)
        try election.ok(["cast", "--place", "1", "--candidate", "1", "--token", token])

        let copied = election.root + "/copied"
        try FileManager.default.copyItem(atPath: election.ledger, toPath: copied)
        let published = election.root + "/published"
        let publish = try election.ok(["publish", "--to", published])
        #expect(publish.contains("published the ledger at \(published)"))
        let names = Set(try FileManager.default.contentsOfDirectory(atPath: published))
        #expect(names == KeyDirectoryTests.publicNames, "\(names)")

        /// `vote` on `copy`, on the election's clock.
        func on(_ copy: String, _ arguments: [String]) throws -> VoteCLI.Result {
            try VoteCLI.run(arguments + ["--ledger", copy], environment: election.environment)
        }
        for copy in [copied, published] {
            #expect(LedgerKeys.secrets(in: copy).isEmpty, "\(copy) holds a secret")
            let verified = try on(copy, ["verify", "--json"])
            #expect(verified.status == 0 && verified.err.isEmpty, "\(verified.err)")
            let report = try #require(try json(verified.out) as? [String: Any])
            #expect(report["ok"] as? Bool == true && (report["secret_files"] as? [String])?.isEmpty == true)
            let tally = try on(copy, ["tally", "--place", "1"])
            #expect(tally.status == 0 && tally.out.contains("Alice"), "\(tally.err)")

            let before = try FileManager.default.contentsOfDirectory(atPath: copy).sorted()
            let segment = FileManager.default.contents(atPath: copy + "/segment-00000000.vlseg")
            let refused = try on(copy, ["voter", "authorize", "--place", "1", "--voter", "intruder"])
            #expect(refused.status == 1 && refused.out.isEmpty)
            #expect(
                refused.err
                    == "vote: authority key \(copy).keys/authority.key is missing: this copy of the ledger can be read and verified, not written\n"
            )
            #expect(try FileManager.default.contentsOfDirectory(atPath: copy).sorted() == before)
            #expect(FileManager.default.contents(atPath: copy + "/segment-00000000.vlseg") == segment)
        }
        let audited = try on(published, ["audit", "--head", published + "/head.checkpoint"])
        #expect(audited.status == 0 && audited.out.contains("extends the published head"), "\(audited.err)")
        // The authority's ledger goes on; the copy stays a prefix of it.
        _ = try election.authorize("member-2")
        try election.ok(["audit", "--head", published + "/head.checkpoint"])
    }

    /// A copy that does hold a secret is named as such by `vote verify`, in a warning line and in --json.
    @Test func verifySaysWhenADirectoryHoldsSecrets() throws {
        let election = try TestElection()
        let unsafe = election.root + "/unsafe"
        try FileManager.default.copyItem(atPath: election.ledger, toPath: unsafe)
        try FileManager.default.copyItem(atPath: election.keys + "/authority.key", toPath: unsafe + "/authority.key")
        try FileManager.default.copyItem(atPath: election.keys + "/voter.secret", toPath: unsafe + "/voter.secret")
        let verified = try VoteCLI.run(["verify", "--ledger", unsafe])
        #expect(verified.status == 0)
        #expect(
            verified.err
                == "warning: \(unsafe) holds secrets (authority.key, voter.secret): do not hand this directory out; `vote publish --to DIR` writes a copy without them\n"
        )
        let report = try #require(
            try json(try VoteCLI.run(["verify", "--ledger", unsafe, "--json"]).out) as? [String: Any])
        #expect(report["secret_files"] as? [String] == ["authority.key", "voter.secret"])
    }

    /// `vote publish` refuses a target that exists and is not empty, and writes nothing there.
    @Test func publishRefusesAnExistingTarget() throws {
        let election = try TestElection()
        let target = election.root + "/taken"
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: false)
        _ = election.write("taken/note.txt", "mine\n")
        let refused = try election.vote(["publish", "--to", target])
        #expect(refused.status == 1 && refused.err == "vote: \(target) already exists and is not empty\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: target) == ["note.txt"])
    }

    /// The keys live in the key directory (0700, files 0600): by default the ledger's sibling `LEDGER.keys`,
    /// else `--keys DIR` or $VOTE_KEYS, on `init` and on every later command alike. A writer given the wrong
    /// key directory fails with one line.
    @Test func keysGoWhereTheyAreToldAndOnlyThere() throws {
        let election = try TestElection()
        let ledger = election.root + "/elsewhere"
        let keys = election.root + "/vault"
        let created = try VoteCLI.run(["init", "--ledger", ledger, "--keys", keys, "--no-passphrase"])
        #expect(created.status == 0, "\(created.err)")
        #expect(created.out.contains("key directory  \(keys)"))
        #expect(!FileManager.default.fileExists(atPath: ledger + ".keys"))
        #expect(LedgerKeys.secrets(in: ledger).isEmpty)
        let attributes = try FileManager.default.attributesOfItem(atPath: keys)
        #expect(attributes[.posixPermissions] as? Int == 0o700)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: keys).sorted() == ["authority.key", "voter.secret"])

        let place = ["place", "create", "--name", "P", "--registration", "now/+1h", "--voting", "+1h/+2h"]
        let fromVariable = try VoteCLI.run(place + ["--ledger", ledger], environment: ["VOTE_KEYS": keys])
        #expect(fromVariable.status == 0, "\(fromVariable.err)")
        let withoutKeys = try VoteCLI.run(place + ["--ledger", ledger])
        #expect(
            withoutKeys.status == 1
                && withoutKeys.err
                    == "vote: authority key \(ledger).keys/authority.key is missing: this copy of the ledger can be read and verified, not written\n"
        )
        chmod(keys, 0o755)
        let open = try VoteCLI.run(place + ["--ledger", ledger, "--keys", keys])
        #expect(
            open.status == 1
                && open.err == "vote: key directory \(keys) is accessible by others (mode 755); run chmod 700 on it\n")
        chmod(keys, 0o700)
        #expect(try VoteCLI.run(place + ["--ledger", ledger, "--keys", keys]).status == 0)
    }

    /// A ledger made before the key directory existed (its secrets in the ledger directory) keeps working:
    /// the first writing command moves them into the key directory, says so in one line, and goes on; the
    /// ledger directory holds no secret afterwards. Two differing copies of a secret are refused instead.
    @Test func olderLedgersSecretsMoveOutOnFirstWrite() throws {
        let election = try TestElection()
        for name in ["authority.key", "voter.secret"] {
            try FileManager.default.moveItem(atPath: election.keys + "/" + name, toPath: election.ledger + "/" + name)
        }
        try FileManager.default.removeItem(atPath: election.keys)
        let hash = election.write("ledger/admin-token.sha256", String(repeating: "ab", count: 32) + "\n")
        chmod(hash, 0o600)

        let moved = try election.vote([
            "place", "create", "--name", "P", "--registration", "now/+1h", "--voting", "+1h/+2h",
        ])
        #expect(moved.status == 0, "\(moved.err)")
        #expect(
            moved.err
                == "moved authority.key, voter.secret, admin-token.sha256 out of the ledger directory \(election.ledger) into its key directory \(election.keys): a copy of the ledger directory no longer carries them\n"
        )
        #expect(LedgerKeys.secrets(in: election.ledger).isEmpty)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: election.keys).sorted() == [
                "admin-token.sha256", "authority.key", "voter.secret",
            ])
        let again = try election.vote(["candidate", "register", "--place", "1", "--name", "Alice"])
        #expect(again.status == 0 && again.err.isEmpty, "\(again.err)")

        // A stale copy that differs from the key directory's is not silently dropped.
        let stray = election.write("ledger/voter.secret", String(repeating: "x", count: 32))
        chmod(stray, 0o600)
        let refused = try election.vote(["candidate", "register", "--place", "1", "--name", "Bob"])
        #expect(
            refused.status == 1
                && refused.err
                    == "vote: \(stray) and \(election.keys)/voter.secret differ: keep the right one in the key directory \(election.keys) and remove the other\n"
        )
        try FileManager.default.removeItem(atPath: stray)
        try election.ok(["verify"])
    }

    /// Off a terminal, `vote init` with no passphrase and no `--no-passphrase` refuses in one line and creates
    /// nothing; `--no-passphrase` creates an unencrypted key with a warning; it cannot be combined with a
    /// passphrase. (The terminal prompt is `SecretsTests.passphrasePromptAndFile`.)
    @Test func initNeedsAPassphraseOrAnExplicitFlag() throws {
        let election = try TestElection()
        let fresh = election.root + "/fresh"
        let refused = try VoteCLI.run(["init", "--ledger", fresh])
        #expect(refused.status == 2 && refused.out.isEmpty)
        #expect(
            refused.err
                == "vote: a new authority key needs a passphrase: give --passphrase-file FILE or $VOTE_PASSPHRASE, run on a terminal to be asked, or pass --no-passphrase\n"
        )
        #expect(
            !FileManager.default.fileExists(atPath: fresh) && !FileManager.default.fileExists(atPath: fresh + ".keys"))

        let both = try VoteCLI.run(
            ["init", "--ledger", fresh, "--no-passphrase"], environment: ["VOTE_PASSPHRASE": "p"])
        #expect(both.status == 2 && both.err.split(separator: "\n").count == 1 && both.err.contains("conflict"))
        #expect(!FileManager.default.fileExists(atPath: fresh))

        let plain = try VoteCLI.run(["init", "--ledger", fresh, "--no-passphrase"])
        #expect(plain.status == 0)
        #expect(
            plain.err
                == "warning: the authority key in \(fresh).keys is not encrypted: anyone who can read it can sign as the authority\n"
        )
        #expect(
            try String(contentsOfFile: fresh + ".keys/authority.key", encoding: .utf8).hasPrefix(
                "-----BEGIN PRIVATE KEY-----"))
    }

    // MARK: - The admin token

    /// The stored admin token hash of `election`, or nil.
    static func adminHash(_ election: TestElection) -> Data? {
        FileManager.default.contents(atPath: election.keys + "/admin-token.sha256")
    }

    /// Runs `vote` with standard output on /dev/full (every write fails: no space left on device).
    static func runToFullDevice(_ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: VoteCLI.path)
        process.arguments = arguments
        process.environment = VoteCLI.environment()
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/full")
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// `vote admin-token rotate` whose new token cannot be printed (/dev/full) or written (a file in a
    /// missing directory) fails and leaves the old hash, so the old token still works; one that is printed
    /// stores the hash of exactly the token printed.
    @Test(.enabled(if: VoteCLI.serverBuilt, "vote-serve is not built (VOTE_WITHOUT_SERVER=1)"))
    func rotatedTokenIsShownBeforeItReplacesTheOld() throws {
        let election = try TestElection()
        let first = try election.ok(["admin-token", "rotate"]).trimmingCharacters(in: .whitespacesAndNewlines)
        SecretsLog.record(first)
        let stored = try #require(KeyDirectoryTests.adminHash(election))
        #expect(String(decoding: stored, as: UTF8.self) == SHA256.hash(Array(first.utf8)).hex + "\n")

        #expect(try KeyDirectoryTests.runToFullDevice(["admin-token", "rotate", "--ledger", election.ledger]) != 0)
        #expect(KeyDirectoryTests.adminHash(election) == stored, "a token no one saw replaced the old one")

        let missing = election.root + "/no-such-directory/token"
        let unwritable = try election.vote(["admin-token", "rotate", "--admin-token-file", missing])
        #expect(unwritable.status == 1 && unwritable.err.contains("cannot create admin token file \(missing)"))
        #expect(KeyDirectoryTests.adminHash(election) == stored)

        let second = try election.ok(["admin-token", "rotate"]).trimmingCharacters(in: .whitespacesAndNewlines)
        SecretsLog.record(second)
        #expect(
            KeyDirectoryTests.adminHash(election) == Data((SHA256.hash(Array(second.utf8)).hex + "\n").utf8))
    }

    /// A first `vote serve` whose `--admin-token-file` cannot be created stops with one line before
    /// serving, and stores no admin token hash: the next start creates and shows a token as a first one.
    @Test(.enabled(if: VoteCLI.serverBuilt, "vote-serve is not built (VOTE_WITHOUT_SERVER=1)"))
    func firstServeWithUnwritableTokenFileStoresNoHash() throws {
        let election = try TestElection()
        let missing = election.root + "/no-such-directory/token"
        let served = try election.vote(["serve", "--listen", "127.0.0.1:0", "--admin-token-file", missing])
        #expect(served.status == 1, "\(served.out)")
        #expect(served.err.contains("cannot create admin token file \(missing)"), "\(served.err)")
        #expect(!served.out.contains("listening"))
        #expect(KeyDirectoryTests.adminHash(election) == nil, "a hash was stored for a token no one has")
    }
}
