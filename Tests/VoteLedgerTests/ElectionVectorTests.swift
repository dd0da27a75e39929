import Foundation
import TestSupport
import Testing

/// The election vectors in `Ledger/vectors/` (FORMAT.md §10): rebuilding them reproduces the committed
/// files byte for byte (expected outcomes included, which the generator takes from the built `vote`), and
/// the built `vote` still reports exactly the committed outcome on every ledger, receipt and head.
/// Regenerate after an intended change to the rules, the messages or the format with
///     VOTELEDGER_WRITE_GOLDEN=1 swift test --filter ElectionVectorTests/rebuildMatchesCommittedVectors
/// and review the diff of `Ledger/vectors/cases.json` (that test alone: the others read the vectors while it
/// runs, each at once with the rest, since together they are a third of the suite's time).
@Suite struct ElectionVectorTests {
    static let vectors = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Ledger/vectors").standardized.path
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Tools/verify_ledger.py").standardized.path
    /// Groups of cases that break an election rule or the encoding of an election event (§11).
    static let ruleGroups: Set = [
        "place", "candidate", "withdrawal", "authorisation", "vote", "results", "encoding", "reissue", "anonymous",
        "questions", "amendment", "voter-withdrawal", "cancellation", "batches",
    ]
    /// Rule cases that `vote verify` accepts today although they break §11 as issue 10 states it: a negative
    /// time (§1 allows only 0…2⁶³−1). The test fails once one of them is rejected: then remove it here.
    static let acceptedToday: Set<String> = []

    /// Every file under the generated entries of `root`, by path relative to it.
    static func files(_ root: String) throws -> [String: [UInt8]] {
        var files: [String: [UInt8]] = [:]
        for entry in ElectionVectors.entries {
            let path = root + "/" + entry
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { continue }
            let names =
                isDirectory.boolValue
                ? try FileManager.default.subpathsOfDirectory(atPath: path).map { entry + "/" + $0 } : [entry]
            for name in names {
                var isFolder: ObjCBool = false
                if FileManager.default.fileExists(atPath: root + "/" + name, isDirectory: &isFolder),
                    !isFolder.boolValue
                {
                    files[name] = try ElectionVectors.read(root + "/" + name)
                }
            }
        }
        return files
    }

    static func index() throws -> ElectionVectors.CaseIndex {
        try ElectionVectors.decoder.decode(
            ElectionVectors.CaseIndex.self, from: Data(contentsOf: URL(fileURLWithPath: vectors + "/cases.json")))
    }

    static func election() throws -> ElectionVectors.ElectionSummary {
        try ElectionVectors.decoder.decode(
            ElectionVectors.ElectionSummary.self,
            from: Data(contentsOf: URL(fileURLWithPath: vectors + "/election.json")))
    }

    // MARK: - Generation

    /// Rebuilding the vectors reproduces every committed file byte for byte, and no committed file is
    /// missing from the rebuild; each rule case fails at the block built to break the rule, and no earlier.
    @Test func rebuildMatchesCommittedVectors() throws {
        let root = NSTemporaryDirectory() + "election-vectors-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let built = try ElectionVectors.build(at: root)
        if ProcessInfo.processInfo.environment["VOTELEDGER_WRITE_GOLDEN"] == "1" {
            for entry in ElectionVectors.entries {
                try? FileManager.default.removeItem(atPath: Self.vectors + "/" + entry)
                try FileManager.default.copyItem(atPath: root + "/" + entry, toPath: Self.vectors + "/" + entry)
            }
        }
        let rebuilt = try Self.files(root)
        let committed = try Self.files(Self.vectors)
        #expect(rebuilt.count > 100)
        #expect(
            Set(rebuilt.keys) == Set(committed.keys),
            "files differ: \(Set(rebuilt.keys).symmetricDifference(committed.keys).sorted())")
        for (name, bytes) in rebuilt.sorted(by: { $0.key < $1.key }) where committed[name] != nil {
            #expect(committed[name] == bytes, "\(name) differs from the committed vector")
        }

