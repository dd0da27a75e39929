import Foundation
import Hummingbird
import HummingbirdTesting
import Ledger
import TestSupport
import Testing
import TlogWitness
import VoteLedger

@testable import VoteServer

/// `vote serve --witness NAME=URL=VKEY …`: an election with three real witnesses (`vote witness serve`) on
/// loopback. A vote's receipt carries the cosignatures of the witnesses that are up; the head route serves
/// the head the witnesses cosigned, naming them; a receipt issued while one witness is down audits on its own
/// under quorum 2 with `vote audit` and the Python verifier, and quorum 3 then fails; a witness that never
/// answers holds votes no longer than its timeout.
@Suite(.serialized) struct CosigningTests {
    /// The head route's answer: the note and the witnesses it names.
    static func head(_ port: Int) async throws -> (note: SignedNote, size: UInt64, cosignedBy: [String]) {
        let response = try await fetch(port, "/api/v1/head")
        let text = String(buffer: response.body ?? ByteBuffer())
        let note = try #require(SignedNote(parsing: text), "\(text)")
        let names = (response.headers[HTTPFields.Element.Name("VoteLedger-Cosigned-By")!] ?? "").split(separator: ", ")
        return (note, try #require(Checkpoint(text: note.text)).treeSize, names.map(String.init))
    }

    /// Asks the head route until `done` holds (each witness answers in its own time: no tight deadline is
    /// assumed; after `waitDeadline` of asking, a head that never comes is a failure, naming the size and
    /// cosigners last served, rather than a hung test).
    static func waitForHead(
        _ port: Int, _ done: (UInt64, [String]) -> Bool
    ) async throws -> (note: SignedNote, size: UInt64, cosignedBy: [String]) {
        try await waitFor(
            "the head route to serve the head expected", every: .milliseconds(50), read: { try await head(port) },
            until: { done($0.size, $0.cosignedBy) })
    }

    /// A vote by `token` for candidate 1; its receipt.
    static func vote(_ port: Int, token: String) async throws -> String {
        let cast = try await fetch(
            port, "/api/v1/places/1/votes", .post, headers: jsonHeaders, body: body(["candidate": 1, "token": token]))
        #expect(cast.status == .created)
        return object(cast.body)["receipt"] as? String ?? ""
    }

    static let names = ["witness.test/campaign", "witness.test/observers", "witness.test/auditor"]

    /// Three witnesses (`names`) following `election`'s ledger, each with its state beside it: the ledger's
    /// `vote head --json`, its `ORIGIN=VKEY`, the processes, the writer's `--witness` options (with a 600 s
    /// timeout: a witness that is up answers however loaded the machine is; one that is down refuses the
    /// connection) and the auditor's `--witness NAME=VKEY` options.
    static func witnesses(
        _ election: ProcessLedger
    ) throws -> (
        head: [String: Any], log: String, processes: [WitnessProcess], options: [String], audit: [String]
    ) {
        let head = try VoteBinary.run(["head", "--json"] + election.location)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(head.out.utf8)) as? [String: Any])
        let log = "\(json["origin"] as? String ?? "")=\(json["verifier_key"] as? String ?? "")"
        var processes: [WitnessProcess] = []
        var options = ["--witness-timeout", "600"]
        var audit: [String] = []
        for name in names {
            let (key, vkey) = try WitnessServeTests.witnessKey(election.root, name: name)
            let state = election.root + "/state-" + name.dropFirst("witness.test/".count)
            let witness = try WitnessProcess(["--key", key, "--state", state, "--log", log])
            processes.append(witness)
            options += ["--witness", "\(name)=http://127.0.0.1:\(witness.port)=\(vkey)"]
            audit += ["--witness", "\(name)=\(vkey)"]
        }
        return (json, log, processes, options, audit)
    }

    @Test func aReceiptAuditsUnderQuorumTwoWithOneWitnessDown() async throws {
        let election = try ProcessLedger("Witnessed Union")
        let (admin, tokens) = try await election.register(candidates: ["Ada"], voters: ["v1", "v2", "v3"])
        let (json, log, witnesses, options, audit) = try Self.witnesses(election)
        let voting = try ServeProcess(
            location: election.location, clockOffset: hour + 1000, adminTokenFile: election.tokenFile,
            arguments: options)

        // All three up: the first receipt carries all three cosignatures, and so does the head route.
        let firstReceipt = try await Self.vote(voting.port, token: tokens[0])
        let first = try #require(TlogProof(parsing: firstReceipt))
        #expect(
            first.checkpoint.signatures.map(\.name) == [try #require(json["origin"] as? String)] + Self.names,
            "\(firstReceipt)")
        let firstSize = try #require(Checkpoint(text: first.checkpoint.text)).treeSize
        let cosigned = try await Self.waitForHead(voting.port) { $0 >= firstSize && $1.count == 3 }
        #expect(cosigned.cosignedBy == Self.names)

        // The auditor's witness goes down: votes still go through, their receipts cosigned by the other two.
        #expect(witnesses[2].stop().status == 0)
        let receipt = try await Self.vote(voting.port, token: tokens[1])
        let proof = try #require(TlogProof(parsing: receipt))
        #expect(proof.checkpoint.signatures.count == 3, "\(receipt)")
        let size = try #require(Checkpoint(text: proof.checkpoint.text)).treeSize
        let two = try await Self.waitForHead(voting.port) { $0 >= size && $1.count == 2 }
        #expect(two.cosignedBy == Array(Self.names.prefix(2)))
        let metrics = MetricsTests.parse(try await fetch(voting.port, "/metrics", headers: adminHeaders(admin)).body)
        #expect(metrics["vote_witness_up{witness=\"witness.test/auditor\"}"] == 0, "\(metrics)")
        #expect(metrics["vote_witness_up{witness=\"witness.test/campaign\"}"] == 1, "\(metrics)")

        // The receipt audits on its own (no published head, offline and against the ledger) under quorum 2;
        // quorum 3 fails naming who cosigned; so does the Python verifier.
        let receiptFile = election.root + "/vote.tlog-proof"
        try receipt.write(toFile: receiptFile, atomically: true, encoding: .utf8)
        let key = ["--key", try #require(json["verifier_key"] as? String)]
        for source in [["--ledger", election.ledger], key] {
            let check = ["audit", receiptFile] + source + audit
            let passed = try VoteBinary.run(check + ["--quorum", "2"], clockOffset: hour + 1000)
            #expect(passed.status == 0, "\(passed.err)")
            #expect(passed.out.contains("cosigned by 2 of 3 witnesses (quorum 2)"), "\(passed.out)")
            let failed = try VoteBinary.run(check + ["--quorum", "3"], clockOffset: hour + 1000)
            #expect(failed.status == 3)
            #expect(
                failed.err.contains("the receipt's head has 2 valid cosignatures of the 3 witnesses named"),
                "\(failed.err)")
        }
        let python = ["python3", IndependentVerifierScript.path, "--receipt", receiptFile, "--ledger", election.ledger]
        let pythonPasses = try runToCompletion("/usr/bin/env", python + ["--quorum", "2"] + audit)
        #expect(pythonPasses.status == 0 && pythonPasses.out.contains("\"cosigned_by\""), "\(pythonPasses.out)")
        let pythonFails = try runToCompletion("/usr/bin/env", python + audit)
        #expect(pythonFails.status == 3, "\(pythonFails.out)")

        // The auditor's witness comes back on its address after the last vote: it is asked again in the
        // background and cosigns the final head, from the size it cosigned before, with no new block.
        let back = try WitnessProcess([
            "--key", election.root + "/witness.test-auditor.key", "--state", election.root + "/state-auditor", "--log",
            log, "--listen", "127.0.0.1:\(witnesses[2].port)",
        ])
        let all = try await Self.waitForHead(voting.port) { $0 == two.size && $1.count == 3 }
        #expect(all.note.text == two.note.text)
        #expect(back.stop().status == 0)

        let stopped = voting.stop()
        #expect(stopped.status == 0)
        #expect(stopped.err.contains("witness witness.test/auditor did not cosign"), "\(stopped.err)")
        #expect(stopped.err.contains("witness witness.test/auditor is up again"), "\(stopped.err)")
        for witness in witnesses.prefix(2) { #expect(witness.stop().status == 0) }
    }

    /// A witness that accepts connections and never answers, asked with a 2-second timeout: the first vote
    /// waits for it that long at most (were it waited for longer, the test would hang), later ones not at all
    /// (it is down); every receipt is the authority's alone, and the server stops cleanly.
    @Test func aHangingWitnessStallsNoVote() async throws {
        let election = try ProcessLedger("Hung Union")
        let (_, tokens) = try await election.register(candidates: ["Ada"], voters: ["v1", "v2", "v3"])
        let (_, vkey) = try WitnessServeTests.witnessKey(election.root, name: "witness.test/hung")
        let silent = try SilentListener()
        let voting = try ServeProcess(
            location: election.location, clockOffset: hour + 1000, adminTokenFile: election.tokenFile,
            arguments: [
                "--witness", "witness.test/hung=http://127.0.0.1:\(silent.port)=\(vkey)", "--witness-timeout", "2",
            ])
        for token in tokens {
            let receipt = try #require(TlogProof(parsing: try await Self.vote(voting.port, token: token)))
            #expect(receipt.checkpoint.signatures.count == 1)
        }
        let head = try await Self.head(voting.port)
        #expect(head.cosignedBy.isEmpty && head.size > 0)
        #expect(voting.stop().status == 0)
    }
}

