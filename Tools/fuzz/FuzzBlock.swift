// libFuzzer target for everything that reads ledger bytes: the block, block header, genesis, election
// event and snapshot decoders, and a whole ledger directory (segment scanner, frames, torn tails, block
// leaf and node indexes, snapshot) read the way `vote verify`, `vote tally` and `vote audit` read it.
//
// Must hold for every input: no trap, no sanitizer report, no unbounded allocation; a decoder that
// accepts bytes re-encodes them exactly (blocks, headers, genesis and election events are canonical);
// a decoded snapshot re-encodes to bytes that decode to the same snapshot.
//
// Input layout (see README.md): [ledger part][blocks.idx][leaves.idx][snapshot.bin][trailer]
//   ledger part   a whole segment file if it starts with "VOTELEDG", else one block, written as
//                 segment 0 holding that block in one frame (so block mutations get past the CRC)
//   trailer       optional, 9 bytes: "VLFZ", u8 B, u8 L, u16 S (big-endian), u8 flags; the B·32 bytes
//                 before the L·32 before the S before it are blocks.idx, leaves.idx and snapshot.bin
//                 (written only with a trailer; snapshot.bin only if S > 0); flags bit 0 recomputes the
//                 CRC-32C of every well-formed frame of the segment.
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The scratch ledger directory of this process, removed at a normal exit. A crash (or a -fork worker,
/// which ends with _Exit) leaves it behind, so those of processes no longer running are removed first.
private let scratch: String = {
    let temporary = NSTemporaryDirectory()
    for name in (try? FileManager.default.contentsOfDirectory(atPath: temporary)) ?? []
    where name.hasPrefix("fuzz-block-") {
        if let pid = Int32(name.dropFirst("fuzz-block-".count)), kill(pid, 0) != 0, errno == ESRCH {
            try? FileManager.default.removeItem(atPath: temporary + "/" + name)
        }
    }
    let path = temporary + "/fuzz-block-\(getpid())"
    try? FileManager.default.removeItem(atPath: path)
    try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    atexit { removeScratch() }
    return path
}()

private func removeScratch() { try? FileManager.default.removeItem(atPath: scratch) }

/// Writes (or, for nil, removes) one file of the scratch directory.
private func put(_ name: String, _ bytes: ArraySlice<UInt8>?) {
    let path = scratch + "/" + name
    guard let bytes else {
        unlink(path)
        return
    }
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    precondition(fd >= 0, "cannot write \(path)")
    bytes.withUnsafeBytes { raw in
        var done = 0
        while done < raw.count {
            let n = write(fd, raw.baseAddress! + done, raw.count - done)
            precondition(n > 0, "cannot write \(path)")
            done += n
        }
    }
    close(fd)
}

private let trailerMagic = Array("VLFZ".utf8)
private let trailerSize = 9

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: start, count: count))
    checkCodecs(bytes)
    checkDirectory(bytes)
    return 0
}

// MARK: Decoders on the raw bytes

private func checkCodecs(_ bytes: [UInt8]) {
    if let block = try? Block(decoding: bytes) {
        precondition(block.encoded == bytes, "block re-encoding differs")
        for event in block.events { checkEvent(event) }
    }
    bytes.withUnsafeBytes { raw in
        var reader = ByteReader(raw)
        if let header = try? BlockHeader(decoding: &reader) {
            precondition(reader.offset == LedgerFormat.headerSize, "header is not 112 bytes")
            precondition(header.encoded == Array(bytes.prefix(LedgerFormat.headerSize)), "header re-encoding differs")
        }
    }
    checkEvent(LedgerEvent(type: Genesis.eventType, payload: bytes))
    if let first = bytes.first {
        // 0x0100 | first byte: six of the 256 types are election events, the rest must be refused.
        checkEvent(LedgerEvent(type: 0x0100 | UInt16(first), payload: Array(bytes.dropFirst())))
    }
    if let snapshot = try? Snapshot(decoding: bytes) {
        let encoded = snapshot.encoded
        guard let again = try? Snapshot(decoding: encoded) else {
            preconditionFailure("re-encoded snapshot is refused")
        }
        precondition(again == snapshot, "snapshot changes through encode/decode")
        precondition(again.encoded == encoded, "snapshot encoding is not stable")
    }
}

/// An event decodes as genesis or election event only if it re-encodes to itself.
private func checkEvent(_ event: LedgerEvent) {
    if let genesis = try? Genesis(decoding: event) {
        precondition(genesis.event == event, "genesis re-encoding differs")
    }
    if let decoded = try? ElectionEvent(event) {
        precondition(decoded.ledgerEvent == event, "election event re-encoding differs")
    }
}

