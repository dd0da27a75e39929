import Election
import Foundation
import Ledger
import LedgerCrypto
import Testing
import VoteLedger

/// The independent Python verifier (`Tools/verify_ledger.py`, written from `Ledger/FORMAT.md` alone) and
/// the Swift one must reach the same verdict on every ledger: the golden vectors, a generated election,
/// and tampered copies of it.
@Suite struct IndependentVerifierTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Tools/verify_ledger.py").standardized.path
    static let golden = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Ledger/vectors/golden").standardized.path

    /// Runs the Python verifier; returns its exit status and JSON.
    static func python(_ arguments: [String]) throws -> (Int32, [String: Any]) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script] + arguments
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let document = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        return (process.terminationStatus, document)
    }

    /// The block height a failed `vote verify` names ("vote: integrity failure: block H…").
    static func swiftHeight(_ result: VoteCLI.Result) -> Int? {
        guard let range = result.err.range(of: "block ") else { return nil }
        return Int(result.err[range.upperBound...].prefix { $0.isNumber })
    }

    static let compared = ["blocks", "events", "bytes", "height", "head_hash", "tree_root", "torn_tail_bytes"]

    /// The golden ledger: both verify its chain identically; as an election both refuse its placeholder
    /// events at the same block.
    @Test func goldenVectors() throws {
        let copy = NSTemporaryDirectory() + "golden-\(UUID().uuidString)"
        try FileManager.default.copyItem(atPath: IndependentVerifierTests.golden, toPath: copy)
        defer { try? FileManager.default.removeItem(atPath: copy) }
        let chain = try ChainVerifier.verify(path: copy)
        let (status, python) = try IndependentVerifierTests.python([copy, "--chain-only"])
        #expect(status == 0)
        #expect(python["blocks"] as? Int == Int(chain.blocks) && python["events"] as? Int == Int(chain.events))
        #expect(python["bytes"] as? Int == Int(chain.bytes) && python["height"] as? Int == Int(chain.height))
        #expect(python["head_hash"] as? String == chain.headHash.hex && python["tree_root"] as? String == chain.treeRoot.hex)

        let swift = try VoteCLI.run(["verify", "--ledger", copy])
        let (electionStatus, election) = try IndependentVerifierTests.python([copy])
        #expect(swift.status == 3 && electionStatus == 3)
        #expect(IndependentVerifierTests.swiftHeight(swift) == 1 && election["height"] as? Int == 1)
        #expect(swift.err.contains("unknown election event type 256") && (election["error"] as? String)?.contains("unknown election event type 256") == true)
    }

    /// A generated election of 3,000 votes (with certified results): the same summary and tallies.
    @Test func generatedElectionAndTamperedCopies() throws {
        let path = try ExportTests.ledger(votes: 3000)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let ledger = try ElectionLedger.open(at: path, passphrase: nil)
        _ = try ledger.submit(.certifyResults(place: 1, treeSize: ledger.head.treeSize), now: ServiceTests.t0 + 100_000)
        ledger.close()

        let swift = try VoteCLI.run(["verify", "--json", "--ledger", path])
        #expect(swift.status == 0, "\(swift.err)")
        let swiftSummary = try #require(try json(swift.out) as? [String: Any])
        let (status, python) = try IndependentVerifierTests.python([path])
        #expect(status == 0, "\(python)")
        for key in IndependentVerifierTests.compared {
            #expect("\(swiftSummary[key] ?? "none")" == "\(python[key] ?? "none")", "\(key)")
        }
        #expect(python["places"] as? Int == 1 && swiftSummary["places"] as? Int == 1)
        let tally = try #require(try json(try VoteCLI.run(["tally", "--place", "1", "--json", "--ledger", path]).out) as? [String: Any])
        let pythonPlace = try #require((python["tallies"] as? [[String: Any]])?.first)
        let swiftRows = try #require(tally["tally"] as? [[String: Any]])
        let pythonRows = try #require(pythonPlace["tally"] as? [[String: Any]])
        #expect(swiftRows.map { $0["votes"] as? Int } == pythonRows.map { $0["votes"] as? Int })
        #expect(swiftRows.map { $0["votes"] as? Int } == [1500, 1500])
        for (s, p) in zip(swiftRows, pythonRows) {
            #expect(abs((s["share"] as? Double ?? -1) - (p["share"] as? Double ?? -2)) < 1e-9)
        }
        let swiftTurnout = try #require(tally["turnout"] as? [String: Any])
        let pythonTurnout = try #require(pythonPlace["turnout"] as? [String: Any])
        #expect(swiftTurnout["voted"] as? Int == pythonTurnout["voted"] as? Int && swiftTurnout["authorized"] as? Int == pythonTurnout["authorized"] as? Int)
        #expect(abs((swiftTurnout["percentage"] as? Double ?? -1) - (pythonTurnout["percentage"] as? Double ?? -2)) < 1e-9)

        // Tampered copies: both refuse, naming the same block.
        var locations: [BlockLocation] = []
        try LedgerReader(path: path).forEachBlock { _, location in locations.append(location) }
        let segment = "segment-00000000.vlseg"
        let pristine = [UInt8](try #require(FileManager.default.contents(atPath: path + "/" + segment)))
        let middle = locations[locations.count / 2]
        let next = locations[locations.count / 2 + 1]
        func range(_ location: BlockLocation) -> Range<Int> { Int(location.offset)..<Int(location.offset + location.length) }
        let otherKey = try Ed25519PrivateKey()

        var tampers: [(String, [UInt8])] = []
        var flipped = pristine
        flipped[Int(middle.offset) + 200] ^= 0x04
        tampers.append(("flipped byte", flipped))
        var cut = pristine
        cut.removeSubrange(Int(middle.offset) + 100..<Int(next.offset) + 50)
        tampers.append(("middle cut out", cut))
        var swapped = Array(pristine[..<Int(middle.offset)])
        swapped += pristine[range(next)] + pristine[range(middle)] + pristine[Int(next.offset + next.length)...]
        tampers.append(("blocks swapped", swapped))
        var resigned = pristine
        let blockStart = Int(middle.offset) + 12
        let header = Array(pristine[blockStart..<blockStart + 112])
        let signature = try otherKey.signature(for: SHA256.hash(header).bytes)
        resigned.replaceSubrange(blockStart + 112..<blockStart + 176, with: signature)
        let crc = CRC32C.checksum(Array(resigned[blockStart..<Int(middle.offset + middle.length)]))
        withUnsafeBytes(of: crc.bigEndian) { resigned.replaceSubrange(Int(middle.offset) + 8..<Int(middle.offset) + 12, with: $0) }
        tampers.append(("re-signed with another key", resigned))

        for (name, bytes) in tampers {
            let copy = NSTemporaryDirectory() + "tampered-\(UUID().uuidString)"
            try FileManager.default.copyItem(atPath: path, toPath: copy)
            defer { try? FileManager.default.removeItem(atPath: copy) }
            #expect(FileManager.default.createFile(atPath: copy + "/" + segment, contents: Data(bytes)))
            let swiftResult = try VoteCLI.run(["verify", "--ledger", copy])
            let (pythonStatus, pythonResult) = try IndependentVerifierTests.python([copy])
            #expect(swiftResult.status == 3, "\(name): \(swiftResult.err)")
            #expect(pythonStatus == 3, "\(name): \(pythonResult)")
            let height = IndependentVerifierTests.swiftHeight(swiftResult)
            #expect(height != nil && height == pythonResult["height"] as? Int, "\(name): swift \(swiftResult.err) python \(pythonResult)")
            if name == "re-signed with another key" {
                #expect(swiftResult.err.contains("signature invalid") && (pythonResult["error"] as? String)?.contains("signature invalid") == true)
            }
        }
    }

    /// A receipt checks in both verifiers, online and offline, and an edited one fails in both.
    @Test func receiptsAgree() throws {
        let path = AuditTests.temporary()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (ledger, proofs, _) = try AuditTests.votedLedger(at: path)
        let key = Hex.encode(ledger.genesis.authorityKey)
        ledger.close()
        for proof in proofs {
            let file = path + "-receipt"
            try proof.serialized.write(toFile: file, atomically: false, encoding: .utf8)
            defer { try? FileManager.default.removeItem(atPath: file) }
            let (online, report) = try IndependentVerifierTests.python(["--receipt", file, "--ledger", path])
            #expect(online == 0 && report["index"] as? Int == Int(proof.index), "\(report)")
            #expect(try IndependentVerifierTests.python(["--receipt", file, "--key", key]).0 == 0)
            var edited = proof
            edited.index += 1
            try edited.serialized.write(toFile: file, atomically: false, encoding: .utf8)
            #expect(try IndependentVerifierTests.python(["--receipt", file, "--ledger", path]).0 == 3)
        }
    }
}