extension CosigningTests {
    /// A witness that cosigned another history of this ledger (the authority showed it a fork with more
    /// events) never cosigns this one: the server says so in its log, and again, with the witness's answer,
    /// when the witness refuses once more while it is down; it serves the head without its line.
    /// A --witness whose NAME is not its key's name is refused before anything starts.
    @Test func aWitnessShownAnotherHistoryIsReported() async throws {
        let root = TemporaryDirectory()
        let ledger = try WitnessedLedger.create(root.child("ledger"))
        let fork = try ledger.copy(to: root.child("fork"))
        for name in ["Forged board", "Forged council"] { try fork.write(name) }
        let forkHead = try fork.head()
        let (key, vkey) = try WitnessServeTests.witnessKey(root.path)
        let witness = try WitnessProcess([
            "--key", key, "--state", root.child("state"), "--log", "\(forkHead.origin)=\(forkHead.vkey)",
        ])
        #expect(try await witness.add("old 0\n\n" + forkHead.note).status == 200)

        let misnamed = try VoteBinary.run([
            "serve", "--ledger", ledger.path, "--witness", "other.test/w=http://127.0.0.1:\(witness.port)=\(vkey)",
        ])
        #expect(misnamed.status == 2 && misnamed.err.split(separator: "\n").count == 1, "\(misnamed.err)")
        let server = try ServeProcess(
            ledger: ledger.path, clockOffset: 0, adminTokenFile: root.child("admin-token"),
            arguments: ["--witness", "witness.test/a=http://127.0.0.1:\(witness.port)=\(vkey)"])
        server.waitForError(containing: "witness witness.test/a did not cosign")
        let head = try await Self.head(server.port)
        #expect(head.cosignedBy.isEmpty)
        // Asked again 5 s later while it is down, it refuses again: that is logged too, with its answer.
        try await waitFor(
            "the witness's refusal on its retry in the server's log", every: .milliseconds(100),
            read: { server.program.errors.text }, until: { $0.contains("witness.test/a, down, still did not cosign") })
        let stopped = server.stop()
        #expect(stopped.status == 0)
        #expect(stopped.err.contains("more than this ledger's") && stopped.err.contains("it saw another history"))
        let later = stopped.err.split(separator: "\n").filter { $0.contains("witness.test/a, down, still did not") }
        #expect(later.count == 1 && later[0].contains("it saw another history"), "\(stopped.err)")
        #expect(witness.stop().status == 0)
    }
}

