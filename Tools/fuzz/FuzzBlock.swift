// libFuzzer target: the block and frame decoders, election events and snapshots never crash, whatever
// the bytes; a segment file of arbitrary bytes is read as a ledger or refused.
import Foundation

private let directory: String = {
    let path = NSTemporaryDirectory() + "fuzz-block-\(getpid())"
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: start, count: count))
    if let block = try? Block(decoding: bytes) {
        // What decodes must re-encode to the same bytes (the encoding is canonical).
        precondition(block.encoded == bytes, "block re-encoding differs")
    }
    if bytes.count >= 2 {
        let event = LedgerEvent(type: UInt16(bytes[0]) << 8 | UInt16(bytes[1]), payload: Array(bytes.dropFirst(2)))
        if let decoded = try? ElectionEvent(event) {
            precondition(decoded.ledgerEvent == event, "election event re-encoding differs")
        }
        _ = try? Genesis(decoding: event)
    }
    _ = try? Snapshot(decoding: bytes)
    // The same bytes as a whole segment file: read every block, find the last one, or refuse clearly.
    let segment = directory + "/segment-00000000.vlseg"
    _ = FileManager.default.createFile(atPath: segment, contents: Data(bytes))
    if let reader = try? LedgerReader(path: directory) {
        _ = try? reader.forEachBlock { raw, _ in _ = try? Block(decoding: raw) }
        _ = try? reader.lastBlock()
        _ = try? ChainVerifier.verify(path: directory)
    }
    return 0
}
