import Foundation
import Ledger
import LedgerCrypto
import Testing
import TlogWitness

/// The independent check of witness cosignatures: `Tools/verify_ledger.py --witness NAME=VKEY --quorum K`
/// rebuilds each cosignature's signed message from the tlog-cosignature text alone ("cosignature/v1", "time T",
/// the checkpoint) and verifies it with Python's `cryptography`, on a real receipt whose head carries lines made
/// by `Cosignature.sign`. It must count exactly the cosignatures the Swift side (`Cosigner.timestamp(of:)`)
/// counts.
@Suite struct CosignatureCheckTests {
    /// Three witnesses' keys from fixed seeds.
    static let witnesses: [(name: String, key: Ed25519PrivateKey)] = (1...3).map {
        ("witness.example/w\($0)", try! Ed25519PrivateKey(seed: [UInt8](repeating: UInt8(40 + $0), count: 32)))
    }

    static func cosigner(_ index: Int) -> Cosigner {
        Cosigner(name: witnesses[index].name, key: witnesses[index].key.publicKey)
    }

    /// The cosignature line of witness `index` on `note`'s text at `time`.
    static func line(_ index: Int, on note: SignedNote, time: UInt64 = 1_764_000_000) throws -> String {
        let (name, key) = witnesses[index]
        return
            "\u{2014} \(name) \(Base64.encode(try Cosignature.sign(note.text, name: name, key: key, timestamp: time)))\n"
    }

    /// Runs the Python verifier on `receipt` against `ledger`, with every witness named and `quorum`.
    static func python(_ receipt: String, ledger: String, quorum: Int) throws -> IndependentVerifierTests.Verdict {
        try IndependentVerifierTests.python(
            ["--receipt", receipt, "--ledger", ledger, "--quorum", String(quorum)]
                + (0..<3).flatMap { ["--witness", "\(witnesses[$0].name)=\(cosigner($0).verifierKey)"] })
    }

    @Test func pythonCountsTheCosignaturesSwiftCounts() throws {
        let election = try TestElection()
        let opens = try election.place()
        try election.ok(["candidate", "register", "--place", "1", "--name", "Alice"])
        let token = try election.authorize("voter-1")
        election.advance(to: opens)
        let receiptFile = election.root + "/receipt.tlog-proof"
        try election.ok(["cast", "--place", "1", "--candidate", "1", "--token", token, "--receipt-out", receiptFile])
        let plain = try String(contentsOfFile: receiptFile, encoding: .utf8)
        let receipt = try #require(TlogProof(parsing: plain))

        // Two of three witnesses cosigned: quorum 2 passes, quorum 3 fails naming how many were found.
        let two = plain + (try Self.line(0, on: receipt.checkpoint)) + (try Self.line(2, on: receipt.checkpoint))
        let twoFile = election.write("two.tlog-proof", two)
        let cosigned = try #require(TlogProof(parsing: two)).checkpoint
        #expect((0..<3).map { Self.cosigner($0).timestamp(of: cosigned) } == [1_764_000_000, nil, 1_764_000_000])
        let passed = try Self.python(twoFile, ledger: election.ledger, quorum: 2)
        #expect(passed.status == 0, "\(passed.text)")
        #expect(passed.json["cosigned_by"] as? [String] == [Self.witnesses[0].name, Self.witnesses[2].name])
        let short = try Self.python(twoFile, ledger: election.ledger, quorum: 3)
        #expect(short.status == 3, "\(short.text)")
        #expect((short.json["error"] as? String)?.contains("2 valid cosignatures of the 3 witnesses") == true)

        // A cosignature over other text: the time in the line is not the time signed, or the checkpoint differs.
        var retimed = try #require(TlogProof(parsing: two))
        retimed.checkpoint.signatures[1].payload[11] ^= 1
        var otherText = receipt.checkpoint
        otherText.text = otherText.text.replacingOccurrences(of: "\ntime ", with: "\ntime 1")
        let wrongMessage = plain + (try Self.line(0, on: otherText)) + (try Self.line(2, on: receipt.checkpoint))
        for (name, text) in [("retimed", retimed.serialized), ("other-text", wrongMessage)] {
            let note = try #require(TlogProof(parsing: text)).checkpoint
            #expect(Self.cosigner(0).timestamp(of: note) == nil, "\(name)")
            let file = election.write(name + ".tlog-proof", text)
            let refused = try Self.python(file, ledger: election.ledger, quorum: 2)
            #expect(refused.status == 3, "\(name): \(refused.text)")
            #expect(try Self.python(file, ledger: election.ledger, quorum: 1).status == 0, "\(name)")
        }

        // `vote audit` takes the same policy: quorum 2 passes, 3 fails (exit 3) naming how many were found.
        let witnessOptions = (0..<3).flatMap {
            ["--witness", "\(Self.witnesses[$0].name)=\(Self.cosigner($0).verifierKey)"]
        }
        let audited = try election.ok(["audit", twoFile, "--quorum", "2"] + witnessOptions)
        #expect(audited.contains("cosigned by 2 of 3 witnesses (quorum 2): witness.example/w1, witness.example/w3"))
        let tooFew = try election.vote(["audit", twoFile] + witnessOptions)
        #expect(tooFew.status == 3, "\(tooFew.err)")
        #expect(
            tooFew.err
                == "vote: integrity failure: the receipt's head has 2 valid cosignatures of the 3 witnesses named "
                + "(witness.example/w1, witness.example/w3), fewer than the quorum of 3\n")
        let plainAudit = try election.vote(["audit", receiptFile, "--quorum", "1"] + witnessOptions)
        #expect(plainAudit.status == 3 && plainAudit.err.contains("has 0 valid cosignatures"), "\(plainAudit.err)")
        // With --head the published head must carry them: a cosigned head, a receipt without any.
        let cosignedHead = election.write("head.txt", cosigned.serialized)
        let withHead = try election.vote(
            ["audit", receiptFile, "--head", cosignedHead, "--quorum", "2"] + witnessOptions)
        #expect(withHead.status == 0, "\(withHead.err)")
        let headAlone = try election.vote(
            ["audit", "--head", cosignedHead, "--quorum", "2", "--json"] + witnessOptions)
        #expect(headAlone.status == 0, "\(headAlone.err)")
        #expect(
            (try json(headAlone.out) as? [String: Any])?["cosigned_by"] as? [String] == [
                "witness.example/w1", "witness.example/w3",
            ])
        for usage in [
            ["--quorum", "2"], ["--quorum", "4"] + witnessOptions, ["--witness", "x=y"],
            ["--quorum", "0"] + witnessOptions,
        ] {
            let refused = try election.vote(["audit", twoFile] + usage)
            #expect(refused.status == 2, "\(usage): \(refused.err)")
        }

        // A witness named with a verifier key of another type, or under another name, is a usage error.
        let logKey = SignedNote.verifierKey(name: Self.witnesses[0].name, key: Self.witnesses[0].key.publicKey)
        for witness in ["\(Self.witnesses[0].name)=\(logKey)", "other=\(Self.cosigner(0).verifierKey)"] {
            let usage = try IndependentVerifierTests.python(
                ["--receipt", twoFile, "--ledger", election.ledger, "--witness", witness])
            #expect(usage.status == 2, "\(usage.text)")
        }
    }
}