extension CosigningTests {
    /// The CLI writer (an election run with no `vote serve`): `vote cast --witness …` writes a receipt that
    /// carries the cosignatures of the witnesses that answered (one down is named on standard error), which
    /// audits on its own under quorum 2 and fails quorum 3; `vote receipt --witness …` issues it again, cosigned
    /// under the head of the moment; a bulk cast cosigns each batch's head for its receipts, naming the witness
    /// that is down once; `--witness` mistyped, or in bulk with no receipts to carry it, is refused before any
    /// vote.
    @Test func voteCastGathersCosignaturesForItsReceipt() async throws {
        let election = try ProcessLedger("CLI Union")
        let (_, tokens) = try await election.register(candidates: ["Ada"], voters: ["v1", "v2", "v3"])
        let (json, _, witnesses, options, audit) = try Self.witnesses(election)
        #expect(witnesses[2].stop().status == 0)
        let votes = election.root + "/votes.csv"
        try "\(tokens[1]),1\n\(tokens[2]),1\n".write(toFile: votes, atomically: true, encoding: .utf8)
        let mistyped = ["--witness", "witness.test/campaign=ftp://127.0.0.1:1=x"]
        for refused in [["--from", votes] + options, ["--candidate", "1", "--token", tokens[0]] + mistyped] {
            let run = try VoteBinary.run(
                ["cast", "--place", "1"] + refused + election.location, clockOffset: hour + 1000)
            #expect(run.status == 2 && run.err.split(separator: "\n").count == 1, "\(run.err)")
        }

        let receipt = election.root + "/vote.tlog-proof"
        let cast = try VoteBinary.run(
            ["cast", "--place", "1", "--candidate", "1", "--token", tokens[0], "--receipt-out", receipt] + options
                + election.location, clockOffset: hour + 1000)
        #expect(cast.status == 0, "\(cast.err)")
        #expect(cast.err.contains("witness witness.test/auditor did not cosign"), "\(cast.err)")
        let proof = try #require(TlogProof(parsing: try String(contentsOfFile: receipt, encoding: .utf8)))
        #expect(proof.checkpoint.signatures.map(\.name) == [json["origin"] as? String ?? ""] + Self.names.prefix(2))
        let check = ["audit", receipt] + election.location + audit
        #expect(try VoteBinary.run(check + ["--quorum", "2"], clockOffset: hour + 1000).status == 0)
        #expect(try VoteBinary.run(check + ["--quorum", "3"], clockOffset: hour + 1000).status == 3)

        let again = try VoteBinary.run(
            ["receipt", "--place", "1", "--token", tokens[0]] + options + election.location, clockOffset: hour + 1000)
        #expect(again.status == 0, "\(again.err)")
        let reissued = try #require(TlogProof(parsing: again.out))
        #expect(reissued.checkpoint.signatures.count == 3 && reissued.extra == proof.extra)

        let receipts = election.root + "/receipts"
        let bulk = try VoteBinary.run(
            ["cast", "--place", "1", "--from", votes, "--batch", "1", "--receipts-out", receipts] + options
                + election.location, clockOffset: hour + 1000)
        #expect(bulk.status == 0, "\(bulk.err)")
        #expect(
            bulk.err.components(separatedBy: "witness witness.test/auditor did not cosign").count == 2, "\(bulk.err)")
        var heads: Set<String> = []
        for line in [1, 2] {
            let file = receipts + "/line-\(line).tlog-proof"
            let bulkProof = try #require(TlogProof(parsing: try String(contentsOfFile: file, encoding: .utf8)))
            #expect(bulkProof.checkpoint.signatures.count == 3)
            heads.insert(bulkProof.checkpoint.text)
            #expect(try VoteBinary.run(["audit", file, "--quorum", "2"] + election.location + audit).status == 0)
        }
        #expect(heads.count == 2)  // a head a batch
        for witness in witnesses.prefix(2) { #expect(witness.stop().status == 0) }
    }
}

