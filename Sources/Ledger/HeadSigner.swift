import LedgerCrypto

/// The authority of a ledger, opened to sign its current head without writing (a read command): the key is
/// checked as a writer checks it (FORMAT.md §5.7), but no lock is taken and no file in the directory
/// changes. The head is the last complete block, taken only if its own signature verifies, so the authority
/// signs no tree head it has not already signed in a block.
public struct HeadSigner {
    /// The ledger's identity, from its genesis block.
    public let genesis: Genesis
    /// Header of the last complete block.
    public let head: BlockHeader
    private let key: any AuthoritySigner

    /// Reads the last complete block of `source`, to be signed with `key`, which must be the ledger's genesis
    /// authority key (the file store loads it with `FileBlockSource.authorityKey(passphrase:)`).
    public init(_ source: some BlockSource, key: any AuthoritySigner) throws {
        guard key.publicKey.rawRepresentation == source.genesis.authorityKey else {
            throw LedgerError.key("the authority key is not this ledger's genesis key")
        }
        self.key = key
        genesis = source.genesis
        var last: (block: EncodedBlock, place: BlockPlace)?
        let height = try source.lastBlock().height
        _ = try source.scanBlocks(from: height) { raw, place in
            do throws(DecodeError) { last = (try EncodedBlock(decoding: raw), place) } catch {
                throw place.damage(height: height, error.message)
            }
            return false
        }
        guard let (block, place) = last else { throw LedgerError.invalidRequest("the ledger holds no blocks") }
        guard key.publicKey.isValidSignature(block.signature, for: block.header.hash.bytes) else {
            throw place.damage(height: block.header.height, "signature invalid")
        }
        head = block.header
    }

    /// Signs a C2SP note (a signed head) with the authority key under `name`.
    public func signNote(_ text: String, name: String) throws(LedgerError) -> SignedNote {
        try key.signNote(text, name: name)
    }
}
