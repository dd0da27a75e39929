import Foundation
import Ledger
import LedgerCrypto
import TestSupport
import Testing
import TlogWitness
import VoteLedger

/// The witness's decisions (c2sp.org/tlog-witness `add-checkpoint`) on a log built here: every status in the
/// protocol's order, its durable state (kept across a reopen, a damaged file refused, one process at a time),
/// and its key file. `vote witness serve` over HTTP on a real ledger is tested in VoteServerTests.
@Suite struct WitnessTests {
    static let origin = "example.org/log"
    static let logKey = try! Ed25519PrivateKey(seed: [UInt8](repeating: 3, count: 32))
    static let log = try! WitnessedLog(
        option: origin + "=" + SignedNote.verifierKey(name: origin, key: logKey.publicKey))
    /// A log of 40 leaves, whose prefixes are the checkpoints.
    static let tree = MerkleTree(leaves: (0..<40).map { Merkle.leafHash([UInt8($0)]) })
    /// Another history of the same log: its first leaf differs.
    static let forked = MerkleTree(leaves: (0..<40).map { Merkle.leafHash([UInt8($0 == 0 ? 99 : $0)]) })

    /// A witness key in `directory` (made once per directory) and the witness over `directory/state`.
    static func witness(_ directory: TemporaryDirectory, time: UInt64 = 1_800_000_000) throws -> Witness {
        let path = directory.child("witness.key")
        let key =
            FileManager.default.fileExists(atPath: path)
            ? try WitnessKey(contentsOf: path) : try WitnessKey.create(at: path, name: "witness.example/w1")
        return try Witness(key: key, logs: [log], directory: directory.child("state"), clock: { time })
    }

    /// The signed checkpoint of the first `size` leaves of `tree`, signed by `key` under `name`.
    static func note(
        _ size: UInt64, of tree: MerkleTree = WitnessTests.tree, key: Ed25519PrivateKey = WitnessTests.logKey,
        name: String = WitnessTests.origin, origin: String = WitnessTests.origin
    ) throws -> SignedNote {
        let root = size == 0 ? Merkle.emptyRoot : tree.root(size: size)
        return try SignedNote.sign(Checkpoint(origin: origin, treeSize: size, root: root).text, name: name, key: key)
    }

    /// An `add-checkpoint` body.
    static func body(old: UInt64, proof: [Digest] = [], _ note: SignedNote) -> [UInt8] {
        Array(("old \(old)\n" + proof.map { Base64.encode($0.bytes) + "\n" }.joined() + "\n" + note.serialized).utf8)
    }

    static func status(_ answer: Witness.Answer) -> Int {
        switch answer {
        case .cosigned: return 200
        case .conflict: return 409
        case .refused(let status, _): return status
        }
    }

    @Test func cosignsACheckpointThatExtendsTheLastOne() throws {
        let directory = TemporaryDirectory()
        let witness = try Self.witness(directory)
        // First contact: old 0, no proof; any checkpoint the log signed is taken.
        let first = try Self.note(5)
        guard case .cosigned(let line) = witness.addCheckpoint(Self.body(old: 0, first)) else {
            Issue.record("not cosigned")
            return
        }
        let cosigned = try #require(SignedNote(parsing: first.serialized + line))
        #expect(witness.cosigner.timestamp(of: cosigned) == 1_800_000_000)
        #expect(line.hasPrefix("\u{2014} witness.example/w1 ") && line.hasSuffix("\n"))
        // Then from 5 with a consistency proof, again at the same size and root, and on.
        let proof = Self.tree.consistencyProof(oldSize: 5, newSize: 17)
        #expect(Self.status(witness.addCheckpoint(Self.body(old: 5, proof: proof, try Self.note(17)))) == 200)
        #expect(Self.status(witness.addCheckpoint(Self.body(old: 17, try Self.note(17)))) == 200)
        let next = Self.tree.consistencyProof(oldSize: 17, newSize: 40)
        #expect(Self.status(witness.addCheckpoint(Self.body(old: 17, proof: next, try Self.note(40)))) == 200)
        #expect(witness.cosignedSize(Self.origin) == 40)
        // Monitors read the latest cosigned checkpoint, with the log's signature and the cosignature.
        let served = try #require(witness.checkpoint(originHash: Self.log.originHash))
        let note = try #require(SignedNote(parsing: served))
        #expect(note.text == (try Self.note(40)).text)
        #expect(note.isSigned(by: Self.logKey.publicKey, name: Self.origin))
        #expect(witness.cosigner.timestamp(of: note) != nil)
        #expect(witness.checkpoint(originHash: String(repeating: "0", count: 64)) == nil)
    }