        let index = try ElectionVectors.decoder.decode(
            ElectionVectors.CaseIndex.self, from: Data(contentsOf: URL(fileURLWithPath: root + "/cases.json")))
        for vector in index.ledgers where Self.ruleGroups.contains(vector.group) || vector.group == "name" {
            let target = try #require(built.targets[vector.name], "\(vector.name) has no target block")
            if vector.expect.ok {
                #expect(
                    vector.group == "name" || Self.acceptedToday.contains(vector.name), "\(vector.name) is accepted")
            } else {
                #expect(
                    !Self.acceptedToday.contains(vector.name),
                    "\(vector.name) is rejected now: remove it from acceptedToday")
                #expect(
                    vector.expect.height == target,
                    "\(vector.name) fails at block \(vector.expect.height ?? 0), not \(target)")
                #expect(
                    ["rule", "event"].contains(vector.expect.failure), "\(vector.name): \(vector.expect.message ?? "")")
            }
        }
    }

    // MARK: - The committed vectors, through the built `vote`

    /// `vote verify` reports on every committed ledger vector exactly the outcome the index records, and
    /// every group behaves as its name says: format and layout damage is rejected, valid layouts and torn
    /// tails verify (a torn tail with its size reported), the golden election verifies with its summary.
    @Test func voteVerifyReportsEveryLedgerVector() throws {
        let index = try Self.index()
        #expect(index.ledgers.count > 90)
        for vector in index.ledgers {
            let outcome = try ElectionVectors.verify(vector.path, in: Self.vectors)
            #expect(outcome == vector.expect, "\(vector.name): vote verify now reports \(outcome)")
            switch vector.group {
            case "format", "layout":
                #expect(!outcome.ok && ["damage", "not-a-ledger"].contains(outcome.failure), "\(vector.name)")
                if outcome.failure == "damage" {
                    #expect(outcome.segment != nil && outcome.offset != nil, "\(vector.name)")
                }
            case "valid", "trust": #expect(outcome.ok && outcome.tornTailBytes == 0, "\(vector.name)")
            case "torn-tail": #expect(outcome.ok && (outcome.tornTailBytes ?? 0) > 0, "\(vector.name)")
            default:
                #expect(
                    Self.ruleGroups.contains(vector.group) || vector.group == "name",
                    "\(vector.name): group \(vector.group)")
            }
        }
        let election = try Self.election()
        let outcome = try ElectionVectors.verify(election.path, in: Self.vectors)
        #expect(outcome == election.verify && outcome.ok && outcome.places == election.places.count)
    }

    /// `vote tally --json` on the golden election gives the tallies and turnout `election.json` lists.
    @Test func electionTalliesMatch() throws {
        let election = try Self.election()
        #expect(election.places.count == 2)
        for place in election.places {
            let result = try ElectionVectors.vote(
                ["tally", "--place", String(place.place), "--json", "--ledger", election.path], in: Self.vectors)
            #expect(result.status == 0, "\(result.err)")
            let tally = try #require(try json(result.out) as? [String: Any])
            let rows = try #require(tally["tally"] as? [[String: Any]])
            let listed = rows.map {
                ElectionVectors.CandidateTally(
                    candidate: ($0["candidate"] as? NSNumber)?.uint32Value ?? 0, name: $0["name"] as? String ?? "",
                    votes: ($0["votes"] as? NSNumber)?.uint64Value ?? 0, withdrawn: $0["withdrawn"] as? Bool ?? false)
            }
            // Names byte for byte: String equality would let an NFC name pass for an NFD one.
            #expect(
                listed == place.tally && listed.map { Array($0.name.utf8) } == place.tally.map { Array($0.name.utf8) },
                "place \(place.place)")
            let turnout = try #require(tally["turnout"] as? [String: Any])
            #expect((turnout["authorized"] as? NSNumber)?.uint64Value == place.authorized)
            #expect((turnout["voted"] as? NSNumber)?.uint64Value == place.voted)
            #expect(tally["name"] as? String == place.name)
        }
    }

    /// `vote audit` reports on every receipt and head vector exactly the outcome the index records; the
    /// genuine receipt and heads check, every tampered one fails, and the limits of §12 show: a rewritten
    /// history checks offline and is caught only against an earlier receipt or head.
    @Test func voteAuditReportsEveryReceiptVector() throws {
        let index = try Self.index()
        #expect(index.audits.count > 15)
        for vector in index.audits {
            let outcome = try ElectionVectors.audit(vector.arguments, in: Self.vectors)
            #expect(outcome == vector.expect, "\(vector.name): vote audit now reports \(outcome)")
        }
        let expected = Dictionary(uniqueKeysWithValues: index.audits.map { ($0.name, $0.expect.ok) })
        for name in [
            "receipt-with-ledger", "receipt-offline", "receipt-early-with-ledger", "receipt-and-head-with-ledger",
            "head-early-with-ledger", "head-final-with-ledger", "receipt-rewritten-offline",
            "receipt-forged-with-forged-ledger",
        ] {
            #expect(expected[name] == true, "\(name) should check")
        }
        for name in [
            "receipt-flipped-proof", "receipt-wrong-index", "receipt-bad-signature", "receipt-altered-event",
            "receipt-no-extra", "head-rewritten-with-ledger", "receipt-rewritten-with-ledger",
            "receipt-against-rewritten-ledger", "receipt-and-rewritten-head-offline", "receipt-forged-offline",
            "receipt-against-forged-ledger", "receipt-with-stranger-key", "head-forged-with-ledger",
        ] {
            #expect(expected[name] == false, "\(name) should fail")
        }
        // §12.1: a head needs exactly one height line and one time line (else it is malformed, exit 1), and
        // they must name the block whose tree is the head's (else an integrity failure, exit 3).
        let exits = Dictionary(uniqueKeysWithValues: index.audits.map { ($0.name, $0.expect.exit) })
        for (name, exit) in [
            ("head-no-height-with-ledger", 1), ("head-no-time-with-ledger", 1), ("head-height-twice-with-ledger", 1),
            ("head-wrong-height-with-ledger", 3), ("head-wrong-time-with-ledger", 3),
        ] as [(String, Int32)] {
            #expect(exits[name] == exit, "\(name) should exit \(exit)")
        }
    }

    // MARK: - The independent verifier

    /// What `Tools/verify_ledger.py` says, run in `Ledger/vectors/`.
    static func python(_ arguments: [String]) throws -> (status: Int32, json: [String: Any], text: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script] + arguments
        process.currentDirectoryURL = URL(fileURLWithPath: vectors)
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let result = VoteCLI.finish(process, out, err)
        let document = (try? JSONSerialization.jsonObject(with: Data(result.out.utf8))) as? [String: Any] ?? [:]
        return (result.status, document, result.out + result.err)
    }

    /// How the Python verifier's verdict on a ledger differs from the committed `vote verify` outcome
    /// (nil when they agree): the exit status; on success the summary; on failure the block, and the
    /// segment, offset and reason of damage, or the event and reason of a broken rule.
    static func disagreement(_ expect: ElectionVectors.VerifyOutcome, _ path: String) throws -> String? {
        let python = try python([path])
        var differences: [String] = []
        func compare(_ what: String, _ swift: Any?, _ other: Any?) {
            let (s, p) = ("\(swift ?? "none")", "\(other ?? "none")")
            if s != p { differences.append("\(what): vote \(s), python \(p)") }
        }
        let error = python.json["error"] as? String ?? ""
        guard python.status == expect.exit else {
            let vote = expect.ok ? "verifies" : "exit \(expect.exit): \(expect.message ?? "")"
            let other =
                python.status == 0 ? "verifies" : "exit \(python.status): \(error.isEmpty ? python.text : error)"
            return "vote \(vote); python \(other)"
        }
        if expect.ok {
            compare("blocks", expect.blocks, python.json["blocks"])
            compare("events", expect.events, python.json["events"])
            compare("bytes", expect.bytes, python.json["bytes"])
            compare("height", expect.height, python.json["height"])
            compare("head_hash", expect.headHash, python.json["head_hash"])
            compare("tree_root", expect.treeRoot, python.json["tree_root"])
            compare("torn_tail_bytes", expect.tornTailBytes, python.json["torn_tail_bytes"])
        } else if expect.failure == "not-a-ledger" {
            compare("message", expect.message, error)
        } else {
            compare("height", expect.height, python.json["height"])
            // Python says "block H: REASON", and for an event (FORMAT §11.14) "block H, event I: REASON" or
            // "block H, event I breaks the rules: REASON".
            let text = Substring(error)
            let colon = text.range(of: ": ")
            let location = colon.map { text[..<$0.lowerBound] } ?? ""
            let reason = colon.map { text[$0.upperBound...] } ?? text
            if expect.failure == "damage" {
                compare("segment", expect.segment, python.json["file"])
                compare("offset", expect.offset, python.json["offset"])
            }
            if let event = location.range(of: ", event ") {
                compare("event", expect.event, Int(location[event.upperBound...].prefix { $0.isNumber }))
            } else {
                compare("event", expect.event, nil)
            }
            compare("reason", expect.reason, String(reason))
        }
        return differences.isEmpty ? nil : differences.joined(separator: "; ")
    }

    /// `Tools/verify_ledger.py` reaches the verdict `vote verify` reaches on every ledger vector (the same
    /// block, segment, offset, event and reason on a failure; the same summary and tallies on success), and
    /// the same exit status on every receipt and head vector it can take (a receipt, against a ledger or a
    /// key; a head, against a ledger).
    /// On a failure the test names every vector on which the two disagree.
    @Test func pythonVerifierAgreesOnEveryVector() throws {
        let index = try Self.index()
        let election = try Self.election()
        var disagreements: [String] = []
        for vector in index.ledgers {
            if let difference = try Self.disagreement(vector.expect, vector.path) {
                disagreements.append("\(vector.name): \(difference)")
            }
        }
        if let difference = try Self.disagreement(election.verify, election.path) {
            disagreements.append("election: \(difference)")
        }
        let tallies = try Self.python([election.path]).json["tallies"] as? [[String: Any]] ?? []
        let listed = tallies.map { place in
            (place["tally"] as? [[String: Any]] ?? []).map {
                "\($0["candidate"] ?? ""):\($0["votes"] ?? ""):\($0["withdrawn"] ?? "")"
            }
        }
        let expected = election.places.map { $0.tally.map { "\($0.candidate):\($0.votes):\($0.withdrawn ? 1 : 0)" } }
        if listed != expected { disagreements.append("election tallies: expected \(expected), python \(listed)") }
        // The golden anonymous election: every place's tally and turnout, credentials issued included.
        let anonymous = try ElectionVectors.decoder.decode(
            ElectionVectors.AnonymousSummary.self,
            from: Data(contentsOf: URL(fileURLWithPath: Self.vectors + "/anonymous.json")))
        let counted = (try Self.python([anonymous.path]).json["tallies"] as? [[String: Any]] ?? []).map { place in
            let turnout = place["turnout"] as? [String: Any] ?? [:]
            return "\(turnout["authorized"] ?? ""):\(turnout["issued"] ?? "-"):\(turnout["voted"] ?? "") "
                + (place["tally"] as? [[String: Any]] ?? []).map { "\($0["candidate"] ?? ""):\($0["votes"] ?? "")" }
                .joined(separator: " ")
        }
        let recorded = anonymous.places.map { place in
            "\(place.authorized):\(place.issued.map(String.init) ?? "-"):\(place.voted) "
                + place.tally.map { "\($0.candidate):\($0.votes)" }.joined(separator: " ")
        }
        if counted != recorded {
            disagreements.append("anonymous election tallies: expected \(recorded), python \(counted)")
        }

        for vector in index.audits {
            let arguments: [String]
            switch (vector.receipt, vector.head, vector.ledger) {
            case (let receipt?, nil, let ledger):
                arguments = ["--receipt", receipt] + (ledger.map { ["--ledger", $0] } ?? ["--key", vector.keyHex!])
            case (nil, let head?, let ledger?): arguments = ["--head", head, "--ledger", ledger]
            default: continue
            }
            let python = try Self.python(arguments)
            if python.status != vector.expect.exit {
                disagreements.append(
                    "\(vector.name): exit: vote \(vector.expect.exit), python \(python.status) (python: \(python.text.trimmingCharacters(in: .newlines)))"
                )
            }
        }
        #expect(
            disagreements.isEmpty,
            "Tools/verify_ledger.py disagrees with vote on \(disagreements.count) vectors:\n\(disagreements.joined(separator: "\n"))"
        )
    }
}
