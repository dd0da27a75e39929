public import Ledger
import LedgerCrypto

/// The PostgreSQL store as the command line's edge hands it to the service (`StoreOpener`): the database at a
/// URL, where `vote init` creates a ledger, `vote serve` and every writing command open a writer beside any
/// other server's, and readers read (also from a streaming replica).
public struct PostgresOpener: StoreOpener {
    public let location: PostgresLocation

    /// The database at `url` (`postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`, or `…@/DATABASE?host=SOCKETDIR`).
    public init(url: String) throws(LedgerError) { location = try PostgresLocation(url: url) }

    /// The URL without its password.
    public var description: String { location.description }

    public func create(
        name: String, authority: any AuthoritySigner, ledgerID: LedgerID, firstEvents: [LedgerEvent], timestamp: Int64
    ) throws(LedgerError) -> any BlockAppender {
        try PostgresBlockStore.create(
            location, name: name, authority: authority, ledgerID: ledgerID, firstEvents: firstEvents,
            timestamp: timestamp)
    }

    public func openWriter(signer: any AuthoritySigner) throws(LedgerError) -> any BlockAppender {
        try PostgresBlockStore.open(location, signer: signer)
    }

    public func source() throws(LedgerError) -> any BlockSource { try PostgresBlockSource(location) }
}
