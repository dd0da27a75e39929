import Election
import Foundation
import Ledger
import LedgerCrypto
import Testing
import VoteLedger

/// The one public way to change a ledger is its writer (`LedgerWriter`): creating it, its commands, what a
/// command line reads beside them, and bulk authorisation (`VoterList.authorize`), which the CLI and the
/// voters route both run. This file imports the service without `@testable`, as the CLI and the server do.
@Suite struct WriteAPITests {
    /// A writer over a new ledger in memory with place 1, open for authorising voters for the hour.
    static func writer() async throws -> LedgerWriter {
        let now = Clock.now()
        let writer = try VoteLedgerService.createWriter(StoreConfiguration(.memory), name: "write API", now: now)
        _ = try await writer.submit(
            .createPlace(
                name: "Board", description: "", registration: TimeWindow(start: now, end: now + 3_600_000),
                voting: TimeWindow(start: now + 3_600_000, end: now + 7_200_000), maxCandidates: nil))
        return writer
    }

    /// A ledger is created as a writer, changed only through it, and read beside it: its state after the
    /// last durable block and a reader of its blocks.
    @Test func aLedgerIsCreatedAndChangedThroughItsWriter() async throws {
        let writer = try await Self.writer()
        let candidate = try await writer.submit(.registerCandidate(place: 1, name: "Alice", pledge: ""))
        #expect(try await writer.state().place(1)?.candidates.map(\.name) == ["Alice"])
        let source = try await writer.source()
        #expect(try source.lastBlock().height == candidate.height)
        #expect(source.genesis.name == "write API")
        await writer.close()
        #expect(try source.lastBlock().height == candidate.height)
    }

    /// A list of voters is authorised in batches, one block each, in the list's order: the header and blank
    /// lines skipped, a line that is no identity and a voter listed twice refused with their rules.
    @Test func aVoterListIsAuthorisedInBatchesInItsOrder() async throws {
        let writer = try await Self.writer()
        let members = (1...250).map { "m-\($0)" }
        let text =
            "Member ID\n" + members[..<100].joined(separator: "\n") + "\n\n not@an@id \nm-5\n"
            + members[100...].joined(separator: "\n")
        var lines = LineReader(bytes: Array(text.utf8))
        var header: Int?
        var rejected: [BulkRejection] = []
        var issued: [IssuedToken] = []
        let totals = try await VoterList.authorize(
            &lines, place: 1, writer: writer, batchSize: 100, skippedHeader: { header = $0 },
            rejected: { rejected.append($0) }, afterWriting: { issued += $0 })
        let source = try await writer.source()
        await writer.close()

        #expect(header == 1)
        #expect(totals.accepted == 250 && totals.rejected == 2)
        #expect(rejected.map(\.line) == [103, 104])
        #expect(rejected.map(\.violation) == [.invalidIdentity, .voterAlreadyAuthorized])
        #expect(issued.map(\.identity) == members)
        // One block per batch (251 commands in batches of 100), the events in the list's order.
        var blocks = 0
        var recorded: [Digest] = []
        try source.forEachBlock(from: 0) { block in
            let authorised = block.events.compactMap { event -> Digest? in
                guard
                    case .voterAuthorized(_, _, let tokenHash, _)? = try? ElectionEvent(
                        type: event.type, payload: event.payload)
                else { return nil }
                return tokenHash
            }
            if !authorised.isEmpty { blocks += 1 }
            recorded += authorised
        }
        #expect(blocks == 3)
        #expect(recorded == issued.map(\.token.hash))
    }
}
