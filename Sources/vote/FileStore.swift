import FileStore
import Ledger
import LedgerCrypto
import VoteCommandLine
import VoteLedger

// The CLI's ledgers are file stores named by a directory: these open one for the commands that still name it
// by path, so the path stops here and the library below reads a `BlockSource`.

extension AuditedLedger {
    /// The file store of `ledger`, with its authority key (for re-issuing receipts) where its key directory
    /// holds it.
    init(_ ledger: LedgerOptions) throws {
        let reader = try ledger.reader()
        try self.init(reader, authorityKey: { passphrase in try ledger.authorityKey(reader, passphrase: passphrase) })
    }
}

extension ElectionView {
    /// `hasVoted` over the file store of `ledger`, with the status index in the user's state directory.
    func hasVoted(_ ledger: LedgerOptions, place: UInt32, tokenHash: Digest) throws -> Bool? {
        try hasVoted(try ledger.reader(), place: place, tokenHash: tokenHash, derived: ledger.derived)
    }
}
