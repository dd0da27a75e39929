import Foundation
import Hummingbird
import JSONViews
import Ledger
import LedgerCrypto
import VoteLedger

/// Writes the receipt a vote is answered with: the bytes `JSONBody.response(ReceiptJSON(…))` gives (the
/// CLI's `vote cast --json`), written directly. JSONEncoder, and reading the signed checkpoint back for its
/// tree size and root, took more server CPU than the rest of a vote. Every vote of a block shares its
/// signed checkpoint, so the checkpoint's parts are worked out once per block and kept until the next.
final class ReceiptEncoder: @unchecked Sendable {
    /// The parts of the last block's checkpoint: the signed note, escaped for a JSON string; the tree size
    /// and root hex read from its text (0 and empty if it does not parse, as ReceiptJSON has them).
    private struct CheckpointParts {
        var note: SignedNote
        var escaped: [UInt8]
        var treeSize: UInt64
        var root: [UInt8]
    }

    private let lock = NSLock()
    private var last: CheckpointParts?

    /// The receipt of `receipt`, a vote for `candidate` in `place` (nil for a ballot's answers), with its tlog-proof
    /// `proof`.
    func body(place: UInt32, candidate: UInt32?, receipt: EventReceipt, proof: TlogProof) -> ByteBuffer {
        let checkpoint = parts(of: proof.checkpoint)
        var json = JSONBytes(capacity: 2 * checkpoint.escaped.count + 160 * proof.proof.count + 512)
        // Keys in sorted order, as JSONEncoder's `.sortedKeys` writes them.
        json.raw("{")
        if let candidate {
            json.raw("\"candidate\":")
            json.number(UInt64(candidate))
            json.raw(",")
        }
        json.raw("\"checkpoint\":\"")
        json.raw(checkpoint.escaped)
        json.raw("\",\"event_hash\":\"")
        receipt.eventHash.withUnsafeBytes { json.hex($0) }
        json.raw("\",\"extra\":\"")
        (proof.extra ?? []).withUnsafeBytes { json.base64($0) }
        json.raw("\",\"height\":")
        json.number(receipt.height)
        json.raw(",\"index\":")
        json.number(receipt.index)
        json.raw(",\"place\":")
        json.number(UInt64(place))
        json.raw(",\"proof\":[")
        for (offset, digest) in proof.proof.enumerated() {
            json.raw(offset == 0 ? "\"" : ",\"")
            digest.withUnsafeBytes { json.hex($0) }
            json.raw("\"")
        }
        // The tlog-proof text (`TlogProof.serialized`): its lines are base64, digits and the checkpoint.
        json.raw("],\"receipt\":\"")
        json.escaped(TlogProof.header)
        if let extra = proof.extra {
            json.raw("\\nextra ")
            extra.withUnsafeBytes { json.base64($0) }
        }
        json.raw("\\nindex ")
        json.number(proof.index)
        json.raw("\\n")
        for digest in proof.proof {
            digest.withUnsafeBytes { json.base64($0) }
            json.raw("\\n")
        }
        json.raw("\\n")
        json.raw(checkpoint.escaped)
        json.raw("\",\"root\":\"")
        json.raw(checkpoint.root)
        json.raw("\",\"tree_size\":")
        json.number(checkpoint.treeSize)
        json.raw("}")
        return json.buffer
    }

    /// The response: `status` (201 for a vote just recorded) with the receipt, as `JSONBody.response(_:status:)`
    /// makes it.
    func response(
        place: UInt32, candidate: UInt32?, receipt: EventReceipt, proof: TlogProof,
        status: HTTPResponse.Status = .created
    ) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: body(place: place, candidate: candidate, receipt: receipt, proof: proof)))
    }

    private func parts(of note: SignedNote) -> CheckpointParts {
        if let last = lock.withLock({ last }), ReceiptEncoder.same(last.note, note) { return last }
        var escaped = JSONBytes(capacity: 512)
        escaped.escaped(note.serialized)
        let checkpoint = Checkpoint(text: note.text)
        var root = JSONBytes(capacity: 64)
        checkpoint?.root.withUnsafeBytes { root.hex($0) }
        let parts = CheckpointParts(
            note: note, escaped: escaped.bytes, treeSize: checkpoint?.treeSize ?? 0, root: root.bytes)
        lock.withLock { last = parts }
        return parts
    }

    /// Whether two notes are the same (`SignedNote.==` without its arrays).
    private static func same(_ a: SignedNote, _ b: SignedNote) -> Bool {
        a.text == b.text
            && a.signatures.elementsEqual(b.signatures) { $0.name == $1.name && $0.payload == $1.payload }
    }
}