extension CosigningTests {
    /// A witness that answers as no witness of ours does: a chunked body (as Go's net/http may send one), and a
    /// refusal whose text holds terminal control sequences. The chunked 409 is read (the size it names is asked
    /// from next), and the refusal reaches standard error on one line with its control characters as "?".
    @Test func aWitnessAnswerIsReadWhateverItsFramingAndShownSafely() async throws {
        let root = TemporaryDirectory()
        let ledger = try WitnessedLedger.create(root.child("ledger"))
        let (_, vkey) = try WitnessServeTests.witnessKey(root.path)
        let listener = try SilentListener()
        let conflict = "HTTP/1.1 409 Conflict\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n1\r\n1\r\n\n\r\n0\r\n\r\n"
        let hostile = "HTTP/1.1 422 Unprocessable\r\nContent-Length: 21\r\n\r\nno\u{1B}[2J\u{7}fork\u{1B}]0;x\u{7}!!!\n"
        let requests = listener.answer([conflict, hostile])
        let printed = try VoteBinary.run([
            "head", "--ledger", ledger.path, "--witness-timeout", "600", "--witness",
            "witness.test/a=http://127.0.0.1:\(listener.port)=\(vkey)",
        ])
        #expect(printed.status == 0, "\(printed.err)")
        #expect(printed.err.contains("witness witness.test/a did not cosign: it answered 422: no?[2J?fork?]0;x?!!!\n"))
        #expect(!printed.err.contains("\u{1B}"))
        let asked = requests()
        #expect(asked.count == 2 && asked[0].contains("\r\n\r\nold 0\n") && asked[1].contains("\r\n\r\nold 1\n"))
    }
}

