import BlindRSA
import FileDriver
import Foundation
import Testing
import VoteLedger

extension IndependentVerifierTests {
    /// An anonymous election written by the service, as the HTTP routes drive it (voters blind their credentials,
    /// the writer blind-signs and records each issuance, voters finalize and cast): `vote verify --json` and
    /// the Python verifier report the same summary, and Python's tally and turnout, credentials issued included,
    /// equal `vote tally --json`. Both recheck every ballot's signature.
    @Test func generatedAnonymousElection() async throws {
        let configuration = ServiceStore.file.configuration()
        defer { configuration.removeLedger() }
        guard let ledger = (configuration.store as? FileDriver)?.path else { return }
        let (writer, codes, key, _) = try AnonymousServiceTests.election(configuration, voters: 40)
        var ballots: [(credential: [UInt8], signature: [UInt8])] = []
        for code in codes.prefix(30) {
            let blinding = try AnonymousServiceTests.request(key)
            let issued = try await writer.issueCredential(place: 1, code: code, blindedMessage: blinding.blindedMessage)
            ballots.append((blinding.preparedMessage, try key.finalize(issued.blindSignature, blinding: blinding)))
        }
        for (index, ballot) in ballots.prefix(25).enumerated() {
            _ = try await writer.castAnonymousBallot(
                place: 1, choice: .candidate(UInt32(index % 3 == 0 ? 1 : 2)), credential: ballot.credential,
                signature: ballot.signature)
        }
        await writer.close()

        let summary = try Self.voteJSON(["verify", "--ledger", ledger])
        let python = try Self.python([ledger])
        #expect(python.status == 0, "\(python.text)")
        for key in Self.summaryKeys + ["places"] {
            Self.expectSame(summary[key], python.json[key], key)
        }
        let place = try #require((python.json["tallies"] as? [[String: Any]])?.first)
        let tally = try Self.voteJSON(["tally", "--place", "1", "--ledger", ledger])
        let swiftRows = try #require(tally["tally"] as? [[String: Any]])
        let pythonRows = try #require(place["tally"] as? [[String: Any]])
        #expect(swiftRows.map { "\($0["candidate"] ?? ""):\($0["votes"] ?? "")" } == ["1:9", "2:16"])
        #expect(pythonRows.map { "\($0["candidate"] ?? ""):\($0["votes"] ?? "")" } == ["1:9", "2:16"])
        let swiftTurnout = try #require(tally["turnout"] as? [String: Any])
        let pythonTurnout = try #require(place["turnout"] as? [String: Any])
        for key in ["authorized", "issued", "voted"] {
            Self.expectSame(swiftTurnout[key], pythonTurnout[key], "turnout \(key)")
        }
        #expect("\(pythonTurnout["authorized"] ?? "") \(pythonTurnout["issued"] ?? "")" == "40 30")
    }
}
