import Election
import FileDriver
import FileStore
import Foundation
import Ledger
import LedgerCrypto
import TestSupport
import Testing

@testable import VoteLedger

/// Receipts, signed heads, rollback and fork detection, certified results and export.
@Suite struct AuditTests {
    static let t0 = ServiceTests.t0

    /// A ledger where votes land in several blocks; returns the writer, tokens and receipts of votes in
    /// the first, a middle and the last voting block (each under the head right after its block).
    static func votedLedger(at path: String) throws -> (ElectionLedger, [TlogProof], [BlockLocation]) {
        let (ledger, tokens) = try ServiceTests.election(at: path, voters: 30, votes: 0)
        var proofs: [TlogProof] = []
        for (index, token) in tokens.prefix(9).enumerated() {
            let receipt = try ledger.submit(
                .castVote(place: 1, candidate: 1, tokenHash: token.hash), now: t0 + 2000 + Int64(index))
            if [0, 4, 8].contains(index) { proofs.append(contentsOf: try ledger.tlogProofs(for: [receipt])) }
        }
        var locations: [BlockLocation] = []
        try FileBlockSource(path: path).forEachBlock { _, location in locations.append(location) }
        return (ledger, proofs, locations)
    }

    static func temporary() -> String { NSTemporaryDirectory() + "audit-\(UUID().uuidString)" }

    /// Receipts for votes in the first, a middle and the last block survive a text round trip and audit
    /// as included and unchanged; they also check offline with only the authority key.
    @Test func receiptRoundTrip() throws {
        let path = AuditTests.temporary()
        defer { removeLedger(path) }
        let (ledger, proofs, _) = try AuditTests.votedLedger(at: path)
        let key = try Ed25519PublicKey(rawRepresentation: ledger.genesis.authorityKey)
        ledger.close()
        let audited = try AuditedLedger(FileBlockSource(path: path))
        for proof in proofs {
            let parsed = try #require(TlogProof(parsing: proof.serialized))
            #expect(parsed == proof)
            let report = try Auditor.audit(receipt: parsed, ledger: audited, key: nil, head: nil)
            #expect(report.currentTreeSize == audited.head.treeSize)
            guard case .voteCast(1, 1, _) = report.event else {
                Issue.record("receipt should carry the vote"); continue
            }
            let offline = try Auditor.audit(receipt: parsed, ledger: nil, key: key, head: nil)
            #expect(offline.index == report.index && offline.currentTreeSize == nil)
        }
        #expect(Set(proofs.map { Checkpoint(text: $0.checkpoint.text)?.treeSize }).count == 3)
    }

