public import Ledger
import LedgerCrypto

/// The PostgreSQL store as the command line's edge hands it to the service (`StoreOpener`): the database at a
/// URL, where `vote init` creates a ledger, `vote serve` and every writing command open a writer beside any
/// other server's, and readers read (also from a streaming replica).
public struct PostgresOpener: StoreOpener {
    public let location: PostgresLocation
    /// The connections as a service of the program's lifecycle, if it runs one (`vote serve`).
    public let database: PostgresDatabase?

    /// The database at `url` (`postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`, or `…@/DATABASE?host=SOCKETDIR`),
    /// its connections on `database`'s loop if given.
    public init(url: String, database: PostgresDatabase? = nil) throws(LedgerError) {
        location = try PostgresLocation(url: url)
        self.database = database
    }

    /// The URL without its password.
    public var description: String { location.description }

    public func create(
        name: String, authority: any AuthoritySigner, ledgerID: LedgerID, firstEvents: [LedgerEvent], timestamp: Int64
    ) throws(LedgerError) -> any BlockAppender {
        try PostgresBlockStore.create(
            location, name: name, authority: authority, ledgerID: ledgerID, firstEvents: firstEvents,
            timestamp: timestamp, on: database)
    }

    public func openWriter(signer: any AuthoritySigner) throws(LedgerError) -> any BlockAppender {
        try PostgresBlockStore.open(location, signer: signer, on: database)
    }

    public func source() throws(LedgerError) -> any BlockSource { try PostgresBlockSource(location, on: database) }
}
