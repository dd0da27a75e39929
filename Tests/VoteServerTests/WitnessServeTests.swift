import FileStore
import Foundation
import Hummingbird
import HummingbirdTesting
import Ledger
import LedgerCrypto
import TestSupport
import Testing
import TlogWitness
import VoteLedger

@testable import VoteServer

/// A real `vote witness serve` process on an ephemeral loopback port.
final class WitnessProcess {
    let program: ServedProgram
    let port: Int

    /// Starts `vote witness serve` with `arguments` and waits for its "listening on" line (no sleep).
    init(_ arguments: [String]) throws {
        program = try ServedProgram(
            ["witness", "serve", "--listen", "127.0.0.1:0", "--idle-timeout", "3600", "--head-timeout", "3600"]
                + arguments, clockOffset: 0)
        let text = program.firstLine
        guard let address = text.range(of: "://127.0.0.1:"), text.hasPrefix("listening on http"),
            let port = Int(text[address.upperBound...].prefix { $0.isNumber })
        else { throw VoteError(.io, "unexpected first line from vote witness serve: \(text)") }
        self.port = port
    }

    /// Sends `signal`, waits for the exit; the status and standard error.
    func stop(sending signal: Int32 = SIGTERM) -> (status: Int32, err: String) { program.stop(sending: signal) }

    /// POSTs an `add-checkpoint` body: the status, the content type and the body.
    func add(_ body: String) async throws -> (status: Int, type: String?, body: String) {
        let response = try await fetch(port, "/add-checkpoint", .post, body: ByteBuffer(string: body))
        return (
            Int(response.status.code), response.headers[.contentType], String(buffer: response.body ?? ByteBuffer())
        )
    }
}

/// A ledger made with the CLI, its signed heads, and consistency proofs read from its files.
struct WitnessedLedger {
    let path: String

    /// A new ledger at `path` (no passphrase).
    static func create(_ path: String) throws -> WitnessedLedger {
        let created = try VoteBinary.run(["init", "--name", "Witnessed Union", "--no-passphrase", "--ledger", path])
        #expect(created.status == 0, "\(created.err)")
        return WitnessedLedger(path: path)
    }

    /// A copy of this ledger and its key directory at `path`: the same id and authority key, whose history
    /// the authority may then write differently (a fork).
    func copy(to path: String) throws -> WitnessedLedger {
        try FileManager.default.copyItem(atPath: self.path, toPath: path)
        try FileManager.default.copyItem(atPath: self.path + ".keys", toPath: path + ".keys")
        return WitnessedLedger(path: path)
    }

    /// One more block: a place named `name`.
    func write(_ name: String) throws {
        let made = try VoteBinary.run([
            "place", "create", "--name", name, "--registration", "+1h/+2h", "--voting", "+2h/+3h", "--ledger", path,
        ])
        #expect(made.status == 0, "\(made.err)")
    }

    /// The current head signed by the authority (`vote head`), its size, and the log's verifier key.
    func head() throws -> (note: String, size: UInt64, origin: String, vkey: String) {
        let head = try VoteBinary.run(["head", "--json", "--ledger", path])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(head.out.utf8)) as? [String: Any])
        return (
            json["checkpoint"] as? String ?? "", (json["tree_size"] as? Int).map(UInt64.init) ?? 0,
            json["origin"] as? String ?? "",
            json["verifier_key"] as? String ?? ""
        )
    }

    /// The consistency proof from `old` events to the ledger's current head, base64 lines.
    func proof(from old: UInt64) throws -> String {
        let source = try FileBlockSource(path: path)
        let head = try source.lastBlock()
        return try source.consistencyProof(oldSize: old, newSize: head.treeSize, root: head.treeRoot)
            .map { Base64.encode($0.bytes) + "\n" }.joined()
    }

    /// A note over `text` signed with this ledger's authority key (what an authority gone rogue can sign).
    func signWithAuthority(_ text: String, origin: String) throws -> String {
        let key = try FileBlockSource(path: path).authorityKey(passphrase: nil)
        return try SignedNote.sign(text, name: origin, key: key).serialized
    }
}

