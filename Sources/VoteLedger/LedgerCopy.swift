public import Ledger

/// A ledger moved between stores (a directory and a database, either way): every block after the genesis
/// block built again in a new ledger of the same genesis, from its events and time, and signed again with
/// the authority's key. Ed25519 signatures are deterministic, so each block comes out byte for byte as it
/// was; the copy checks that it did, block by block, and refuses the copy otherwise.
public enum LedgerCopy {
    /// Writes every block of `source` after the genesis block into `target`, a ledger of the same genesis that
    /// holds only that block, checking each header against the source's; then reads both back and compares
    /// every block's bytes. `progress` hears the height written and the source's last height. Returns the head.
    public static func copy(
        _ source: any BlockSource, into target: any BlockAppender, progress: (UInt64, UInt64) -> Void = { _, _ in }
    ) throws -> BlockHeader {
        let last = try source.lastBlock().height
        guard target.head.height == 0, target.genesis == source.genesis else {
            throw VoteError(.refused, "the copy must start from a new ledger of the same genesis block")
        }
        try source.forEachBlock(from: 1) { block in
            guard block.header.height <= last else { return }
            let written = try target.append(
                block.events.map { HashedEvent($0.ledgerEvent) }, timestamp: block.header.timestamp)
            guard written.hash == block.header.hash else {
                throw VoteError(
                    .integrity(block: block.header.height, offset: nil),
                    "integrity failure: block \(block.header.height) did not come out as the source holds it")
            }
            progress(written.height, last)
        }
        try compare(source, try target.source(), through: last)
        return try source.header(at: last)!
    }

    /// Refuses the copy unless blocks 0 through `last` of `copy` are byte for byte those of `source`.
    static func compare(_ source: any BlockSource, _ copy: any BlockSource, through last: UInt64) throws {
        for height in 0...last {
            guard let original = try source.block(at: height), let copied = try copy.block(at: height),
                original.bytes == copied.bytes
            else {
                throw VoteError(
                    .integrity(block: height, offset: nil),
                    "integrity failure: block \(height) of the copy differs from the source")
            }
        }
    }
}
