import FileStore
import Foundation
import Ledger
import LedgerCrypto
import LedgerTestSupport
import TestSupport
import Testing

/// The golden ledger in `Ledger/vectors/`: a small ledger built from a published key, fixed ids and fixed
/// times, committed with its expected hashes, tree heads and proofs. Rebuilding it must reproduce it byte
/// for byte (the encoding is deterministic), and the committed copy must verify.
/// Run with VOTELEDGER_WRITE_GOLDEN=1 to regenerate after an intended format change.
@Suite struct GoldenVectorTests {
    static let vectors = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Ledger/vectors").standardized.path
    static let files = [
        "segment-00000000.vlseg", "authority.key", "authority.pub", "blocks.idx", "leaves.idx", "nodes.idx",
        "frontier.idx",
    ]

    /// Builds the golden ledger at `path` and returns its description as JSON text.
    static func build(at path: String) throws -> String {
        let ledger = try FileBlockStore.create(
            at: path, name: "VoteLedger golden vectors", authority: Fixture.key, ledgerID: Fixture.ledgerID,
            timestamp: Fixture.epoch, log: { _ in })
        let batches: [(Int64, [LedgerEvent])] = [
            (
                1_000,
                [
                    LedgerEvent(type: 0x0100, payload: Array("place 1: board election".utf8)),
                    LedgerEvent(type: 0x0101, payload: Array("candidate 1".utf8)),
                    LedgerEvent(type: 0x0101, payload: Array("candidate 2".utf8)),
                ]
            ),
            (
                2_000,
                [
                    LedgerEvent(type: 0x0102, payload: [UInt8](repeating: 0xab, count: 32)),
                    LedgerEvent(type: 0x0103, payload: []),
                ]
            ),
            (
                2_000,
                [
                    LedgerEvent(type: 0x0104, payload: Array("vote for 2".utf8)),
                    LedgerEvent(type: 0x0104, payload: Array("vote for 1".utf8)),
                    LedgerEvent(type: 0x0104, payload: Array("vote for 2, é ünïcode".utf8)),
                ]
            ),
        ]
        var blocks: [[String: Any]] = []
        var headers = [ledger.head]
        var signatures: [String] = []
        for (offset, events) in batches { headers.append(try ledger.append(events, timestamp: Fixture.epoch + offset)) }
        ledger.close()
        _ = try FileBlockSource(path: path).forEachBlock { raw, _ in
            signatures.append(Hex.encode(try Block(decoding: raw).signature))
        }
        for (header, signature) in zip(headers, signatures) {
            blocks.append([
                "height": header.height, "timestamp_ms": header.timestamp, "event_count": header.eventCount,
                "tree_size": header.treeSize, "previous_hash": header.previousHash.hex,
                "tree_root": header.treeRoot.hex,
                "header_hash": header.hash.hex, "header_hex": Hex.encode(header.encoded), "signature": signature,
            ])
        }
        let leaves = try leafHashes(path)
        let leaf = { (index: UInt64) in leaves[Int(index)] }
        let document: [String: Any] = [
            "description": "Golden VoteLedger ledger (format version 1). See Ledger/FORMAT.md, section Worked example.",
            "authority_seed_hex": Hex.encode(Fixture.seed),
            "authority_public_key_hex": Hex.encode(Fixture.key.publicKey.rawRepresentation),
            "ledger_id": Fixture.ledgerID.description,
            "blocks": blocks,
            "leaf_hashes": leaves.map(\.hex),
            "inclusion_proof": [
                "leaf_index": 5, "tree_size": 9, "leaf_hash": leaves[5].hex, "root": headers[3].treeRoot.hex,
                "proof": try Merkle.inclusionProof(index: 5, size: 9, leaf: leaf).map(\.hex),
            ],
            "consistency_proof": [
                "old_size": 4, "new_size": 9, "old_root": headers[1].treeRoot.hex, "new_root": headers[3].treeRoot.hex,
                "proof": try Merkle.consistencyProof(oldSize: 4, newSize: 9, leaf: leaf).map(\.hex),
            ],
        ]
        let data = try JSONSerialization.data(withJSONObject: document, options: [.prettyPrinted, .sortedKeys])
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    /// Leaf hashes of every event, recomputed from the blocks.
    static func leafHashes(_ path: String) throws -> [Digest] {
        var leaves: [Digest] = []
        _ = try FileBlockSource(path: path).forEachBlock { raw, _ in
            leaves += try Block(decoding: raw).events.map(\.leafHash)
        }
        return leaves
    }

    /// Rebuilding the golden ledger reproduces every committed file byte for byte.
    @Test func rebuildMatchesCommittedVectors() throws {
        let temp = TemporaryDirectory()
        let path = temp.child("golden")
        let json = try GoldenVectorTests.build(at: path)
        let golden = GoldenVectorTests.vectors + "/golden"
        // The vectors keep the (published) key beside the ledger; a ledger keeps it in its key directory.
        func built(_ file: String) -> String {
            file == KeyDirectory.privateKeyName ? KeyDirectory(defaultFor: path).privateKeyPath : path + "/" + file
        }
        if ProcessInfo.processInfo.environment["VOTELEDGER_WRITE_GOLDEN"] == "1" {
            try? FileManager.default.removeItem(atPath: golden)
            try FileManager.default.createDirectory(atPath: golden, withIntermediateDirectories: true)
            for file in GoldenVectorTests.files {
                try FileManager.default.copyItem(atPath: built(file), toPath: golden + "/" + file)
            }
            try json.write(toFile: GoldenVectorTests.vectors + "/golden.json", atomically: false, encoding: .utf8)
        }
        for file in GoldenVectorTests.files {
            #expect(Bytes.read(built(file)) == Bytes.read(golden + "/" + file), "\(file) differs")
        }
        let committed = try String(contentsOfFile: GoldenVectorTests.vectors + "/golden.json", encoding: .utf8)
        #expect(json == committed)
    }

    /// The committed golden ledger verifies, and its published proofs check against its tree heads.
    @Test func committedVectorsVerify() throws {
        let golden = GoldenVectorTests.vectors + "/golden"
        let data = try Data(contentsOf: URL(fileURLWithPath: GoldenVectorTests.vectors + "/golden.json"))
        let document = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let blocks = try #require(document["blocks"] as? [[String: Any]])
        let report = try ChainVerifier.verify(FileBlockSource(path: golden))
        #expect(report.blocks == 4 && report.events == 9 && blocks.count == 4)
        #expect(report.headHash.hex == blocks.last?["header_hash"] as? String)
        #expect(report.treeRoot.hex == blocks.last?["tree_root"] as? String)
        #expect(try GoldenVectorTests.leafHashes(golden).map(\.hex) == document["leaf_hashes"] as? [String])

        func digest(_ value: Any?) throws -> Digest {
            let text = try #require(value as? String)
            return try #require(Digest(hex: text))
        }
        func digests(_ value: Any?) throws -> [Digest] { try #require(value as? [String]).map { try digest($0) } }
        func bytes(_ value: Any?) throws -> [UInt8] {
            let text = try #require(value as? String)
            return try #require(Hex.decode(text))
        }
        let inclusion = try #require(document["inclusion_proof"] as? [String: Any])
        #expect(
            Merkle.verifyInclusion(
                leafHash: try digest(inclusion["leaf_hash"]), index: 5, size: 9, proof: try digests(inclusion["proof"]),
                root: try digest(inclusion["root"])))
        let consistency = try #require(document["consistency_proof"] as? [String: Any])
        #expect(
            Merkle.verifyConsistency(
                oldSize: 4, newSize: 9, proof: try digests(consistency["proof"]),
                oldRoot: try digest(consistency["old_root"]),
                newRoot: try digest(consistency["new_root"])))
        let key = try Ed25519PublicKey(rawRepresentation: try bytes(document["authority_public_key_hex"]))
        for block in blocks {
            let hash = try digest(block["header_hash"])
            #expect(SHA256.hash(try bytes(block["header_hex"])) == hash)
            #expect(key.isValidSignature(try bytes(block["signature"]), for: hash.bytes))
        }
    }
}