/// `vote witness init` and `vote witness serve` as processes, on real ledgers: heads cosigned in sequence,
/// every refusal with its status, the state kept across SIGKILL, a fork and a split view by the authority's
/// own key refused, and the cosigned head checked by Python's `cryptography` (verify_ledger.py) and by Go's
/// `golang.org/x/mod/sumdb/note`.
@Suite(.serialized) struct WitnessServeTests {
    /// A witness key made with `vote witness init`: its file and verifier key.
    static func witnessKey(_ root: String, name: String = "witness.test/a") throws -> (file: String, vkey: String) {
        let file = root + "/\(name.replacingOccurrences(of: "/", with: "-")).key"
        let made = try VoteBinary.run(["witness", "init", "--name", name, "--key", file, "--json"])
        #expect(made.status == 0, "\(made.err)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(made.out.utf8)) as? [String: Any])
        let vkey = try #require(json["verifier_key"] as? String)
        #expect(Cosigner(verifierKey: vkey)?.name == name)
        return (file, vkey)
    }

    @Test func witnessInitMakesAPrivateKeyOnce() throws {
        let root = TemporaryDirectory()
        let (file, vkey) = try Self.witnessKey(root.path)
        var status = stat()
        #expect(stat(file, &status) == 0 && status.st_mode & 0o777 == 0o600)
        let again = try VoteBinary.run(["witness", "init", "--name", "witness.test/b", "--key", file])
        #expect(again.status != 0 && again.err.contains("already exists"), "\(again.err)")
        #expect(try WitnessKey(contentsOf: file).cosigner.verifierKey == vkey)
        let plain = try VoteBinary.run(["witness", "init", "--name", "witness.test/c", "--key", root.child("c.key")])
        #expect(plain.status == 0 && Cosigner(verifierKey: plain.out.trimmingCharacters(in: .newlines)) != nil)
        let badName = try VoteBinary.run(["witness", "init", "--name", "two words", "--key", root.child("d.key")])
        #expect(badName.status == 2 && !FileManager.default.fileExists(atPath: root.child("d.key")))
        // `vote witness serve` is vote-serve's: its help, and a bad --log refused in one line before anything starts.
        let help = try VoteBinary.run(["witness", "serve", "--help"])
        #expect(help.status == 0 && help.out.contains("USAGE: vote witness serve") && help.out.contains("--log"))
        let badLog = try VoteBinary.run([
            "witness", "serve", "--key", file, "--log", "voteledger/x=\(vkey)", "--state", root.child("state"),
        ])
        #expect(badLog.status == 2 && badLog.err.split(separator: "\n").count == 1, "\(badLog.err)")
        #expect(!FileManager.default.fileExists(atPath: root.child("state")))
    }