    /// A log that rotates its key: given with both keys, the witness takes a checkpoint signed by either (and keeps
    /// only the log's signatures in what it serves monitors); given with the old key only, the new one's is refused;
    /// the same key twice is a usage error.
    @Test func aLogMayHaveSeveralKeys() throws {
        let directory = TemporaryDirectory()
        let newKey = try Ed25519PrivateKey(seed: [UInt8](repeating: 4, count: 32))
        let rotated = try WitnessedLog(
            option: Self.origin + "=" + SignedNote.verifierKey(name: Self.origin, key: newKey.publicKey))
        let key = try WitnessKey.create(at: directory.child("witness.key"), name: "witness.example/w1")
        let witness = try Witness(
            key: key, logs: [Self.log, rotated], directory: directory.child("state"), clock: { 1_800_000_000 })
        #expect(witness.logs.count == 1 && witness.logs[Self.origin]?.keys.count == 2)
        #expect(Self.status(witness.addCheckpoint(Self.body(old: 0, try Self.note(5)))) == 200)
        // The next checkpoint is signed by the new key only, and by a stranger's, which is not kept.
        var next = try Self.note(17, key: newKey)
        let stranger = try SignedNote.sign(next.text, name: "stranger.example", key: Self.logKey)
        next.signatures += stranger.signatures
        let proof = Self.tree.consistencyProof(oldSize: 5, newSize: 17)
        #expect(Self.status(witness.addCheckpoint(Self.body(old: 5, proof: proof, next))) == 200)
        let servedText = try #require(witness.checkpoint(originHash: Self.log.originHash))
        let served = try #require(SignedNote(parsing: servedText))
        #expect(served.isSigned(by: newKey.publicKey, name: Self.origin))
        #expect(!served.signatures.contains { $0.name == "stranger.example" })

        // Following the old key only, the new key's checkpoint is not the log's.
        let oldOnly = TemporaryDirectory()
        let witnessOfOld = try Self.witness(oldOnly)
        #expect(Self.status(witnessOfOld.addCheckpoint(Self.body(old: 0, try Self.note(5, key: newKey)))) == 403)

        #expect(throws: VoteError.self) {
            _ = try Witness(key: key, logs: [Self.log, Self.log], directory: TemporaryDirectory().child("state"))
        }
    }

    @Test func refusesWithTheProtocolsStatuses() throws {
        let directory = TemporaryDirectory()
        let witness = try Self.witness(directory)
        let ten = try Self.note(10)
        // 400: malformed bodies, and an old size beyond the checkpoint's.
        for body in [
            "", "old 0\n", "old 01\n\n" + ten.serialized, "old -1\n\n" + ten.serialized, "new 0\n\n" + ten.serialized,
            "old 0\nnot base64\n\n" + ten.serialized, "old 0\n\n" + ten.text, "old 0\n\nnot a note\n\n\u{2014} x y\n",
        ] {
            #expect(Self.status(witness.addCheckpoint(Array(body.utf8))) == 400, "\(body)")
        }
        #expect(Self.status(witness.addCheckpoint([0xff, 0xfe])) == 400)
        let tooLong = [Digest](repeating: Self.tree.root(size: 1), count: 64)
        #expect(Self.status(witness.addCheckpoint(Self.body(old: 0, proof: tooLong, ten))) == 400)
        #expect(Self.status(witness.addCheckpoint(Self.body(old: 11, ten))) == 400)
        // 404: a log this witness does not follow.
        let other = try Self.note(10, name: "example.org/other", origin: "example.org/other")
        #expect(Self.status(witness.addCheckpoint(Self.body(old: 0, other))) == 404)
        // 403: signed by another key under the log's name, or the log's own signature altered.
        let stranger = try Ed25519PrivateKey(seed: [UInt8](repeating: 4, count: 32))
        #expect(Self.status(witness.addCheckpoint(Self.body(old: 0, try Self.note(10, key: stranger)))) == 403)
        var altered = ten
        altered.signatures[0].payload[10] ^= 1
        #expect(Self.status(witness.addCheckpoint(Self.body(old: 0, altered))) == 403)
        // 422: a proof from size 0, and a tree of size 0 whose root is not the empty tree's.
        let fromZero = Self.tree.consistencyProof(oldSize: 1, newSize: 10)
        #expect(Self.status(witness.addCheckpoint(Self.body(old: 0, proof: fromZero, ten))) == 422)
        let badEmpty = try SignedNote.sign(
            Checkpoint(origin: Self.origin, treeSize: 0, root: Self.tree.root(size: 1)).text, name: Self.origin,
            key: Self.logKey)
        #expect(Self.status(witness.addCheckpoint(Self.body(old: 0, badEmpty))) == 422)
        #expect(witness.cosignedSize(Self.origin) == 0, "nothing refused was recorded")

        #expect(Self.status(witness.addCheckpoint(Self.body(old: 0, ten))) == 200)
        // 409 with the size cosigned: the client's old size is not it.
        #expect(witness.addCheckpoint(Self.body(old: 0, try Self.note(12))) == .conflict(size: 10))
        #expect(witness.addCheckpoint(Self.body(old: 9, try Self.note(12))) == .conflict(size: 10))
        // 422: a bad proof, a fork (another history, its own valid proof), a split view (another root at 10).
        let wrongProof = Self.tree.consistencyProof(oldSize: 9, newSize: 20)
        #expect(Self.status(witness.addCheckpoint(Self.body(old: 10, proof: wrongProof, try Self.note(20)))) == 422)
        let forkProof = Self.forked.consistencyProof(oldSize: 10, newSize: 20)
        let fork = try Self.note(20, of: Self.forked)
        #expect(Self.status(witness.addCheckpoint(Self.body(old: 10, proof: forkProof, fork))) == 422)
        let split = try Self.note(10, of: Self.forked)
        #expect(Self.status(witness.addCheckpoint(Self.body(old: 10, split))) == 422)
        // A rollback: an older checkpoint cannot be sent with the size cosigned.
        #expect(Self.status(witness.addCheckpoint(Self.body(old: 10, try Self.note(9)))) == 400)
        #expect(witness.cosignedSize(Self.origin) == 10)
        #expect(witness.checkpoint(originHash: Self.log.originHash)?.hasPrefix((try Self.note(10)).text) == true)
    }

    @Test func theStateSurvivesAReopenAndADamagedFileIsRefused() throws {
        let directory = TemporaryDirectory()
        do {
            let witness = try Self.witness(directory)
            #expect(Self.status(witness.addCheckpoint(Self.body(old: 0, try Self.note(7)))) == 200)
            // One process at a time: a second witness on the same state is refused while the first runs.
            #expect(throws: VoteError.self) { try Self.witness(directory) }
        }
        do {
            let reopened = try Self.witness(directory)
            #expect(reopened.addCheckpoint(Self.body(old: 0, try Self.note(8))) == .conflict(size: 7))
            let proof = Self.tree.consistencyProof(oldSize: 7, newSize: 8)
            #expect(Self.status(reopened.addCheckpoint(Self.body(old: 7, proof: proof, try Self.note(8)))) == 200)
        }

        // A state file that is not this witness's cosigned checkpoint of the log stops the start.
        let file = directory.child("state/" + Self.log.originHash)
        let stored = try String(contentsOfFile: file, encoding: .utf8)
        for damaged in [
            String(stored.dropLast(10)), stored.replacingOccurrences(of: "\n8\n", with: "\n9\n"), "",
            try Self.note(8).serialized,
        ] {
            try Data(damaged.utf8).write(to: URL(fileURLWithPath: file))
            let error = try #require(throws: VoteError.self) { try Self.witness(directory) }
            #expect(error.message.contains("is damaged"), "\(error.message)")
        }
        try Data(stored.utf8).write(to: URL(fileURLWithPath: file))
        #expect(try Self.witness(directory).cosignedSize(Self.origin) == 8)
    }

    /// A new state that cannot be stored is not cosigned (503), and nothing changes: the next request is
    /// judged against the size last stored.
    @Test func aStateThatCannotBeStoredIsNotCosigned() throws {
        let directory = TemporaryDirectory()
        let witness = try Self.witness(directory)
        #expect(Self.status(witness.addCheckpoint(Self.body(old: 0, try Self.note(3)))) == 200)
        // A directory where the temporary file goes makes the write fail, even for root.
        let blocker = directory.child("state/" + Self.log.originHash + ".tmp")
        #expect(mkdir(blocker, 0o700) == 0)
        let proof = Self.tree.consistencyProof(oldSize: 3, newSize: 6)
        let refused = witness.addCheckpoint(Self.body(old: 3, proof: proof, try Self.note(6)))
        #expect(Self.status(refused) == 503)
        #expect(witness.cosignedSize(Self.origin) == 3)
        rmdir(blocker)
        #expect(Self.status(witness.addCheckpoint(Self.body(old: 3, proof: proof, try Self.note(6)))) == 200)
    }

    @Test func witnessKeysArePrivateAndNeverOverwritten() throws {
        let directory = TemporaryDirectory()
        let path = directory.child("witness.key")
        let made = try WitnessKey.create(at: path, name: "witness.example/w1")
        var status = stat()
        #expect(stat(path, &status) == 0 && status.st_mode & 0o777 == 0o600)
        #expect(try WitnessKey(contentsOf: path).cosigner == made.cosigner)
        let again = try #require(throws: VoteError.self) { try WitnessKey.create(at: path, name: "other") }
        #expect(again.message.contains("already exists"))
        #expect(try WitnessKey(contentsOf: path).cosigner == made.cosigner)
        for name in ["", "two words", "a+b", "tab\there"] {
            #expect(throws: VoteError.self) { try WitnessKey.create(at: directory.child("bad.key"), name: name) }
        }
        chmod(path, 0o644)
        #expect(throws: VoteError.self) { try WitnessKey(contentsOf: path) }
        let garbage = directory.child("garbage.key")
        #expect(FileManager.default.createFile(atPath: garbage, contents: Data("PRIVATE+KEY+x\n".utf8)))
        chmod(garbage, 0o600)
        #expect(throws: VoteError.self) { try WitnessKey(contentsOf: garbage) }
    }
}