    /// A receipt proven again under a later head (as `vote serve` does for a vote whose block the witnesses
    /// cosigned only as part of a later head) audits as the same event; a head that is not one of this
    /// ledger's (a height whose block has another tree) is refused.
    @Test func receiptUnderALaterHead() throws {
        let path = AuditTests.temporary()
        defer { removeLedger(path) }
        let (ledger, proofs, _) = try AuditTests.votedLedger(at: path)
        let head = try ledger.signedHead()
        ledger.close()
        let source = try FileBlockSource(path: path)
        let audited = try AuditedLedger(source)
        let first = try Auditor.audit(receipt: proofs[0], ledger: audited, key: nil, head: nil)
        let event = try #require(first.event)
        let receipt = EventReceipt(
            height: first.height, index: first.index, eventHash: Merkle.leafHash(try #require(proofs[0].extra)),
            event: event)
        let later = try TlogProof.receipt(for: receipt, in: source, under: head)
        #expect(later.checkpoint == head && later.extra == proofs[0].extra && later.index == proofs[0].index)
        #expect(later.proof != proofs[0].proof)
        let report = try Auditor.audit(receipt: later, ledger: audited, key: nil, head: nil)
        #expect(report.receiptTreeSize == audited.head.treeSize && report.height == first.height)
        // The first receipt's head with the last block's height: no block of that height has its tree.
        var mislabelled = proofs[0].checkpoint
        mislabelled.text = mislabelled.text.replacingOccurrences(
            of: "height \(first.height)", with: "height \(audited.head.height)")
        #expect(throws: VoteError.self) { try TlogProof.receipt(for: receipt, in: source, under: mislabelled) }
    }

    /// Truncating the ledger before a receipt's block: the receipt's head is no longer a prefix.
    @Test func auditFailsAfterTruncation() throws {
        let path = AuditTests.temporary()
        defer { removeLedger(path) }
        let (ledger, proofs, locations) = try AuditTests.votedLedger(at: path)
        ledger.close()
        let middle = proofs[1]
        let height = try #require(
            Checkpoint(text: middle.checkpoint.text)?.extensionValue("height").flatMap(UInt64.init))
        let segment = LedgerDirectory(path).segmentPath(0)
        #expect(truncate(segment, off_t(locations[Int(height)].offset)) == 0)
        let error = auditError(middle, ledger: try AuditedLedger(FileBlockSource(path: path)))
        #expect(error?.isIntegrityFailure == true)
        #expect(
            error?.message.contains(
                "the receipt's head is not a prefix of this ledger: the ledger was truncated or rolled back") == true)
    }

    /// Rewriting a block and re-signing it with the right key (a fork): the receipt and a head published
    /// before both fail, naming the fork.
    @Test func auditFailsAfterForkWithTheRightKey() throws {
        let path = AuditTests.temporary()
        defer { removeLedger(path) }
        let (ledger, proofs, locations) = try AuditTests.votedLedger(at: path)
        let published = try ledger.signedHead()
        ledger.close()
        let height = try #require(
            Checkpoint(text: proofs[1].checkpoint.text)?.extensionValue("height").flatMap(UInt64.init))
        // Cut the log at the receipt's block and write a different block there, signed by the same authority.
        #expect(truncate(LedgerDirectory(path).segmentPath(0), off_t(locations[Int(height)].offset)) == 0)
        for index in ["blocks.idx", "leaves.idx", "frontier.idx", "snapshot.bin"] {
            try? FileManager.default.removeItem(atPath: path + "/" + index)
        }
        let forger = try FileBlockStore.open(at: path, log: { _ in })
        let forged = ElectionEvent.voteCast(place: 1, candidate: 2, tokenHash: SHA256.hash(Array("forged".utf8)))
        for _ in 0..<12 { try forger.append([forged.ledgerEvent], timestamp: AuditTests.t0 + 9000) }
        forger.close()

        let audited = try AuditedLedger(FileBlockSource(path: path))
        #expect(audited.head.treeSize > Checkpoint(text: proofs[1].checkpoint.text)!.treeSize)
        let error = auditError(proofs[1], ledger: audited)
        #expect(
            error?.message
                == "integrity failure: the receipt's head is not a prefix of this ledger: the ledger was rewritten or forked"
        )
        #expect(auditError(proofs[0], ledger: audited) == nil, "a receipt from before the fork still holds")
        let headCheck = auditError(proofs[0], ledger: audited, head: published)
        #expect(headCheck?.message.contains("the published head is not a prefix of this ledger") == true)
    }

    /// An edited receipt fails: another index, a changed proof hash, a changed event, a changed head.
    @Test func editedReceiptFails() throws {
        let path = AuditTests.temporary()
        defer { removeLedger(path) }
        let (ledger, proofs, _) = try AuditTests.votedLedger(at: path)
        ledger.close()
        let audited = try AuditedLedger(FileBlockSource(path: path))
        let original = proofs[1]
        var index = original
        index.index += 1
        var hash = original
        hash.proof[0] = SHA256.hash(hash.proof[0].bytes)
        var event = original
        event.extra![event.extra!.count - 1] ^= 1
        var head = original
        head.checkpoint.text = head.checkpoint.text.replacingOccurrences(of: "\nheight", with: "\nnote 0\nheight")
        for edited in [index, hash, event] {
            #expect(
                auditError(edited, ledger: audited)?.message
                    == "integrity failure: the event is not included under the receipt's head: the receipt was altered")
        }
        #expect(
            auditError(head, ledger: audited)?.message
                == "integrity failure: the head's signature is not valid under the authority key")
        var text = original.serialized
        text = text.replacingOccurrences(of: "index ", with: "index x")
        #expect(TlogProof(parsing: text) == nil)
    }

    /// The remembered head refuses a ledger that was later forked, even with a valid key and chain.
    @Test func rememberedHeadRefusesFork() throws {
        let path = AuditTests.temporary()
        let state = AuditTests.temporary()
        defer {
            removeLedger(path)
            try? FileManager.default.removeItem(atPath: state)
        }
        let (ledger, _, locations) = try AuditTests.votedLedger(at: path)
        ledger.close()
        let memory = RememberedHeads(FileDerivedStore(state: state))
        try memory.check(try AuditedLedger(FileBlockSource(path: path)))
        try memory.check(try AuditedLedger(FileBlockSource(path: path)))
        #expect(truncate(LedgerDirectory(path).segmentPath(0), off_t(locations[locations.count - 2].offset)) == 0)
        do {
            try memory.check(try AuditedLedger(FileBlockSource(path: path)))
            Issue.record("a rolled-back ledger was accepted")
        } catch let error as VoteError {
            #expect(error.isIntegrityFailure)
            #expect(error.message.contains("the head you verified") && error.message.contains("rolled back"))
        }
    }

    /// A checkpoint we sign matches the C2SP signed-note rules byte for byte: line layout, base64 root,
    /// key ID = SHA-256(name || 0x0A || 0x01 || key)[:4], em dash line. Expected text computed independently
    /// (Python `cryptography`, RFC 8032 TEST 1 key).
    @Test func checkpointMatchesSignedNoteRules() throws {
        let key = try Ed25519PrivateKey(
            seed: Hex.decode("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")!)
        let header = BlockHeader(
            eventCount: 3, height: 3, timestamp: 1_767_225_602_000, treeSize: 9,
            ledgerID: LedgerID(bytes: Array(0..<16))!,
            previousHash: .zero,
            treeRoot: Digest(hex: "7c989a4d1f3070bc0a820dbc9d6c8d2be0225c625acedfeb121e3213c13236d9")!)
        let checkpoint = SignedHead.checkpoint(header)
        let note = try SignedNote.sign(checkpoint.text, name: checkpoint.origin, key: key)
        #expect(
            note.serialized
                == "voteledger/000102030405060708090a0b0c0d0e0f\n9\nfJiaTR8wcLwKgg28nWyNK+AiXGJazt/rEh4yE8EyNtk=\nheight 3\ntime 1767225602000\n\n\u{2014} voteledger/000102030405060708090a0b0c0d0e0f Fr680OX5hQAkMP6WDSZ3b2cQjPecRY7HZG/iZ/uPZ/L9pe1uf4HAe3l98qB8H039IGJYi7ek/loFeNYXIT4YS258tgk=\n"
        )
        #expect(
            SignedNote.verifierKey(name: checkpoint.origin, key: key.publicKey)
                == "voteledger/000102030405060708090a0b0c0d0e0f+16bebcd0+AddamAGCsQq31Uv+08lkBzoO4XLz2qYjJa8CGmj3B1Ea")
        #expect(SignedNote(parsing: note.serialized) == note)
        #expect(Checkpoint(text: note.text) == checkpoint)
        #expect(note.isSigned(by: key.publicKey, name: checkpoint.origin))
        #expect(!note.isSigned(by: try Ed25519PrivateKey().publicKey, name: checkpoint.origin))
    }

    /// The signed-note spec's own example: its verifier key verifies its note.
    @Test func signedNoteSpecExample() throws {
        let vkey = "example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k"
        let parts = vkey.split(separator: "+")
        let keyBytes = try #require(Base64.decode(parts[2]))
        let key = try Ed25519PublicKey(rawRepresentation: Array(keyBytes.dropFirst()))
        #expect(Hex.encode(SignedNote.keyID(name: "example.com/foo", key: key)) == "530d903a")
        let text =
            "This is an example message.\n\n\u{2014} example.com/foo Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1ERYNZXsYjOBH3mFXmRKuwHjG1Yu72IneyaQM=\n"
        let note = try #require(SignedNote(parsing: text))
        #expect(note.isSigned(by: key, name: "example.com/foo"))
        #expect(note.serialized == text)
        let tampered = try #require(
            SignedNote(parsing: text.replacingOccurrences(of: "example message", with: "example massage")))
        #expect(!tampered.isSigned(by: key, name: "example.com/foo"))
    }

    /// Results can be certified only after voting closes, once, and only equal to the tally; a forged
    /// certification on the ledger fails verification.
    @Test func certifiedResults() throws {
        let path = AuditTests.temporary()
        defer { removeLedger(path) }
        let (ledger, _, _) = try AuditTests.votedLedger(at: path)
        let end = AuditTests.t0 + 100_000
        #expect(throws: VoteError.self) {
            try ledger.submit(.certifyResults(place: 1, treeSize: ledger.head.treeSize), now: end - 1)
        }
        let certified = try ledger.submit(.certifyResults(place: 1, treeSize: ledger.head.treeSize), now: end)
        guard case .resultsCertified(let results) = certified.event else {
            Issue.record("no certification")
            return
        }
        #expect(results.votes.map(\.votes) == [9, 0] && results.voted == 9 && results.authorized == 30)
        #expect(results.treeSize == certified.index)
        do {
            _ = try ledger.submit(.certifyResults(place: 1, treeSize: ledger.head.treeSize), now: end + 1)
            Issue.record("certified twice")
        } catch let error as VoteError {
            #expect(error.message == "results of place 1 are already certified")
        }
        ledger.close()
        _ = try ElectionVerifier.verify(FileBlockSource(path: path))

        // A certification that disagrees with the votes, written around the contract.
        let other = AuditTests.temporary()
        defer { try? FileManager.default.removeItem(atPath: other) }
        let (second, _, _) = try AuditTests.votedLedger(at: other)
        let size = second.head.treeSize
        second.close()
        let store = try FileBlockStore.open(at: other, log: { _ in })
        let forged = CertifiedResults(place: 1, treeSize: size, authorized: 30, voted: 9, votes: [(1, 4), (2, 5)])
        try store.append([ElectionEvent.resultsCertified(forged).ledgerEvent], timestamp: end)
        store.close()
        do {
            _ = try ElectionVerifier.verify(FileBlockSource(path: other))
            Issue.record("forged results verified")
        } catch let error as VoteError {
            #expect(error.isIntegrityFailure)
            #expect(
                error.message.hasSuffix("breaks the rules: the certified results of place 1 differ from the votes cast")
            )
        }
    }

    private func auditError(_ receipt: TlogProof, ledger: AuditedLedger, head: SignedNote? = nil) -> VoteError? {
        do {
            _ = try Auditor.audit(receipt: receipt, ledger: ledger, key: nil, head: head)
            return nil
        } catch let error as VoteError {
            return error
        } catch {
            Issue.record("unexpected \(error)")
            return nil
        }
    }
}
