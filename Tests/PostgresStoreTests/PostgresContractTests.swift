import LedgerTestSupport
import Testing

/// The store contract (`StoreContract`, which `LedgerTests` runs on the file and memory stores) on PostgreSQL.
@Suite struct PostgresContractTests {
    @Test func appendAndReadBack() throws { try StoreContract.appendAndReadBack(.postgres()) }
    @Test func blocksByHeightAndEvent() throws { try StoreContract.blocksByHeightAndEvent(.postgres()) }
    @Test func readerKeptOpenSeesLaterBlocks() throws { try StoreContract.readerKeptOpenSeesLaterBlocks(.postgres()) }
    @Test func refusedAppendWritesNothing() throws { try StoreContract.refusedAppendWritesNothing(.postgres()) }
    @Test func proofsMatchTheReferenceTree() throws { try StoreContract.proofsMatchTheReferenceTree(.postgres()) }
    @Test func ledgerIDAndSignatures() throws { try StoreContract.ledgerIDAndSignatures(.postgres()) }
    @Test func verifierChecksTheChain() throws { try StoreContract.verifierChecksTheChain(.postgres()) }
    @Test func readersSeeOnlyWholeBlocks() async throws {
        try await StoreContract.readersSeeOnlyWholeBlocks(.postgres())
    }
}