    @Test func cosignsARealLedgerAndRefusesEverythingElse() async throws {
        let root = TemporaryDirectory()
        let ledger = try WitnessedLedger.create(root.child("ledger"))
        let other = try WitnessedLedger.create(root.child("other"))
        let (keyFile, vkey) = try Self.witnessKey(root.path)
        let cosigner = try #require(Cosigner(verifierKey: vkey))
        let first = try ledger.head()
        let second = try other.head()
        let witness = try WitnessProcess([
            "--key", keyFile, "--state", root.child("state"), "--log", "\(first.origin)=\(first.vkey)",
            "--log", "\(second.origin)=\(second.vkey)",
        ])

        // First contact (old 0), then each new head with a consistency proof from the last one cosigned.
        let answer = try await witness.add("old 0\n\n" + first.note)
        #expect(answer.status == 200, "\(answer.body)")
        let cosigned = try #require(SignedNote(parsing: first.note + answer.body))
        #expect(cosigner.timestamp(of: cosigned) != nil)
        var last = first
        for name in ["Board", "Council", "Treasurer"] {
            try ledger.write(name)
            let head = try ledger.head()
            #expect(head.size > last.size)
            let answer = try await witness.add(
                "old \(last.size)\n" + (try ledger.proof(from: last.size)) + "\n" + head.note)
            #expect(answer.status == 200, "\(answer.body)")
            #expect(cosigner.timestamp(of: try #require(SignedNote(parsing: head.note + answer.body))) != nil)
            last = head
        }

        // Python, from the tlog-cosignature text alone: the witness's line on the head, with quorum 1.
        let headFile = root.child("head.txt")
        try (last.note + (try await witness.add("old \(last.size)\n\n" + last.note)).body).write(
            toFile: headFile, atomically: true, encoding: .utf8)
        let python = try runToCompletion(
            "/usr/bin/env",
            [
                "python3", IndependentVerifierScript.path, "--head", headFile, "--ledger", ledger.path, "--witness",
                "\(cosigner.name)=\(vkey)", "--quorum", "1",
            ])
        #expect(python.status == 0 && python.out.contains("\"cosigned_by\": [\"witness.test/a\"]"), "\(python.out)")

        // 409: the size cosigned, in the body, as text/x.tlog.size.
        let conflict = try await witness.add("old 0\n\n" + last.note)
        #expect(conflict.status == 409 && conflict.body == "\(last.size)\n" && conflict.type == "text/x.tlog.size")
        // 400: malformed, and an old size beyond the checkpoint's (a rollback to an older head).
        #expect(try await witness.add("old 1\n").status == 400)
        #expect(try await witness.add("old \(last.size)\n\n" + first.note).status == 400)
        // 404: a log this witness does not follow.
        let stranger = try WitnessedLedger.create(root.child("stranger"))
        #expect(try await witness.add("old 0\n\n" + (try stranger.head()).note).status == 404)
        // 403: the checkpoint signed by another key under the log's name.
        let foreign = try stranger.signWithAuthority(
            try #require(SignedNote(parsing: last.note)).text, origin: last.origin)
        #expect(try await witness.add("old \(last.size)\n\n" + foreign).status == 403)
        // 422: a proof from size 0 (the other log, never cosigned), and a size-0 tree with another root.
        let proofFromOne = try ledger.proof(from: 1)
        #expect(try await witness.add("old 0\n" + proofFromOne + "\n" + second.note).status == 422)
        let notEmpty = try other.signWithAuthority(
            "\(second.origin)\n0\n\(Base64.encode(Merkle.leafHash([1]).bytes))\n", origin: second.origin)
        #expect(try await witness.add("old 0\n\n" + notEmpty).status == 422)
        // A checkpoint carrying 16 other signatures of 5 kB each (as signed-note verifiers must accept) is
        // cosigned; 413 beyond the body cap; 405 for another method; the description for a person.
        let large = (0..<16).map { "\u{2014} other.test/\($0) " + Base64.encode([UInt8](repeating: 7, count: 3750)) }
        let crowded = last.note + large.map { $0 + "\n" }.joined()
        #expect(crowded.utf8.count > 16 * 5000)
        let accepted = try await witness.add("old \(last.size)\n\n" + crowded)
        #expect(accepted.status == 200, "\(accepted.body)")
        #expect(try await witness.add(String(repeating: "x", count: WitnessServer.maxBody + 1)).status == 413)
        let get = try await fetch(witness.port, "/add-checkpoint")
        #expect(get.status == .methodNotAllowed && get.headers[.allow] == "POST")
        let summary = String(buffer: try await fetch(witness.port, "/").body ?? ByteBuffer())
        #expect(summary.contains(vkey) && summary.contains("\(last.origin): cosigned up to size \(last.size)"))
        // Monitors: the latest cosigned checkpoint by origin hash.
        let hash = SHA256.hash(Array(last.origin.utf8)).hex
        let monitored = String(buffer: try await fetch(witness.port, "/\(hash)/checkpoint").body ?? ByteBuffer())
        #expect(monitored.hasPrefix(try #require(SignedNote(parsing: last.note)).text))
        #expect(cosigner.timestamp(of: try #require(SignedNote(parsing: monitored))) != nil)

        let stopped = witness.stop()
        #expect(stopped.status == 0, "\(stopped.err)")
        #expect(stopped.err.contains("refused (422)"), "refusals of signed checkpoints are logged")
    }

    /// A log whose `--log` is removed (its election over) while its state stays on disk: the restarted witness
    /// still serves monitors the last checkpoint it cosigned for it, read-only, and cosigns nothing more for it
    /// (404, an unknown log); an origin hash with no state, or that names no state file, is still 404.
    @Test func aLogNoLongerFollowedKeepsItsCheckpointForMonitors() async throws {
        let root = TemporaryDirectory()
        let kept = try WitnessedLedger.create(root.child("kept"))
        let retired = try WitnessedLedger.create(root.child("retired"))
        try retired.write("Board")
        let (keyFile, vkey) = try Self.witnessKey(root.path)
        let cosigner = try #require(Cosigner(verifierKey: vkey))
        let (keptHead, retiredHead) = (try kept.head(), try retired.head())
        let state = ["--key", keyFile, "--state", root.child("state")]
        let both = try WitnessProcess(
            state + [
                "--log", "\(keptHead.origin)=\(keptHead.vkey)", "--log", "\(retiredHead.origin)=\(retiredHead.vkey)",
            ])
        #expect(try await both.add("old 0\n\n" + keptHead.note).status == 200)
        #expect(try await both.add("old 0\n\n" + retiredHead.note).status == 200)
        let hash = SHA256.hash(Array(retiredHead.origin.utf8)).hex
        let served = try await fetch(both.port, "/\(hash)/checkpoint")
        #expect(served.status == .ok)
        #expect(both.stop().status == 0)

        let one = try WitnessProcess(state + ["--log", "\(keptHead.origin)=\(keptHead.vkey)"])
        let monitored = try await fetch(one.port, "/\(hash)/checkpoint")
        #expect(monitored.status == .ok)
        let text = String(buffer: monitored.body ?? ByteBuffer())
        #expect(text == String(buffer: served.body ?? ByteBuffer()))
        let note = try #require(SignedNote(parsing: text), "\(text)")
        #expect(note.text == (try #require(SignedNote(parsing: retiredHead.note))).text)
        #expect(cosigner.timestamp(of: note) != nil)
        // Never cosigned again, however it is asked.
        try retired.write("Council")
        let next = try retired.head()
        let proof = try retired.proof(from: retiredHead.size)
        #expect(try await one.add("old \(retiredHead.size)\n" + proof + "\n" + next.note).status == 404)
        #expect(try await fetch(one.port, "/\(hash)/checkpoint").body.map { String(buffer: $0) } == text)
        // Nothing else under --state is served: a hash with no state, and names that are not origin hashes.
        let unknown = SHA256.hash(Array("voteledger/none".utf8)).hex
        for path in ["/\(unknown)/checkpoint", "/lock/checkpoint", "/\(hash.uppercased())/checkpoint"] {
            #expect(try await fetch(one.port, path).status == .notFound, "\(path)")
        }
        #expect(one.stop().status == 0)
    }

    /// The authority rewrites its ledger with its own key (a copy of the ledger and its keys, written on
    /// differently): the forked head at the same size is a split view, at a larger size a fork; both 422,
    /// and the witness still extends the true history.
    @Test func aForkAndASplitViewByTheAuthorityAreRefused() async throws {
        let root = TemporaryDirectory()
        let ledger = try WitnessedLedger.create(root.child("ledger"))
        try ledger.write("Board")
        let (keyFile, _) = try Self.witnessKey(root.path)
        let start = try ledger.head()
        let witness = try WitnessProcess([
            "--key", keyFile, "--state", root.child("state"), "--log", "\(start.origin)=\(start.vkey)",
        ])
        #expect(try await witness.add("old 0\n\n" + start.note).status == 200)
        let forked = try ledger.copy(to: root.child("forked"))
        try ledger.write("Council")
        try forked.write("Forged council")
        let truth = try ledger.head()
        let lie = try forked.head()
        #expect(truth.size == lie.size && truth.origin == lie.origin && truth.vkey == lie.vkey)
        #expect(truth.note != lie.note)
        #expect(
            try await witness.add("old \(start.size)\n" + (try ledger.proof(from: start.size)) + "\n" + truth.note)
                .status == 200)
        // Split view: another root at the size cosigned.
        let splitRequest = "old \(truth.size)\n\n" + lie.note
        let split = try await witness.add(splitRequest)
        #expect(split.status == 422, "\(split.body)")
        // Fork: a larger tree of the forked history, with a proof that holds within that history.
        try forked.write("Forged treasurer")
        let forkHead = try forked.head()
        let fork = try await witness.add(
            "old \(truth.size)\n" + (try forked.proof(from: truth.size)) + "\n" + forkHead.note)
        #expect(fork.status == 422, "\(fork.body)")
        // The true history still extends.
        try ledger.write("Treasurer")
        let next = try ledger.head()
        #expect(
            try await witness.add("old \(truth.size)\n" + (try ledger.proof(from: truth.size)) + "\n" + next.note)
                .status == 200)
        // Both refusals are logged as evidence: the log's origin and the whole request, signed checkpoint and all.
        let stopped = witness.stop()
        #expect(stopped.status == 0)
        let evidence = stopped.err.split(separator: "\n").filter { $0.contains("refused (422)") }
        #expect(evidence.count == 2, "\(stopped.err)")
        #expect(evidence.allSatisfy { $0.contains("origin=\"\(truth.origin)\"") }, "\(stopped.err)")
        #expect(evidence.first?.contains("evidence=" + Base64.encode(Array(splitRequest.utf8))) == true)
    }

    /// Evidence is logged at most ten times a minute for a log (a flood of refusals cannot fill the disk), with
    /// its origin; other logs are counted apart.
    @Test func evidenceIsRateLimitedPerLog() {
        let now = Locked<Int64>(1_800_000_000_000)
        let evidence = WitnessServer.Evidence(clock: { now.withLock { $0 } })
        let request = Array("old 3\n\nexample.com/log\n4\nAAAA\n\n\u{2014} example.com/log AAAA\n".utf8)
        let lines = (0..<12).map { _ in evidence.line(request, reason: "another root") }
        #expect(lines.prefix(10).allSatisfy { $0?.contains("origin=\"example.com/log\"") == true })
        #expect(lines.suffix(2).allSatisfy { $0 == nil })
        let other = Array("old 0\n\nexample.org/other\n1\nAAAA\n\n\u{2014} example.org/other AAAA\n".utf8)
        #expect(evidence.line(other, reason: "another root")?.contains("origin=\"example.org/other\"") == true)
        // The next minute, the log's first line says how many were not logged.
        now.withLock { $0 += 60_000 }
        let next = evidence.line(request, reason: "another root")
        #expect(next?.hasSuffix("(and 2 more refused before it, not logged)") == true, "\(next ?? "")")
    }

    /// SIGKILL right after an answer: the size cosigned was on disk before the answer, so the restarted
    /// witness refuses old 0 with 409 and that size.
    @Test func aWitnessKilledAfterAnsweringKeepsItsSize() async throws {
        let root = TemporaryDirectory()
        let ledger = try WitnessedLedger.create(root.child("ledger"))
        try ledger.write("Board")
        let (keyFile, _) = try Self.witnessKey(root.path)
        let head = try ledger.head()
        let arguments = ["--key", keyFile, "--state", root.child("state"), "--log", "\(head.origin)=\(head.vkey)"]
        let witness = try WitnessProcess(arguments)
        #expect(try await witness.add("old 0\n\n" + head.note).status == 200)
        #expect(witness.stop(sending: SIGKILL).status == SIGKILL)
        let restarted = try WitnessProcess(arguments)
        let conflict = try await restarted.add("old 0\n\n" + head.note)
        #expect(conflict.status == 409 && conflict.body == "\(head.size)\n")
        #expect(try await restarted.add("old \(head.size)\n\n" + head.note).status == 200)
        #expect(restarted.stop().status == 0)
        // A damaged state file stops the start, in one line; nothing is reset.
        let state = root.child("state/" + SHA256.hash(Array(head.origin.utf8)).hex)
        try "damaged\n".write(toFile: state, atomically: true, encoding: .utf8)
        #expect(throws: VoteError.self) { try WitnessProcess(arguments) }
        #expect(try String(contentsOfFile: state, encoding: .utf8) == "damaged\n")
    }

    /// `vote head --witness …` (an election run from the CLI alone): the head with the cosignatures of the
    /// witnesses that answer, each asked from the size it last cosigned; one that is down is named on standard
    /// error and the head still printed; the cosigned head audits under quorum 2; `--json` names who cosigned.
    @Test func voteHeadAsksWitnessesWithoutAServer() async throws {
        let root = TemporaryDirectory()
        let ledger = try WitnessedLedger.create(root.child("ledger"))
        let head = try ledger.head()
        var witnesses: [WitnessProcess] = []
        var options: [String] = []
        var audit: [String] = []
        for name in ["a", "b", "c"] {
            let (key, vkey) = try Self.witnessKey(root.path, name: "witness.test/\(name)")
            let witness = try WitnessProcess([
                "--key", key, "--state", root.child("state-\(name)"), "--log", "\(head.origin)=\(head.vkey)",
            ])
            witnesses.append(witness)
            options += ["--witness", "witness.test/\(name)=http://127.0.0.1:\(witness.port)=\(vkey)"]
            audit += ["--witness", "witness.test/\(name)=\(vkey)"]
        }
        #expect(witnesses[2].stop().status == 0)
        options += ["--witness-timeout", "600"]  // the witnesses up answer however loaded the machine is
        let cosigners = try audit.enumerated().filter { $0.offset % 2 == 1 }.map {
            try #require(Cosigner(verifierKey: String($0.element.split(separator: "=", maxSplits: 1)[1])))
        }
        for block in ["", "Board", "Council"] {
            if !block.isEmpty { try ledger.write(block) }
            let printed = try VoteBinary.run(["head", "--ledger", ledger.path] + options)
            #expect(printed.status == 0, "\(printed.err)")
            #expect(printed.err.contains("witness witness.test/c did not cosign"), "\(printed.err)")
            let note = try #require(SignedNote(parsing: printed.out))
            #expect(cosigners.map { $0.timestamp(of: note) != nil } == [true, true, false], "\(printed.out)")
            #expect(note.text == (try #require(SignedNote(parsing: (try ledger.head()).note))).text)
            let file = root.child("head.txt")
            try printed.out.write(toFile: file, atomically: true, encoding: .utf8)
            let audited = try VoteBinary.run(
                ["audit", "--head", file, "--ledger", ledger.path, "--quorum", "2"] + audit)
            #expect(audited.status == 0, "\(audited.err)")
        }
        let json = try VoteBinary.run(["head", "--ledger", ledger.path, "--json"] + options)
        #expect(json.status == 0, "\(json.err)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any])
        #expect(object["cosigned_by"] as? [String] == ["witness.test/a", "witness.test/b"], "\(json.out)")
        let checkpoint = try #require(SignedNote(parsing: object["checkpoint"] as? String ?? ""))
        #expect(cosigners.map { $0.timestamp(of: checkpoint) != nil } == [true, true, false], "\(json.out)")
        // A mistyped witness is a usage error, before anything is asked.
        let mistyped = try VoteBinary.run(["head", "--ledger", ledger.path, "--witness", "witness.test/a=ftp://x=y"])
        #expect(mistyped.status == 2 && mistyped.err.contains("--witness must be NAME=https://"), "\(mistyped.err)")
        for witness in witnesses.prefix(2) { #expect(witness.stop().status == 0) }
    }

    /// Cosigning rounds ask a witness on one kept connection (counted by a TCP proxy, `keepalive_server.py
    /// --proxy`, in front of a real `vote witness serve`), as public witness networks expect of a log, the first
    /// round's 409 and its retry included; when the connection is closed between rounds (a witness's idle timeout),
    /// the next round connects once more and is cosigned.
    @Test func cosigningRoundsShareOneConnectionToAWitness() throws {
        let root = TemporaryDirectory()
        let ledger = try WitnessedLedger.create(root.child("ledger"))
        let first = try ledger.head()
        let (key, vkey) = try Self.witnessKey(root.path)
        let witness = try WitnessProcess([
            "--key", key, "--state", root.child("state"), "--log", "\(first.origin)=\(first.vkey)",
        ])
        let proxy = try KeepAliveServer(["--proxy", String(witness.port)], in: root.path)
        let endpoint = try WitnessEndpoint(option: "witness.test/a=http://127.0.0.1:\(proxy.port)=\(vkey)")
        var old: UInt64? = nil
        func round(_ name: String) throws {
            try ledger.write(name)
            let head = try ledger.head()
            let note = try #require(SignedNote(parsing: head.note))
            let checkpoint = try #require(Checkpoint(text: note.text))
            let source = try FileBlockSource(path: ledger.path)
            switch endpoint.cosign(note, checkpoint: checkpoint, source: source, from: old, timeout: .seconds(300)) {
            case .success(let lines):
                #expect(lines.count == 1, "\(name)")
                old = head.size
            case .failure(let refusal): Issue.record("\(name): \(refusal.reason)")
            }
        }
        for name in ["Board", "Council", "Audit", "Finance", "Ethics"] { try round(name) }
        #expect(proxy.count("connection") == 1, "\(proxy.log)")
        try proxy.closeConnections()
        try round("Elections")
        #expect(proxy.count("connection") == 2, "\(proxy.log)")
        #expect(witness.stop().status == 0)
    }

    /// A witness served over HTTPS (`vote witness serve --tls-cert --tls-key`) is asked at an https:// URL, by
    /// name or by IP address, its certificate checked against the trusted authorities (here the test's own,
    /// through OpenSSL's `SSL_CERT_FILE`); under another authority it is refused, saying why, and the head is
    /// printed without its line.
    @Test func aWitnessOverHTTPSIsAskedWithItsCertificateChecked() async throws {
        let root = TemporaryDirectory()
        let ledger = try WitnessedLedger.create(root.child("ledger"))
        let head = try ledger.head()
        let (key, vkey) = try Self.witnessKey(root.path)
        let certificate = try TestCertificate("witness", in: root.path)
        let stranger = try TestCertificate("stranger", in: root.path)
        let witness = try WitnessProcess([
            "--key", key, "--state", root.child("state"), "--log", "\(head.origin)=\(head.vkey)",
            "--tls-cert", certificate.certificate, "--tls-key", certificate.key,
        ])
        #expect(witness.program.firstLine.hasPrefix("listening on https://"))
        let cosigner = try #require(Cosigner(verifierKey: vkey))
        func cosignedHead(
            _ host: String, trusting authority: TestCertificate
        ) throws -> (note: SignedNote?, err: String) {
            var environment = VoteBinary.environment(clockOffset: 0)
            environment["SSL_CERT_FILE"] = authority.certificate
            let run = try runToCompletion(
                VoteBinary.path,
                [
                    "head", "--ledger", ledger.path, "--witness-timeout", "600", "--witness",
                    "witness.test/a=https://\(host):\(witness.port)=\(vkey)",
                ], environment: environment)
            #expect(run.status == 0, "\(run.err)")
            return (SignedNote(parsing: run.out), run.err)
        }
        for host in ["localhost", "127.0.0.1"] {
            let trusted = try cosignedHead(host, trusting: certificate)
            #expect(trusted.note.flatMap { cosigner.timestamp(of: $0) } != nil, "\(host): \(trusted.err)")
        }
        let untrusted = try cosignedHead("localhost", trusting: stranger)
        #expect(untrusted.note.map { cosigner.timestamp(of: $0) == nil } == true)
        #expect(untrusted.err.contains("did not cosign: its TLS certificate is not trusted"), "\(untrusted.err)")
        #expect(witness.stop().status == 0)
    }

    /// Go's `golang.org/x/mod/sumdb/note` (Debian's golang-golang-x-mod-dev, GOPATH mode) opens the cosigned
    /// head with the log's verifier key: the log's signature verifies, the witness's line is kept as an
    /// unverified signature of an unknown key, as the signed-note spec requires.
    @Test(
        .enabled(
            if: GoNote.available, "needs go and golang-golang-x-mod-dev (apt install golang-go golang-golang-x-mod-dev)"
        ))
    func goNoteOpensTheCosignedHead() async throws {
        let root = TemporaryDirectory()
        let ledger = try WitnessedLedger.create(root.child("ledger"))
        let (keyFile, _) = try Self.witnessKey(root.path)
        let head = try ledger.head()
        let witness = try WitnessProcess([
            "--key", keyFile, "--state", root.child("state"), "--log", "\(head.origin)=\(head.vkey)",
        ])
        let line = try await witness.add("old 0\n\n" + head.note)
        #expect(line.status == 200)
        #expect(witness.stop().status == 0)
        let noteFile = root.child("cosigned.note")
        try (head.note + line.body).write(toFile: noteFile, atomically: true, encoding: .utf8)
        let opened = try GoNote.open(noteFile, vkey: head.vkey, in: root.path)
        #expect(opened.status == 0, "\(opened.err)")
        let text = try #require(SignedNote(parsing: head.note)).text
        #expect(opened.out == "verified \(head.origin)\nunverified 1\n" + text, "\(opened.out)")
        // A note whose log signature is altered is refused by Go as well.
        var altered = try #require(SignedNote(parsing: head.note + line.body))
        altered.signatures[0].payload[8] ^= 1
        try altered.serialized.write(toFile: noteFile, atomically: true, encoding: .utf8)
        #expect(try GoNote.open(noteFile, vkey: head.vkey, in: root.path).status != 0)
    }
}