// MARK: A ledger directory

private func checkDirectory(_ bytes: [UInt8]) {
    var ledger = bytes[...]
    var blockIndex: ArraySlice<UInt8>?
    var leafIndex: ArraySlice<UInt8>?
    var snapshot: ArraySlice<UInt8>?
    var fixChecksums = false
    if bytes.count >= trailerSize, Array(bytes[(bytes.count - trailerSize)...].prefix(4)) == trailerMagic {
        let t = bytes.count - trailerSize
        let blockBytes = Int(bytes[t + 4]) * 32
        let leafBytes = Int(bytes[t + 5]) * 32
        let snapshotBytes = Int(bytes[t + 6]) << 8 | Int(bytes[t + 7])
        if blockBytes + leafBytes + snapshotBytes <= t {
            let snapshotStart = t - snapshotBytes
            let leavesStart = snapshotStart - leafBytes
            let blocksStart = leavesStart - blockBytes
            ledger = bytes[..<blocksStart]
            blockIndex = bytes[blocksStart..<leavesStart]
            leafIndex = bytes[leavesStart..<snapshotStart]
            snapshot = snapshotBytes > 0 ? bytes[snapshotStart..<t] : nil
            fixChecksums = bytes[t + 8] & 1 == 1
        }
    }
    var segment: [UInt8]
    if ledger.starts(with: SegmentHeader.magic) {
        segment = Array(ledger)
        if fixChecksums { fixFrameChecksums(&segment) }
    } else {
        segment = SegmentHeader(number: 0, firstHeight: 0).encoded + Frame.encode(Array(ledger))
    }
    put(LedgerDirectory.segmentName(0), segment[...])
    put("blocks.idx", blockIndex)
    put("leaves.idx", leafIndex)
    // The same bytes read as group hashes: whatever nodes.idx holds, proofs must check out or fall back.
    put("nodes.idx", leafIndex)
    put("snapshot.bin", snapshot)

    // As FileBlockSource's users do: stream every block, find the last one, then what `vote audit` does
    // with it (AuditedLedger: every leaf hash up to the head, the block of an event).
    guard let reader = try? FileBlockSource(path: scratch) else { return }
    _ = try? reader.forEachBlock { raw, _ in
        if let block = try? Block(decoding: raw) { precondition(block.encoded == raw, "block re-encoding differs") }
    }
    if let head = try? reader.lastBlock() {
        if let leaves = try? reader.leafHashes(treeSize: head.treeSize, root: head.treeRoot) {
            _ = MerkleTree(leaves: leaves)
        }
        for event in [0, head.treeSize / 2, head.treeSize &- 1] where event < head.treeSize {
            _ = try? reader.height(ofEvent: event)
            // A receipt's proof and an auditor's prefix proof, from nodes.idx and leaves.idx.
            _ = try? reader.inclusionProof(index: event, treeSize: head.treeSize, root: head.treeRoot)
            _ = try? reader.consistencyProof(oldSize: event + 1, newSize: head.treeSize, root: head.treeRoot)
        }
    }
    _ = try? reader.forEachBlock(from: 1) { _, _ in }
    // `vote verify` (chain, signatures, then every event re-decided by the rules) and every read-only
    // command (`vote tally`, `place list`, …: the election state replayed from the snapshot and the log).
    _ = try? ElectionVerifier.verify(FileBlockSource(path: scratch))
    _ = try? ElectionView.replay(FileBlockSource(path: scratch))
}

/// Recomputes the checksum of every frame that starts with "VLBK" and whose length fits the segment.
private func fixFrameChecksums(_ segment: inout [UInt8]) {
    var at = SegmentHeader.size
    while at + Frame.headerSize <= segment.count {
        if segment[at..<at + 4].elementsEqual(Frame.magic) {
            let length =
                Int(segment[at + 4]) << 24 | Int(segment[at + 5]) << 16 | Int(segment[at + 6]) << 8
                | Int(segment[at + 7])
            if length >= Frame.minBlockSize, at + Frame.headerSize + length <= segment.count {
                let start = at + Frame.headerSize
                let crc = CRC32C.checksum(Array(segment[start..<start + length]))
                segment[at + 8] = UInt8(crc >> 24)
                segment[at + 9] = UInt8(crc >> 16 & 0xff)
                segment[at + 10] = UInt8(crc >> 8 & 0xff)
                segment[at + 11] = UInt8(crc & 0xff)
                at = start + length
                continue
            }
        }
        at += 1
    }
}
