public import LedgerCrypto

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

    /// Reads the ledger at `path` and its authority key file (decrypted with `passphrase` if it is encrypted).
    public init(path: String, passphrase: [UInt8]?) throws {
        let reader = try LedgerReader(path: path)
        try self.init(reader, key: try FileLedger.loadAuthorityKey(at: path, passphrase: passphrase, genesis: reader.genesis))
    }

    /// Reads the ledger at `path`, signing with `signer` (which must hold the genesis authority key).
    public init(path: String, signer: any AuthoritySigner) throws {
        let reader = try LedgerReader(path: path)
        guard signer.publicKey.rawRepresentation == reader.genesis.authorityKey else {
            throw LedgerError.key("the authority key is not the key this ledger was created with")
        }
        try self.init(reader, key: signer)
    }

    private init(_ reader: LedgerReader, key: any AuthoritySigner) throws {
        let path = reader.directory.path
        self.key = key
        genesis = reader.genesis
        var last: (block: EncodedBlock, location: BlockLocation)?
        try reader.forEachBlock(from: try reader.lastBlock().height) { raw, location in
            last = (try EncodedBlock(decoding: raw), location)
        }
        guard let (block, location) = last else {
            throw LedgerError.notALedger(path: path, reason: "the log holds no blocks")
        }
        guard key.publicKey.isValidSignature(block.signature, for: block.header.hash.bytes) else {
            throw LedgerError.damaged(
                height: block.header.height, file: LedgerDirectory.segmentName(location.segment),
                offset: location.offset, reason: "signature invalid")
        }
        head = block.header
    }

    /// Signs a C2SP note (a signed head) with the authority key under `name`.
    public func signNote(_ text: String, name: String) throws(LedgerError) -> SignedNote {
        do { return try SignedNote.sign(text, name: name, key: key) } catch {
            throw LedgerError.key("signing the head failed: \(error)")
        }
    }
}
