public import LedgerCrypto

/// What a successful verification covered.
public struct VerificationReport: Sendable, Equatable {
    /// Blocks verified, genesis included.
    public var blocks: UInt64 = 0
    /// Events verified (the tree size).
    public var events: UInt64 = 0
    /// Bytes of segment files read and checked: every segment header plus every complete frame (the torn
    /// tail excluded).
    public var bytes: UInt64 = 0
    /// Header hash of the last block.
    public var headHash: Digest = .zero
    /// Height of the last block.
    public var height: UInt64 = 0
    /// Tree head after the last block.
    public var treeRoot: Digest = .zero
    /// Time of the last block, ms since the Unix epoch.
    public var timestamp: Int64 = 0
    /// Wall time the verification took, in seconds.
    public var seconds: Double = 0
    /// Incomplete bytes after the last block (a writer is appending, or crashed and has not reopened).
    public var tornTail: TornTail?
}

/// Verifies a whole ledger directory, streaming block by block with memory that does not grow with the
/// ledger: frames, encoding, heights, hash links, timestamps, tree sizes and roots, and every signature
/// under the genesis authority key. The first failure throws `LedgerError.damaged` naming the block.
public enum ChainVerifier {
    /// Verifies the ledger at `path`. `onBlock` sees each verified block in order (for replaying the
    /// application's rules on top); an error it throws stops the verification and is rethrown.
    public static func verify(path: String, onBlock: ((Block) throws -> Void)? = nil) throws -> VerificationReport {
        let started = ContinuousClock.now
        let reader = try LedgerReader(path: path)
        let genesis = reader.genesis
        let authority: Ed25519PublicKey
        do { authority = try Ed25519PublicKey(rawRepresentation: genesis.authorityKey) } catch {
            throw LedgerError.damaged(
                height: 0, file: LedgerDirectory.segmentName(0), offset: UInt64(SegmentHeader.size),
                reason: "genesis authority key is invalid")
        }
        var report = VerificationReport()
        var frontier = MerkleFrontier()
        report.tornTail = try reader.forEachBlock { raw, location in
            let height = report.blocks
            func fail(_ reason: String) -> LedgerError {
                .damaged(height: height, file: LedgerDirectory.segmentName(location.segment), offset: location.offset, reason: reason)
            }
            let block: Block
            do { block = try Block(decoding: raw) } catch let error as DecodeError { throw fail(error.message) }
            let header = block.header
            guard header.height == height else { throw fail("height is \(header.height), expected \(height)") }
            guard header.ledgerID == genesis.ledgerID else { throw fail("belongs to another ledger (id \(header.ledgerID))") }
            if height == 0 {
                guard block.events.count == 1, block.events[0].type == Genesis.eventType,
                    header.timestamp == genesis.createdAt, header.previousHash == .zero
                else { throw fail("malformed genesis block") }
            } else {
                guard header.previousHash == report.headHash else { throw fail("previous header hash mismatch") }
                guard header.timestamp >= report.timestamp else {
                    throw fail("timestamp \(header.timestamp) is before the previous block's \(report.timestamp)")
                }
                if let reserved = block.events.first(where: { $0.type < LedgerFormat.firstApplicationEventType }) {
                    throw fail("event type \(reserved.type) is reserved for the ledger")
                }
            }
            guard header.treeSize == frontier.size + UInt64(header.eventCount) else {
                throw fail("tree size is \(header.treeSize), expected \(frontier.size + UInt64(header.eventCount))")
            }
            for event in block.events { frontier.append(event.leafHash) }
            guard frontier.root == header.treeRoot else { throw fail("tree root mismatch") }
            let hash = header.hash
            guard authority.isValidSignature(block.signature, for: hash.bytes) else { throw fail("signature invalid") }
            try onBlock?(block)

            report.blocks += 1
            report.events = header.treeSize
            report.bytes += location.length
            report.headHash = hash
            report.height = header.height
            report.treeRoot = header.treeRoot
            report.timestamp = header.timestamp
        }
        // Every segment header read counts, also of a segment that holds no complete block yet.
        let headers: Int
        if let tail = report.tornTail {
            headers = tail.wholeSegment ? tail.segment : tail.segment + 1
        } else {
            headers = reader.segmentCount
        }
        report.bytes += UInt64(headers * SegmentHeader.size)
        let elapsed = ContinuousClock.now - started
        report.seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        return report
    }
}
