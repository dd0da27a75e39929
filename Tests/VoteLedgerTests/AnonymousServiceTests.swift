import BlindRSA
import Election
import FileDriver
import FileStore
import Foundation
import Ledger
import LedgerCrypto
import Testing

@testable import VoteLedger

/// Anonymous places through the service layer (what the HTTP routes and the CLI call): the ballot key kept in
/// the key directory, issuance answered only once recorded and answered again for a repeat, anonymous ballots
/// recorded and rechecked by the verifier, on every store.
@Suite struct AnonymousServiceTests {
    static let t0 = ServiceTests.t0
    /// Inside the voting window of `election`.
    static let votingTime = t0 + 2000

    /// A writer over a ledger with one anonymous place (candidates Alice and Bob) and `voters` issuance codes.
    static func election(
        _ configuration: StoreConfiguration, voters: Int
    ) throws -> (
        writer: LedgerWriter, codes: [VotingToken], key: BlindRSAPublicKey, read: @Sendable () throws -> any BlockSource
    ) {
        let ledger = try VoteLedgerService.create(configuration, name: "anonymous service test", now: t0)
        let (keyed, _) = try Command.createPlace(
            name: "Steward", description: "", registration: TimeWindow(start: t0, end: t0 + 1000),
            voting: TimeWindow(start: t0 + 1000, end: t0 + 100_000), maxCandidates: nil
        ).withNewBallotKey(ledger.ballotKeys)
        let created = try ledger.submit(keyed, now: t0)
        guard case .placeCreated(let place) = created.event, let der = place.ballotKey else {
            throw VoteError(.refused, "the place has no ballot key")
        }
        _ = try ledger.submit(
            [
                .registerCandidate(place: 1, name: "Alice", pledge: ""),
                .registerCandidate(place: 1, name: "Bob", pledge: ""),
            ], now: t0 + 1)
        let codes = try VotingToken.generate(count: voters)
        _ = try ledger.submit(
            codes.enumerated().map { index, code in
                .authorizeVoter(place: 1, voterTag: try ledger.voterTag("member-\(index)"), tokenHash: code.hash)
            }, now: t0 + 2)
        let read = try ledger.reader()
        return (LedgerWriter(ledger, clock: { votingTime }), codes, try BlindRSAPublicKey(derRepresentation: der), read)
    }

    /// A voter's blinded request for a fresh credential under `key`.
    static func request(_ key: BlindRSAPublicKey) throws -> BlindRSABlinding {
        try key.blind(try key.prepare(try SecureRandom.bytes(32)))
    }