/// Where the independent Python verifier is.
enum IndependentVerifierScript {
    static let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Tools/verify_ledger.py").standardized.path
}

/// Go's sumdb note package, run in GOPATH mode from Debian's packages.
enum GoNote {
    static let gopath = "/usr/share/gocode"
    static let available =
        shell("command -v go").status == 0
        && FileManager.default.fileExists(atPath: gopath + "/src/golang.org/x/mod/sumdb/note/note.go")

    static let program = """
        package main

        import (
        \t"fmt"
        \t"os"

        \t"golang.org/x/mod/sumdb/note"
        )

        func main() {
        \tverifier, err := note.NewVerifier(os.Args[1])
        \tif err != nil {
        \t\tfmt.Fprintln(os.Stderr, err)
        \t\tos.Exit(2)
        \t}
        \tmsg, err := os.ReadFile(os.Args[2])
        \tif err != nil {
        \t\tfmt.Fprintln(os.Stderr, err)
        \t\tos.Exit(2)
        \t}
        \tn, err := note.Open(msg, note.VerifierList(verifier))
        \tif err != nil {
        \t\tfmt.Fprintln(os.Stderr, err)
        \t\tos.Exit(1)
        \t}
        \tfor _, sig := range n.Sigs {
        \t\tfmt.Printf("verified %s\\n", sig.Name)
        \t}
        \tfmt.Printf("unverified %d\\n", len(n.UnverifiedSigs))
        \tfmt.Print(n.Text)
        }
        """

    /// Runs the program on the note in `file` with the verifier key `vkey`, building in `directory`.
    static func open(_ file: String, vkey: String, in directory: String) throws -> ProgramRun {
        let source = directory + "/opennote.go"
        try program.write(toFile: source, atomically: true, encoding: .utf8)
        var environment = ProcessInfo.processInfo.environment
        environment["GOPATH"] = gopath
        environment["GO111MODULE"] = "off"
        environment["GOCACHE"] = directory + "/gocache"
        environment["GOFLAGS"] = ""
        return try runToCompletion("/usr/bin/env", ["go", "run", source, vkey, file], environment: environment)
    }
}
