// libFuzzer target: receipt (C2SP tlog-proof), signed note, checkpoint and base64 parsers never crash;
// what parses serialises back to the same text.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: start, count: count))
    let text = String(decoding: bytes, as: UTF8.self)
    if let decoded = Base64.decode(text) {
        precondition(Base64.encode(decoded) == text, "base64 is not canonical")
    }
    if let note = SignedNote(parsing: text) {
        precondition(SignedNote(parsing: note.serialized) == note, "signed note does not round-trip")
        if let checkpoint = Checkpoint(text: note.text) {
            precondition(checkpoint.text == note.text, "checkpoint does not round-trip")
        }
    }
    if let proof = TlogProof(parsing: text) {
        precondition(TlogProof(parsing: proof.serialized) == proof, "tlog-proof does not round-trip")
    }
    _ = Checkpoint(text: text)
    return 0
}