/// A TCP listener on loopback that never accepts: a connection to it completes (the kernel's backlog) and
/// then hears nothing, as a hung witness would answer.
final class SilentListener {
    let descriptor: Int32
    let port: Int

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.descriptor = descriptor
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(descriptor, pointer, length) == 0 && listen(descriptor, 16) == 0
                    && getsockname(descriptor, pointer, &length) == 0
            }
        }
        guard bound else {
            close(descriptor)
            throw VoteError(.io, "cannot listen on loopback")
        }
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(descriptor) }

    /// Accepts one connection for each of `responses`, in turn, on a thread: reads its request (headers and
    /// Content-Length body) and writes the response as it is. Returns a function that waits for the thread and
    /// gives the requests read.
    func answer(_ responses: [String]) -> () -> [String] {
        let done = DispatchSemaphore(value: 0)
        let requests = Locked<[String]>([])
        Thread.detachNewThread { [descriptor] in
            for response in responses {
                let connection = accept(descriptor, nil, nil)
                guard connection >= 0 else { break }
                var request: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: 4096)
                while true {
                    let count = read(connection, &buffer, buffer.count)
                    if count <= 0 { break }
                    request += buffer[..<count]
                    let text = String(decoding: request, as: UTF8.self)
                    if let end = text.range(of: "\r\n\r\n"),
                        let field = text[..<end.lowerBound].split(separator: "\r\n").first(where: {
                            $0.lowercased().hasPrefix("content-length:")
                        }),
                        let length = Int(field.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)),
                        text.utf8.count - text[..<end.upperBound].utf8.count >= length
                    {
                        break
                    }
                }
                requests.withLock { $0.append(String(decoding: request, as: UTF8.self)) }
                _ = Array(response.utf8).withUnsafeBytes { write(connection, $0.baseAddress, $0.count) }
                close(connection)
            }
            done.signal()
        }
        return {
            done.wait()
            return requests.withLock { $0 }
        }
    }
}