    @Test(arguments: ServiceStore.allCases)
    func issuesOnceAnswersRepeatsAndCasts(store: ServiceStore) async throws {
        let configuration = store.configuration()
        defer { configuration.removeLedger() }
        let (writer, codes, key, read) = try Self.election(configuration, voters: 2)
        let blinding = try Self.request(key)
        let issued = try await writer.issueCredential(place: 1, code: codes[0], blindedMessage: blinding.blindedMessage)
        #expect(!issued.repeated)
        guard
            case .credentialIssued(1, codes[0].hash, SHA256.hash(blinding.blindedMessage))? = issued.recorded?.event
                .event
        else {
            Issue.record(
                "expected the credential-issued event, got \(String(describing: issued.recorded?.event.event))")
            return
        }
        #expect(issued.recorded?.receipt != nil, "an issuance answers with the receipt of its event")
        let height = try read().lastBlock().height

        // The same code and blinded message: the same blind signature again, nothing written.
        let again = try await writer.issueCredential(place: 1, code: codes[0], blindedMessage: blinding.blindedMessage)
        #expect(again.repeated && again.blindSignature == issued.blindSignature)
        #expect(try read().lastBlock().height == height)

        // The same code with another blinded message: refused, nothing written.
        await #expect {
            _ = try await writer.issueCredential(
                place: 1, code: codes[0], blindedMessage: try Self.request(key).blindedMessage)
        } throws: { ($0 as? VoteError)?.reason == .violation(.credentialAlreadyIssued) }
        // A blinded message of the wrong length: a usage error, nothing written.
        await #expect {
            _ = try await writer.issueCredential(place: 1, code: codes[1], blindedMessage: [1, 2, 3])
        } throws: { ($0 as? VoteError)?.reason == .usage }
        #expect(try read().lastBlock().height == height)

        let signature = try key.finalize(issued.blindSignature, blinding: blinding)
        let cast = try await writer.castAnonymousBallot(
            place: 1, choice: .candidate(2), credential: blinding.preparedMessage, signature: signature)
        #expect(cast.receipt != nil)
        await #expect {
            _ = try await writer.castAnonymousBallot(
                place: 1, choice: .candidate(1), credential: blinding.preparedMessage, signature: signature)
        } throws: { ($0 as? VoteError)?.reason == .violation(.credentialAlreadyVoted) }
        await writer.close()

        let report = try ElectionVerifier.verify(try read())
        let place = try #require(report.state.place(1))
        #expect(place.issued == 1 && place.voted == 1 && place.candidates.map(\.votes) == [0, 1])
    }

    /// Repeats of a recorded issuance (the same code and blinded message, as a client that lost its answer
    /// sends) cost one RSA signature per code, not one each: the first repeat is signed again, the rest are
    /// answered from memory with the same bytes; each voter's repeats are remembered apart.
    @Test func repeatedIssuancesAreNotSignedAgainWithoutBound() async throws {
        let configuration = ServiceStore.file.configuration()
        defer { configuration.removeLedger() }
        let (writer, codes, key, _) = try Self.election(configuration, voters: 2)
        let first = try Self.request(key)
        let second = try Self.request(key)
        let issued = try await writer.issueCredential(place: 1, code: codes[0], blindedMessage: first.blindedMessage)
        let other = try await writer.issueCredential(place: 1, code: codes[1], blindedMessage: second.blindedMessage)
        #expect(writer.ballotKeys.signatureCount == 2)
        for _ in 0..<20 {
            let again = try await writer.issueCredential(place: 1, code: codes[0], blindedMessage: first.blindedMessage)
            #expect(again.repeated && again.blindSignature == issued.blindSignature)
        }
        #expect(writer.ballotKeys.signatureCount == 3, "20 repeats of one issuance cost one signature")
        for _ in 0..<5 {
            let again = try await writer.issueCredential(
                place: 1, code: codes[1], blindedMessage: second.blindedMessage)
            #expect(again.repeated && again.blindSignature == other.blindSignature)
        }
        #expect(writer.ballotKeys.signatureCount == 4)
        // The remembered answer still finalizes into a credential the place's key accepts.
        let signature = try key.finalize(issued.blindSignature, blinding: first)
        let cast = try await writer.castAnonymousBallot(
            place: 1, choice: .candidate(1), credential: first.preparedMessage, signature: signature)
        #expect(cast.receipt != nil)
        await writer.close()
    }

    /// The place's private key is in the key directory, never in the ledger directory; a refused place leaves
    /// no key behind.
    @Test func ballotKeyLivesInTheKeyDirectory() async throws {
        let configuration = ServiceStore.file.configuration()
        defer { configuration.removeLedger() }
        let (writer, _, key, _) = try Self.election(configuration, voters: 1)
        guard let path = (configuration.store as? FileDriver)?.path else { return }
        let keys = KeyDirectory(defaultFor: path).path
        let name = BallotKey.fileName(der: key.derRepresentation)
        #expect(FileManager.default.fileExists(atPath: keys + "/" + name))
        #expect(!(try FileManager.default.contentsOfDirectory(atPath: path)).contains { $0.hasPrefix("ballot-") })
        let before = try FileManager.default.contentsOfDirectory(atPath: keys).sorted()
        await #expect {
            _ = try await writer.createPlace(
                .createPlace(
                    name: "Too late", description: "", registration: TimeWindow(start: 1, end: 2),
                    voting: TimeWindow(start: 3, end: 4), maxCandidates: nil),
                anonymous: true)
        } throws: { ($0 as? VoteError)?.reason == .violation(.votingMustStartInFuture) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: keys).sorted() == before)
        await writer.close()
    }
}
