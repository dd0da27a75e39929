import FileStore
import Foundation
import Ledger
import LedgerCrypto
import TestSupport
import Testing

/// The independent Python verifier (`Tools/verify_ledger.py`, written from `Ledger/FORMAT.md` alone) and
/// the Swift one (`vote verify`, `vote tally`, `vote audit`, `ledger-tool verify`) must reach the same
/// verdict on the same directory: the golden vectors, a generated election, and tampered copies of it.
@Suite struct IndependentVerifierTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../..").standardized
    static let script = repository.appendingPathComponent("Tools/verify_ledger.py").path
    static let golden = repository.appendingPathComponent("Ledger/vectors/golden").path
    static let ledgerTool = URL(fileURLWithPath: VoteCLI.path).deletingLastPathComponent()
        .appendingPathComponent("ledger-tool").path
    /// The summary fields both verifiers report.
    static let summaryKeys = [
        "ok", "ledger_id", "blocks", "events", "bytes", "height", "head_hash", "tree_root",
        "torn_tail_bytes",
    ]

    /// What the Python verifier said: its exit status, its JSON object, and everything it printed.
    struct Verdict {
        var status: Int32
        var json: [String: Any]
        var text: String
    }

    // MARK: - Helpers

    /// Runs `executable` to completion.
    static func run(_ executable: String, _ arguments: [String]) throws -> VoteCLI.Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        return VoteCLI.finish(process, out, err)
    }

    /// Runs the Python verifier with `arguments`.
    static func python(_ arguments: [String]) throws -> Verdict {
        let result = try run("/usr/bin/env", ["python3", script] + arguments)
        let document = (try? JSONSerialization.jsonObject(with: Data(result.out.utf8))) as? [String: Any] ?? [:]
        return Verdict(status: result.status, json: document, text: result.out + result.err)
    }

    /// Runs `vote` with a state directory of its own, so that no head remembered from another copy of the
    /// same ledger (tampered copies share its id) changes the verdict.
    static func vote(_ arguments: [String]) throws -> VoteCLI.Result {
        let state = NSTemporaryDirectory() + "vote-pyverify-state-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: state) }
        return try VoteCLI.run(arguments, environment: ["VOTE_STATE_DIR": state])
    }

    /// Runs `vote … --json` and decodes its JSON object.
    static func voteJSON(_ arguments: [String]) throws -> [String: Any] {
        let result = try vote(arguments + ["--json"])
        #expect(result.status == 0, "vote \(arguments.joined(separator: " ")): \(result.err)")
        return try #require(try json(result.out) as? [String: Any])
    }

    /// The block height a failed `vote verify` names ("vote: integrity failure: block H: …" or "block H, …").
    static func swiftHeight(_ result: VoteCLI.Result) -> Int? {
        guard let range = result.err.range(of: "integrity failure: block ") else { return nil }
        return Int(result.err[range.upperBound...].prefix { $0.isNumber })
    }

    /// Expects a JSON value from Swift and one from Python to print the same (numbers and strings alike).
    static func expectSame(
        _ swift: Any?, _ python: Any?, _ what: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let (s, p) = ("\(swift ?? "missing")", "\(python ?? "missing")")
        #expect(s == p, "\(what): swift \(s), python \(p)", sourceLocation: sourceLocation)
    }

    /// Expects two JSON numbers to be within 1e-9.
    static func expectClose(
        _ swift: Any?, _ python: Any?, _ what: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let (s, p) = (swift as? Double, python as? Double)
        #expect(
            s != nil && p != nil && abs(s! - p!) < 1e-9, "\(what): swift \(s ?? .nan), python \(p ?? .nan)",
            sourceLocation: sourceLocation)
    }

    static func temporaryCopy(of path: String) throws -> String {
        let copy = NSTemporaryDirectory() + "pyverify-\(UUID().uuidString)"
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        if FileManager.default.fileExists(atPath: path + ".keys") {
            try FileManager.default.copyItem(atPath: path + ".keys", toPath: copy + ".keys")
        }
        return copy
    }

    /// The frames of a segment file, walking 12 + B bytes at a time from offset 32 (FORMAT.md §5.3, §5.4).
    static func frames(_ segment: [UInt8]) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        var offset = 32
        while offset + 12 <= segment.count {
            let length = segment[offset + 4..<offset + 8].reduce(0) { $0 << 8 | Int($1) }
            ranges.append(offset..<offset + 12 + length)
            offset += 12 + length
        }
        return ranges
    }

    /// The big-endian bytes of an integer (§1).
    static func bigEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }

    /// The segment files holding `frames` of `segment`, split before each height in `cuts`; the header of
    /// the segment starting at `cuts[i]` claims `firstHeights[i]` (§5.3, §5.5).
    static func split(
        _ segment: [UInt8], _ frames: [Range<Int>], at cuts: [Int], firstHeights: [Int]
    ) -> [String: [UInt8]] {
        var files: [String: [UInt8]] = [:]
        let starts = [0] + cuts
        for (number, start) in starts.enumerated() {
            let end = number + 1 < starts.count ? starts[number + 1] : frames.count
            let header =
                Array("VOTELEDG".utf8) + [0, 1, 0, 0] + bigEndian(UInt32(number))
                + bigEndian(UInt64(number == 0 ? 0 : firstHeights[number - 1])) + [UInt8](repeating: 0, count: 8)
            files[String(format: "segment-%08d.vlseg", number)] =
                header
                + segment[frames[start].lowerBound..<frames[end - 1].upperBound]
        }
        return files
    }

    /// A copy of `ledger` whose segment files are `files` (name → bytes), checked by `vote verify` and Python.
    static func verifyBoth(
        _ ledger: String, _ files: [String: [UInt8]], json: Bool = false
    ) throws -> (VoteCLI.Result, Verdict) {
        let copy = try temporaryCopy(of: ledger)
        defer { removeLedger(copy) }
        for name in try FileManager.default.contentsOfDirectory(atPath: copy) where name.hasSuffix(".vlseg") {
            try FileManager.default.removeItem(atPath: copy + "/" + name)
        }
        for (name, bytes) in files {
            #expect(FileManager.default.createFile(atPath: copy + "/" + name, contents: Data(bytes)))
        }
        return (try vote(["verify"] + (json ? ["--json"] : []) + ["--ledger", copy]), try python([copy]))
    }

    // MARK: - 1. Golden vectors

    /// The golden ledger: its application events (types 0x0100-0x0104, arbitrary payloads) are not election
    /// events, so both election verifiers refuse it at block 1 (FORMAT.md §11); at the ledger level (§7)
    /// `ledger-tool verify` and `--ledger-only` accept it with the same summary, the one `golden.json` lists.
    @Test func goldenVectors() throws {
        let copy = try Self.temporaryCopy(of: Self.golden)
        defer { removeLedger(copy) }

        let swift = try Self.vote(["verify", "--json", "--ledger", copy])
        let python = try Self.python([copy])
        #expect(swift.status == 3 && python.status == 3, "swift: \(swift.err) python: \(python.text)")
        #expect(
            Self.swiftHeight(swift) == 1 && python.json["height"] as? Int == 1,
            "swift: \(swift.err) python: \(python.text)")
        #expect(swift.err.contains("unknown election event type 256"), "\(swift.err)")
        #expect(
            (python.json["error"] as? String)?.contains("unknown election event type 256") == true, "\(python.text)")

        let tool = try Self.run(Self.ledgerTool, ["verify", copy])
        #expect(tool.status == 0, "\(tool.err)")
        let chain = try #require(try json(tool.out) as? [String: Any])
        let ledgerOnly = try Self.python([copy, "--ledger-only"])
        #expect(ledgerOnly.status == 0, "\(ledgerOnly.text)")
        for key in Self.summaryKeys where key != "ok" && key != "ledger_id" {
            Self.expectSame(chain[key], ledgerOnly.json[key], key)
        }
        let vectors = try #require(
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: URL(fileURLWithPath: Self.golden + ".json"))) as? [String: Any])
        let last = try #require((vectors["blocks"] as? [[String: Any]])?.last)
        Self.expectSame(last["header_hash"], ledgerOnly.json["head_hash"], "golden.json head hash")
        Self.expectSame(last["tree_root"], ledgerOnly.json["tree_root"], "golden.json tree root")
        Self.expectSame(vectors["ledger_id"], ledgerOnly.json["ledger_id"], "golden.json ledger id")
    }

    // MARK: - 2. A generated election

    /// An election driven through the CLI on its own clock: place 1 with three candidates, one withdrawn,
    /// 3,000 authorised members and 2,901 votes, the last with a receipt; place 2 (voting closes an hour
    /// before place 1's) with five voters, four votes and its results certified by `vote place close`.
    final class Fixture {
        let election: TestElection
        let receipt: String

        init() throws {
            election = try TestElection()
            let opens = try election.place(name: "Board", voting: 7200)
            let quickOpens = try election.place(name: "Quick")
            for (place, name) in [(1, "Alice"), (1, "Bob"), (1, "Carol"), (2, "Dan"), (2, "Eve")] {
                try election.ok(["candidate", "register", "--place", String(place), "--name", name])
            }
            try election.ok(["candidate", "withdraw", "--place", "1", "--candidate", "3"])

            var tokens: [[String]] = []
            for (place, voters) in [(1, 3000), (2, 5)] {
                let identities = (1...voters).map { "member-\(place)-\($0)" }
                let members = election.write("members-\(place).txt", identities.joined(separator: "\n") + "\n")
                let tokensOut = election.root + "/tokens-\(place).csv"
                try election.ok([
                    "voter", "authorize", "--place", String(place), "--from", members, "--tokens-out", tokensOut,
                ])
                let lines = try String(contentsOfFile: tokensOut, encoding: .utf8).split(separator: "\n")
                tokens.append(lines.map { String($0.split(separator: ",")[1]) })  // "identity,token"
            }

            election.advance(to: max(opens, quickOpens))
            for (place, count) in [(2, 4), (1, 2900)] {
                let lines = tokens[place - 1].prefix(count).enumerated().map { "\($1),\($0 % 2 + 1)" }
                let votes = election.write("votes-\(place).txt", lines.joined(separator: "\n") + "\n")
                try election.ok(["cast", "--place", String(place), "--from", votes])
            }
            let token = tokens[0][2950]
            SecretsLog.record(token)
            receipt = election.root + "/vote.tlog-proof"
            try election.ok(["cast", "--place", "1", "--candidate", "2", "--token", token, "--receipt-out", receipt])

            election.advance(to: quickOpens.addingTimeInterval(3600))
            try election.ok(["place", "close", "--place", "2"])
        }
    }

    /// `vote verify --json` and the Python verifier report the same summary, and every place's tally and
    /// turnout equal `vote tally --place P --json` (votes exactly, shares and percentages within 1e-9).
    @Test func generatedElection() throws {
        let fixture = try Fixture()
        defer { withExtendedLifetime(fixture) {} }  // its directory lives as long as the fixture
        let ledger = fixture.election.ledger
        let summary = try Self.voteJSON(["verify", "--ledger", ledger])
        let python = try Self.python([ledger])
        #expect(python.status == 0, "\(python.text)")
        for key in Self.summaryKeys + ["places"] {
            Self.expectSame(summary[key], python.json[key], key)
        }

        let tallies = try #require(python.json["tallies"] as? [[String: Any]])
        #expect(tallies.count == 2)
        for place in tallies {
            let number = try #require(place["place"] as? Int)
            let tally = try Self.voteJSON(["tally", "--place", String(number), "--ledger", ledger])
            Self.expectSame(tally["name"], place["name"], "place \(number) name")
            let swiftRows = try #require(tally["tally"] as? [[String: Any]])
            let pythonRows = try #require(place["tally"] as? [[String: Any]])
            #expect(swiftRows.count == pythonRows.count)
            for (s, p) in zip(swiftRows, pythonRows) {
                for key in ["candidate", "name", "votes", "withdrawn"] {
                    Self.expectSame(s[key], p[key], "place \(number) \(key)")
                }
                Self.expectClose(s["share"], p["share"], "place \(number) share")
            }
            let swiftTurnout = try #require(tally["turnout"] as? [String: Any])
            let pythonTurnout = try #require(place["turnout"] as? [String: Any])
            Self.expectSame(swiftTurnout["authorized"], pythonTurnout["authorized"], "place \(number) authorized")
            Self.expectSame(swiftTurnout["voted"], pythonTurnout["voted"], "place \(number) voted")
            Self.expectClose(swiftTurnout["percentage"], pythonTurnout["percentage"], "place \(number) percentage")
        }
        #expect((tallies[0]["tally"] as? [[String: Any]])?.map { $0["votes"] as? Int } == [1450, 1451, 0])
        #expect((tallies[1]["turnout"] as? [String: Any])?["voted"] as? Int == 4)
    }

    /// The receipt checks in both (`vote audit`, `--receipt`), against the ledger and offline with the
    /// genesis key, and a receipt with an altered index fails in both.
    @Test func receiptsAgree() throws {
        let fixture = try Fixture()
        defer { withExtendedLifetime(fixture) {} }
        let ledger = fixture.election.ledger
        let audit = try Self.voteJSON(["audit", fixture.receipt, "--ledger", ledger])
        let online = try Self.python(["--receipt", fixture.receipt, "--ledger", ledger])
        #expect(online.status == 0, "\(online.text)")
        for (swiftKey, pythonKey) in [
            ("index", "index"), ("height", "height"), ("receipt_tree_size", "tree_size"),
            ("current_tree_size", "current_tree_size"),
        ] {
            Self.expectSame(audit[swiftKey], online.json[pythonKey], swiftKey)
        }

        // The genesis authorityKey: segment header 32 + frame header 12 + block header and signature 176 +
        // event length 4 + event type 2 + its offset in the payload 26 (§3.3, §3.5, §5.3, §5.4).
        let segment = [UInt8](try #require(FileManager.default.contents(atPath: ledger + "/segment-00000000.vlseg")))
        let key = segment[252..<284].map { String(format: "%02x", $0) }.joined()
        let offline = try Self.python(["--receipt", fixture.receipt, "--key", key])
        #expect(offline.status == 0, "\(offline.text)")
        Self.expectSame(audit["index"], offline.json["index"], "offline index")

        var lines = try String(contentsOfFile: fixture.receipt, encoding: .utf8).components(separatedBy: "\n")
        let indexLine = try #require(lines.firstIndex { $0.hasPrefix("index ") })
        lines[indexLine] = "index \(try #require(Int(lines[indexLine].dropFirst(6))) - 1)"
        let altered = fixture.election.write("altered.tlog-proof", lines.joined(separator: "\n"))
        #expect(try Self.vote(["audit", altered, "--ledger", ledger]).status == 3)
        #expect(try Self.python(["--receipt", altered, "--ledger", ledger]).status == 3)
        #expect(try Self.python(["--receipt", altered, "--key", key]).status == 3)
    }

    // MARK: - 3. Tampered copies

    /// Copies of the election with a flipped byte in a middle block, a cut-out middle, two blocks swapped, a
    /// block re-signed with another key, or a segment header claiming the wrong first block: both verifiers
    /// exit 3 naming the same block. A torn last block and a re-split into three segments: both verify with
    /// the same summary.
    @Test func tamperedCopies() throws {
        let fixture = try Fixture()
        defer { withExtendedLifetime(fixture) {} }  // its directory lives as long as the fixture
        let ledger = fixture.election.ledger
        let name = "segment-00000000.vlseg"
        let pristine = [UInt8](try #require(FileManager.default.contents(atPath: ledger + "/" + name)))
        let frames = Self.frames(pristine)
        #expect(frames.last?.upperBound == pristine.count && frames.count > 10)
        let middle = frames.count / 2
        let (block, next) = (frames[middle], frames[middle + 1])

        var flipped = pristine
        flipped[block.lowerBound + block.count / 2] ^= 0x04
        var cut = pristine
        cut.removeSubrange(block.lowerBound + 100..<next.lowerBound + 50)
        let swapped: [UInt8] =
            Array(pristine[..<block.lowerBound]) + pristine[next] + pristine[block]
            + pristine[next.upperBound...]
        // Re-signed: another key signs the header hash (§3.2), and the frame CRC is recomputed (§5.4), so
        // only the signature is wrong.
        var resigned = pristine
        let body = block.lowerBound + 12
        let signature = try Ed25519PrivateKey().signature(for: SHA256.hash(pristine[body..<body + 112]).bytes)
        resigned.replaceSubrange(body + 112..<body + 176, with: signature)
        let crc = CRC32C.checksum(Array(resigned[body..<block.upperBound]))
        resigned.replaceSubrange(block.lowerBound + 8..<block.lowerBound + 12, with: Self.bigEndian(crc))
        let misnumbered = Self.split(pristine, frames, at: [middle], firstHeights: [middle + 1])

        let cases: [(String, [String: [UInt8]], String?)] = [
            ("flipped byte", [name: flipped], "frame checksum mismatch"),
            ("middle cut out", [name: cut], nil),
            ("blocks swapped", [name: swapped], "height is \(middle + 1), expected \(middle)"),
            ("re-signed with another key", [name: resigned], "signature invalid"),
            (
                "segment 1 claims the wrong first block", misnumbered,
                "segment header says it starts at block \(middle + 1)"
            ),
        ]
        for (label, files, reason) in cases {
            let (swift, python) = try Self.verifyBoth(ledger, files)
            let context: Comment = "\(label): swift \(swift.err) python \(python.text)"
            #expect(swift.status == 3 && python.status == 3, context)
            #expect(Self.swiftHeight(swift) == middle && python.json["height"] as? Int == middle, context)
            if let reason {
                #expect(
                    swift.err.contains(reason) && (python.json["error"] as? String)?.contains(reason) == true, context)
            }
        }

        // Verifiable variants: a torn last block (§6), and the same frames spread over three segments.
        let torn = [name: Array(pristine.dropLast(40))]
        let resplit = Self.split(pristine, frames, at: [1, middle], firstHeights: [1, middle])
        for (label, files) in [("torn last block", torn), ("three segments", resplit)] {
            let (swift, python) = try Self.verifyBoth(ledger, files, json: true)
            #expect(swift.status == 0 && python.status == 0, "\(label): swift \(swift.err) python \(python.text)")
            let summary = try #require(try json(swift.out) as? [String: Any])
            for key in Self.summaryKeys + ["places"] {
                Self.expectSame(summary[key], python.json[key], "\(label) \(key)")
            }
        }
    }
}
