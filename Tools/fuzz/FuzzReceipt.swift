// libFuzzer target for the receipt and head parsers: C2SP tlog-proof (`TlogProof`), signed note
// (`SignedNote`), checkpoint (`Checkpoint`) and base64, then what `vote audit RECEIPT --key VKEY` does
// with a parsed receipt (signature, inclusion proof, the published-head checks).
//
// Must hold for every input: no trap, no sanitizer report; what parses serialises back to exactly the
// same bytes (each has one text form), and re-parses to an equal value; base64 decode then encode gives
// the input back, and encode then decode gives the bytes back.
import Foundation

/// The verifier key of the ledger the seed receipts and heads in corpus/receipt/ come from (`vote head`
/// prints it), so an unmutated seed passes the signature check and reaches the inclusion proof.
private let verifierKey =
    "voteledger/8f7374ae5cf1b2ca4789f60a6b89c5a7+45b92ced+AZ8/EU0Mu4oXT7wGA8nt1HrDWBgvahxEsg5XVUprH6Y9"

/// Parsed as `vote audit --key` parses it.
private let authority: Ed25519PublicKey = {
    let parts = verifierKey.split(separator: "+")
    guard parts.count == 3, let bytes = Base64.decode(parts[2]), bytes.count == 33, bytes[0] == 0x01,
        let key = try? Ed25519PublicKey(rawRepresentation: Array(bytes.dropFirst())),
        SignedNote.keyID(name: String(parts[0]), key: key) == Hex.decode(String(parts[1]))
    else { fatalError("bad verifier key in FuzzReceipt.swift") }
    return key
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: start, count: count))
    let text = String(decoding: bytes, as: UTF8.self)

    if let decoded = Base64.decode(text) {
        precondition(Base64.encode(decoded) == text, "base64 is not canonical: decode then encode differs")
    }
    precondition(Base64.decode(Base64.encode(bytes)) == bytes, "base64 encode then decode differs")

    if let note = SignedNote(parsing: text) {
        precondition(same(note.serialized, text), "signed note serialises to other bytes")
        precondition(SignedNote(parsing: note.serialized) == note, "signed note does not round-trip")
        _ = note.isSigned(by: authority, name: "voteledger/8f7374ae5cf1b2ca4789f60a6b89c5a7")
        _ = try? SignedHead.verify(note, key: authority, ledgerID: nil)
    }
    if let checkpoint = Checkpoint(text: text) {
        precondition(same(checkpoint.text, text), "checkpoint serialises to other bytes")
        precondition(Checkpoint(text: checkpoint.text) == checkpoint, "checkpoint does not round-trip")
        _ = checkpoint.extensionValue("height").flatMap { UInt64($0) }
    }
    if let proof = TlogProof(parsing: text) {
        precondition(same(proof.serialized, text), "tlog-proof serialises to other bytes")
        precondition(TlogProof(parsing: proof.serialized) == proof, "tlog-proof does not round-trip")
        audit(proof)
    }
    return 0
}

/// Byte equality (String's == is canonical equivalence, which would hide a change of encoding).
private func same(_ a: String, _ b: String) -> Bool { a.utf8.elementsEqual(b.utf8) }

/// What `vote audit RECEIPT --key VKEY [--head H]` does offline, plus the proof checks it makes after the
/// signature, run on the receipt's own numbers whether or not the signature holds.
private func audit(_ proof: TlogProof) {
    _ = try? Auditor.audit(receipt: proof, ledger: nil, key: authority, head: nil)
    _ = try? Auditor.audit(receipt: proof, ledger: nil, key: authority, head: proof.checkpoint)
    guard let checkpoint = Checkpoint(text: proof.checkpoint.text) else { return }
    let leaf = Merkle.leafHash(proof.extra ?? [])
    _ = Merkle.verifyInclusion(
        leafHash: leaf, index: proof.index, size: checkpoint.treeSize, proof: proof.proof, root: checkpoint.root)
    _ = Merkle.verifyConsistency(
        oldSize: proof.index, newSize: checkpoint.treeSize, proof: proof.proof, oldRoot: leaf, newRoot: checkpoint.root)
    if let extra = proof.extra, extra.count >= 2 {
        // As the audit report decodes the vote it carries.
        _ = try? ElectionEvent(
            LedgerEvent(type: UInt16(extra[0]) << 8 | UInt16(extra[1]), payload: Array(extra.dropFirst(2))))
    }
}
