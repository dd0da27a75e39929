import BlindRSA
import Election
import Ledger
import LedgerCrypto
import Testing

/// Keys and voters' devices for the anonymous-place tests: one ballot key per role, generated once per run
/// (3072-bit keys take a while to generate), and the voter's side of RFC 9474 (prepare, blind, finalize).
enum Ballots {
    /// The ballot key of the place under test.
    static let key = try! BlindRSAPrivateKey()
    /// The ballot key of another place.
    static let otherKey = try! BlindRSAPrivateKey()

    /// The DER SubjectPublicKeyInfo of `key`'s public half, as a place-created event records it.
    static func der(_ key: BlindRSAPrivateKey = key) -> [UInt8] { key.publicKey.derRepresentation }

    /// A voter's device between issuance and casting: the credential (prepared message), and what it sends
    /// to have it signed.
    struct Request {
        let blinding: BlindRSABlinding
        var credential: [UInt8] { blinding.preparedMessage }
        var blindedMessage: [UInt8] { blinding.blindedMessage }
        var blindedMessageHash: Digest { SHA256.hash(blinding.blindedMessage) }

        /// A fresh random credential, blinded for `key`.
        init(for key: BlindRSAPrivateKey = Ballots.key) throws {
            let publicKey = key.publicKey
            blinding = try publicKey.blind(try publicKey.prepare(try SecureRandom.bytes(32)))
        }

        /// The signature of the credential, from the signer's blind signature.
        func finalize(_ blindSignature: [UInt8], key: BlindRSAPrivateKey = Ballots.key) throws -> [UInt8] {
            try key.publicKey.finalize(blindSignature, blinding: blinding)
        }

        /// The signature of the credential under `key`, as an honest issuance would give it.
        func signed(by key: BlindRSAPrivateKey = Ballots.key) throws -> [UInt8] {
            try finalize(try key.blindSign(blindedMessage), key: key)
        }
    }

    /// A scenario with place 1 anonymous (under `key`) and `voters` issuance codes authorised there
    /// (`Fixture.token(1...voters)`), its candidates Alice, Bob and Carol registered.
    static func scenario(voters: Int = 3) throws -> Scenario {
        var scenario = Scenario()
        try scenario.run(
            .createPlace(
                name: "Union steward", description: "", registration: Fixture.registration, voting: Fixture.voting,
                maxCandidates: nil, ballotKey: der()),
            at: Fixture.now)
        for name in ["Alice", "Bob", "Carol"] {
            try scenario.run(.registerCandidate(place: 1, name: name, pledge: ""), at: Fixture.duringRegistration)
        }
        for voter in 0..<voters {
            try scenario.run(
                .authorizeVoter(place: 1, voterTag: Fixture.tag(voter + 1), tokenHash: Fixture.token(voter + 1)),
                at: Fixture.duringRegistration)
        }
        return scenario
    }

    /// Issues a credential to the voter with issuance code `Fixture.token(code)` and casts it for `candidate`.
    static func issueAndCast(_ scenario: inout Scenario, code: Int, candidate: UInt32) throws {
        let request = try Request()
        try scenario.run(
            .issueCredential(place: 1, tokenHash: Fixture.token(code), blindedMessageHash: request.blindedMessageHash),
            at: Fixture.duringVoting)
        try scenario.run(
            .castAnonymousVote(
                place: 1, candidate: candidate, credential: request.credential, signature: try request.signed()),
            at: Fixture.duringVoting)
    }
}

@Suite struct AnonymousBallotTests {
    @Test func issuedCredentialsVoteAndAreCounted() throws {
        var scenario = try Ballots.scenario()
        try Ballots.issueAndCast(&scenario, code: 1, candidate: 2)
        try Ballots.issueAndCast(&scenario, code: 2, candidate: 2)
        try Ballots.issueAndCast(&scenario, code: 3, candidate: 1)
        let place = scenario.place(1)
        #expect(place.place.isAnonymous)
        #expect(place.issued == 3 && place.voted == 3 && place.authorized == 3)
        #expect(scenario.votes(1) == [1, 2, 0])
        #expect(Projections.turnout(place).issued == 3)
        // Every recorded event is accepted again by the rules at its time (what verify does).
        for recorded in scenario.log {
            try Contract.recheck(recorded.event, state: recorded.before, at: recorded.time, index: recorded.index)
        }
    }
}