extension CosigningTests {
    /// `--witness-interval 3`: 40 votes sent in ten waves over about a second make a block or more each, yet
    /// the witness is asked at most once every 3 s (the cosignatures it logged are at most the time the server
    /// ran over the interval, plus one; a round each block would be ten or more); every receipt still carries
    /// the witness's cosignature on a head that covers its vote, and audits with it against the ledger.
    @Test func roundsStartAtMostOncePerInterval() async throws {
        let election = try ProcessLedger("Paced Union")
        let (_, tokens) = try await election.register(candidates: ["Ada"], voters: (1...40).map { "v\($0)" })
        let head = try VoteBinary.run(["head", "--json"] + election.location)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(head.out.utf8)) as? [String: Any])
        let log = "\(json["origin"] as? String ?? "")=\(json["verifier_key"] as? String ?? "")"
        let name = "witness.test/paced"
        let (key, vkey) = try WitnessServeTests.witnessKey(election.root, name: name)
        let witness = try WitnessProcess(["--key", key, "--state", election.root + "/state-paced", "--log", log])
        let interval = 3.0
        let started = ContinuousClock.now
        let voting = try ServeProcess(
            location: election.location, clockOffset: hour + 1000, adminTokenFile: election.tokenFile,
            arguments: [
                "--witness", "\(name)=http://127.0.0.1:\(witness.port)=\(vkey)", "--witness-timeout", "600",
                "--witness-interval", "\(interval)", "--block-hold", "0",
            ])
        let port = voting.port
        let receipts = try await withThrowingTaskGroup(of: String.self) { group in
            for wave in 0..<10 {
                for token in tokens[(wave * 4)..<(wave * 4 + 4)] {
                    group.addTask { try await Self.vote(port, token: token) }
                }
                try await Task.sleep(for: .milliseconds(100))
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(voting.stop().status == 0)
        let ran = (ContinuousClock.now - started) / .seconds(interval)
        let asked = witness.stop().err.components(separatedBy: "cosigned: \u{2014} \(name) ").count - 1
        #expect(asked >= 1 && asked <= 1 + Int(ran), "\(asked) rounds in \(ran) intervals")

        let cosigner = try #require(Cosigner(verifierKey: vkey))
        var heads: Set<String> = []
        for (index, receipt) in receipts.enumerated() {
            let proof = try #require(TlogProof(parsing: receipt), "\(receipt)")
            #expect(cosigner.timestamp(of: proof.checkpoint) != nil, "\(receipt)")
            heads.insert(proof.checkpoint.text)
            let file = election.root + "/vote-\(index).tlog-proof"
            try receipt.write(toFile: file, atomically: true, encoding: .utf8)
            let audit = try VoteBinary.run(
                ["audit", file, "--witness", "\(name)=\(vkey)", "--quorum", "1"] + election.location,
                clockOffset: hour + 1000)
            #expect(audit.status == 0, "\(audit.err)")
        }
        #expect(heads.count <= asked, "\(heads.count) heads in receipts, \(asked) rounds")
    }
}

extension CosigningTests {
    /// The refusals of a witness that is down are logged at most once every interval, each line with the
    /// witness's answer; the first after it went down at once, then one an interval with the count of those
    /// left out. A witness that comes back and fails again starts afresh.
    @Test func refusalsOfAWitnessThatIsDownAreRateLimited() {
        var known = Cosigning.Known()
        known.up = false
        let start = ContinuousClock.now
        #expect(known.logsRefusal(at: start, every: .seconds(60)) == 0)
        for second in 5...55 where second % 5 == 0 {
            #expect(known.logsRefusal(at: start + .seconds(second), every: .seconds(60)) == nil)
        }
        #expect(known.logsRefusal(at: start + .seconds(60), every: .seconds(60)) == 11)
        #expect(known.logsRefusal(at: start + .seconds(61), every: .seconds(60)) == nil)
        #expect(known.logsRefusal(at: start + .seconds(125), every: .seconds(60)) == 1)
    }
}
