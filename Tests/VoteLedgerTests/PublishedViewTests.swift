import Election
import Foundation
import Ledger
import Testing
import VoteLedger

/// What a writer publishes for readers (a server's routes): after each durable block, the election at that
/// block, the same as a replay of the store gives; nothing for a command the rules refuse or a batch that
/// is not written.
@Suite struct PublishedViewTests {
    /// The published view and a replay of the store agree: same head, same state.
    static func expectPublished(
        _ writer: LedgerWriter, _ source: any BlockSource, _ what: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let published = writer.published.view
        let replayed = try ElectionView.replay(source)
        #expect(published.head == replayed.head, "\(what): head", sourceLocation: sourceLocation)
        #expect(published.state == replayed.state, "\(what): state", sourceLocation: sourceLocation)
        #expect(
            writer.published.head == (try source.lastBlock()), "\(what): store head", sourceLocation: sourceLocation)
    }

    @Test(arguments: ServiceStore.allCases) func publishedAfterEveryDurableBlock(_ store: ServiceStore) async throws {
        let configuration = store.configuration()
        defer { configuration.removeLedger() }
        let (ledger, tokens) = try ServiceTests.election(configuration, voters: 4, votes: 1)
        let read = try ledger.reader()
        let opened = ledger.published.view
        let writer = LedgerWriter(ledger, clock: { LedgerWriterTests.votingTime })
        try Self.expectPublished(writer, try read(), "at open")
        #expect(opened.head == writer.published.head)

        _ = try await writer.submit(.castVote(place: 1, candidate: 2, tokenHash: tokens[1].hash))
        try Self.expectPublished(writer, try read(), "after a vote")
        #expect(writer.published.head.height == opened.head.height + 1)
        #expect(writer.published.view.state.place(1)?.voted == 2)

        // Refused by the rules: no block, nothing new published.
        let before = writer.published.view
        await #expect(throws: (any Error).self) {
            _ = try await writer.submit(.castVote(place: 1, candidate: 1, tokenHash: tokens[1].hash))
        }
        #expect(writer.published.view.head == before.head && writer.published.view.state == before.state)

        // A batch whose block is not written: nothing published.
        struct Refused: Error {}
        await #expect(throws: Refused.self) {
            _ = try await writer.submit(batch: [.castVote(place: 1, candidate: 1, tokenHash: tokens[2].hash)]) { _ in
                throw Refused()
            }
        }
        #expect(writer.published.view.head == before.head && writer.published.view.state == before.state)

        let outcome = try await writer.submit(
            batch: [
                .castVote(place: 1, candidate: 1, tokenHash: tokens[2].hash),
                .castVote(place: 1, candidate: 1, tokenHash: tokens[3].hash),
            ])
        #expect(writer.published.head == outcome.header)
        try Self.expectPublished(writer, try read(), "after a batch")
        #expect(writer.published.view.state.place(1)?.voted == 4)
        await writer.close()
    }
}
