import BlindRSA
import Election
import Foundation
import Ledger
import LedgerCrypto
import TestSupport
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
        scenario.expectEveryEventRechecks()
    }

    // MARK: Place created (§11.7)

    /// Rule 11.7.8: a ballot key must be the DER SubjectPublicKeyInfo of an RSA key of 3072 to 4096 bits with
    /// exponent 65537, as its canonical encoding.
    @Test func refusesBallotKeysThatAreNotOneOfThoseKeys() throws {
        let valid = Ballots.der()
        let pkcs1 = Array(valid.suffix(from: 24))  // the RSAPublicKey inside the SubjectPublicKeyInfo
        for key in [
            [], [0x30, 0x00], Array(repeating: 0x41, count: 420), Self.bytes(base64: Self.rsa2048),
            Self.bytes(base64: Self.rsa3072ExponentThree), valid + [0], pkcs1,
        ] {
            let command = Command.createPlace(
                name: "P", description: "", registration: Fixture.registration, voting: Fixture.voting,
                maxCandidates: nil, ballotKey: key)
            expectRejected(
                command, in: Scenario(), at: Fixture.now, as: .invalidBallotKey, mentioning: ["3072 to 4096 bits"])
        }
        #expect(try BallotKey(der: valid).publicKey.modulusBits == 3072)
    }

    /// Rules 11.7.14-11.7.17: a batch rule is for an anonymous place, sets an interval or a size, each in range
    /// (an interval of whole seconds); a place with a good rule is created with it, and the snapshot keeps it.
    @Test func batchRules() throws {
        func place(_ batching: BallotBatching, anonymous: Bool = true) -> Command {
            .createPlace(
                name: "P", description: "", registration: Fixture.registration, voting: Fixture.voting,
                maxCandidates: nil, ballotKey: anonymous ? Ballots.der() : nil, batching: batching)
        }
        for (batching, anonymous, reason) in [
            (BallotBatching(size: 10), false, "are for a place with anonymous ballots"),
            (BallotBatching(), true, "need an interval, a size or both"),
            (BallotBatching(interval: 999), true, "the interval must be whole seconds, 1 second to 7 days"),
            (BallotBatching(interval: 1_500), true, "the interval must be whole seconds, 1 second to 7 days"),
            (BallotBatching(interval: -1_000), true, "the interval must be whole seconds, 1 second to 7 days"),
            (BallotBatching(interval: 604_801_000), true, "the interval must be whole seconds, 1 second to 7 days"),
            (BallotBatching(size: 1), true, "the size must be 2 to 1000000 ballots"),
            (BallotBatching(interval: 1_000, size: 1_000_001), true, "the size must be 2 to 1000000 ballots"),
        ] {
            expectRejected(
                place(batching, anonymous: anonymous), in: Scenario(), at: Fixture.now,
                as: .invalidBatching(reason), mentioning: ["ballot batches: " + reason])
        }
        var scenario = Scenario()
        let rule = BallotBatching(interval: 604_800_000, size: 1_000_000)
        try scenario.run(place(rule), at: Fixture.now)
        #expect(scenario.state.place(1)?.place.batching == rule)
        let decoded = try Snapshot(decoding: Snapshot(height: 1, headerHash: .zero, state: scenario.state).encoded)
        #expect(decoded.state.place(1)?.place.batching == rule)
    }

    /// Rule 11.7.8's partial public-key validation (SP 800-56B Rev. 2 §6.4.2.2): a well-formed DER key whose
    /// modulus is even, or has a small prime factor, is not a ballot key, with e = 65537 or e = 3. BoringSSL
    /// already refuses to parse an even modulus; the small factor only the rule's own check catches.
    @Test func refusesBallotKeysThatFailPublicKeyValidation() throws {
        let valid = Ballots.der()
        // The modulus's last byte comes just before the exponent's five bytes (02 03 01 00 01).
        var even = valid
        even[even.count - 6] ^= 1
        var evenExponentThree = Self.bytes(base64: Self.rsa3072ExponentThree)
        evenExponentThree[evenExponentThree.count - 4] ^= 1  // before 02 01 03
        var multipleOfThree = valid
        // 256 ≡ 1 (mod 3): the modulus is its bytes' sum mod 3. Adding 2 or 4 keeps it odd and makes it 0 mod 3.
        let modulus = valid[(valid.count - 5 - 384)..<(valid.count - 5)]
        let remainder = modulus.reduce(0) { ($0 + Int($1)) % 3 }
        var carry = remainder == 1 ? 2 : 4
        var index = valid.count - 6
        while carry > 0 {
            let sum = Int(multipleOfThree[index]) + carry
            multipleOfThree[index] = UInt8(sum & 0xFF)
            carry = sum >> 8
            index -= 1
        }
        #expect(remainder != 0, "a real modulus has no factor 3")
        for (label, key) in [("even", even), ("even, e = 3", evenExponentThree), ("factor 3", multipleOfThree)] {
            let command = Command.createPlace(
                name: "P", description: "", registration: Fixture.registration, voting: Fixture.voting,
                maxCandidates: nil, ballotKey: key)
            #expect(throws: Violation.invalidBallotKey, "\(label)") { try BallotKey(der: key) }
            expectRejected(
                command, in: Scenario(), at: Fixture.now, as: .invalidBallotKey, mentioning: ["3072 to 4096 bits"])
        }
    }

    // MARK: Credential issued (§11.18)

    /// Rules 11.18.1-11.18.5 in order, each refusal writing nothing; the code is then used.
    @Test func issuanceRules() throws {
        var scenario = try Ballots.scenario(voters: 2)
        try scenario.run(
            .createPlace(
                name: "Tokens", description: "", registration: Fixture.registration, voting: Fixture.voting,
                maxCandidates: nil),
            at: Fixture.now)
        try scenario.run(
            .authorizeVoter(place: 2, voterTag: Fixture.tag(1), tokenHash: Fixture.token(1)),
            at: Fixture.duringRegistration)
        let blinded = SHA256.hash(Array("blinded".utf8))
        func issue(_ place: UInt32, _ code: Int, _ hash: Digest = blinded) -> Command {
            .issueCredential(place: place, tokenHash: Fixture.token(code), blindedMessageHash: hash)
        }
        expectRejected(issue(3, 1), in: scenario, at: Fixture.duringVoting, as: .placeNotFound(3))
        expectRejected(
            issue(2, 1), in: scenario, at: Fixture.duringVoting, as: .notAnonymous(place: 2),
            mentioning: ["place 2", "anonymous"])
        expectRejected(
            issue(1, 1), in: scenario, at: Fixture.voting.end, as: .issuanceClosed(place: 1),
            mentioning: ["no more credentials"])
        expectRejected(
            issue(1, 9), in: scenario, at: Fixture.duringVoting, as: .codeNotAuthorized(place: 1),
            mentioning: ["issuance code", "place 1"])
        // Issuance may start before voting does (a voter can fetch a credential early).
        try scenario.run(issue(1, 1), at: Fixture.duringRegistration)
        #expect(scenario.place(1).issued == 1)
        // A second issuance for the code: refused, with another blinded message or the same one (the service
        // answers a repeat itself, without a new event).
        for hash in [SHA256.hash(Array("other".utf8)), blinded] {
            expectRejected(
                issue(1, 1, hash), in: scenario, at: Fixture.duringVoting, as: .credentialAlreadyIssued,
                mentioning: ["already been issued"])
        }
        // The code cannot vote as a token either: the place takes only anonymous ballots.
        expectRejected(
            .castVote(place: 1, candidate: 1, tokenHash: Fixture.token(2)), in: scenario, at: Fixture.duringVoting,
            as: .onlyAnonymousBallots(place: 1), mentioning: ["only anonymous ballots"])
    }

    /// A lost issuance code is re-issued as a lost token is, until a credential was issued for it (§11.17.5).
    @Test func reissueAllowedUntilIssuance() throws {
        var scenario = try Ballots.scenario(voters: 2)
        try scenario.run(
            .reissueToken(
                place: 1, voterTag: Fixture.tag(1), oldTokenHash: Fixture.token(1), newTokenHash: Fixture.token(11)),
            at: Fixture.duringVoting)
        expectRejected(
            .issueCredential(place: 1, tokenHash: Fixture.token(1), blindedMessageHash: .zero), in: scenario,
            at: Fixture.duringVoting, as: .codeNotAuthorized(place: 1))
        try Ballots.issueAndCast(&scenario, code: 11, candidate: 1)
        try Ballots.issueAndCast(&scenario, code: 2, candidate: 1)
        expectRejected(
            .reissueToken(
                place: 1, voterTag: Fixture.tag(2), oldTokenHash: Fixture.token(2), newTokenHash: Fixture.token(12)),
            in: scenario, at: Fixture.duringVoting, as: .credentialAlreadyIssued)
    }

    // MARK: Anonymous vote cast (§11.19)

    /// Rules 11.19.1-11.19.8: an ordinary place, a closed place, a forged signature, a signature under another
    /// place's key, a credential of the wrong length, a credential used twice, votes beyond the credentials
    /// issued, an unknown or withdrawn candidate.
    @Test func anonymousVoteRules() throws {
        var scenario = try Ballots.scenario(voters: 2)
        try scenario.run(
            .createPlace(
                name: "Tokens", description: "", registration: Fixture.registration, voting: Fixture.voting,
                maxCandidates: nil),
            at: Fixture.now)
        try scenario.run(.registerCandidate(place: 2, name: "Dan", pledge: ""), at: Fixture.duringRegistration)
        try scenario.run(.registerCandidate(place: 1, name: "Erin", pledge: ""), at: Fixture.duringRegistration)
        try scenario.run(.withdrawCandidate(place: 1, candidate: 4), at: Fixture.duringRegistration)
        let request = try Ballots.Request()
        try scenario.run(
            .issueCredential(place: 1, tokenHash: Fixture.token(1), blindedMessageHash: request.blindedMessageHash),
            at: Fixture.duringVoting)
        let signature = try request.signed()
        func cast(
            _ place: UInt32 = 1, _ candidate: UInt32 = 1, _ credential: [UInt8]? = nil, _ sig: [UInt8]? = nil
        )
            -> Command
        {
            .castAnonymousVote(
                place: place, candidate: candidate, credential: credential ?? request.credential,
                signature: sig ?? signature)
        }
        func refused(
            _ command: Command, _ expected: Violation, _ words: [String] = [], at t: Int64 = Fixture.duringVoting
        ) {
            expectRejected(command, in: scenario, at: t, as: expected, mentioning: words)
        }
        refused(cast(3), .placeNotFound(3))
        refused(cast(2, 1), .notAnonymous(place: 2), ["does not use anonymous ballots"])
        refused(cast(), .votingClosed(place: 1, status: .registration), at: Fixture.duringRegistration)
        refused(cast(), .votingClosed(place: 1, status: .ended), at: Fixture.voting.end)
        var forged = signature
        forged[100] ^= 1
        refused(cast(1, 1, nil, forged), .invalidBallotSignature(place: 1), ["signature", "place 1's key"])
        let underOtherKey = try Ballots.Request(for: Ballots.otherKey)
        refused(
            cast(1, 1, underOtherKey.credential, try underOtherKey.signed(by: Ballots.otherKey)),
            .invalidBallotSignature(place: 1))
        refused(cast(1, 1, Array(request.credential.dropLast())), .invalidBallotSignature(place: 1))
        refused(cast(1, 1, nil, Array(signature.dropLast())), .invalidBallotSignature(place: 1))
        refused(cast(1, 9), .candidateNotFound(place: 1, candidate: 9))
        refused(cast(1, 4), .candidateWithdrawn(candidate: 4))
        try scenario.run(cast(1, 2), at: Fixture.duringVoting)
        refused(cast(1, 1), .credentialAlreadyVoted, ["already voted"])

        // An authority holding the key signs a credential nobody asked for: refused while it would make the
        // votes outnumber the credentials issued (1 of 1 here)...
        let unasked = try Ballots.Request()
        let unaskedVote = Command.castAnonymousVote(
            place: 1, candidate: 1, credential: unasked.credential, signature: try unasked.signed())
        refused(unaskedVote, .noCredentialLeft(place: 1), ["no more credentials issued than votes cast"])
        // ...and counted once a credential was issued that has not voted (what SECURITY.md states as the limit).
        try scenario.run(
            .issueCredential(place: 1, tokenHash: Fixture.token(2), blindedMessageHash: .zero), at: Fixture.duringVoting
        )
        try scenario.run(unaskedVote, at: Fixture.duringVoting)
        #expect(scenario.place(1).voted == 2 && scenario.place(1).issued == 2)
    }

    // MARK: Unlinkability

    /// After `n` voters are issued credentials and cast them in a shuffled order, nothing the authority records
    /// ties a vote to its voter: no 32-byte window of any issuance event occurs in any vote event or the other
    /// way round, the values each records are all distinct, and voter A's authorisation and issuance hold
    /// nothing computed from A's credential (the credential, its hash, its signature).
    @Test(arguments: [1, 2, 3] as [UInt64])
    func issuanceAndVotesShareNothing(seed: UInt64) throws {
        let n = 8
        var scenario = try Ballots.scenario(voters: n)
        var requests: [Ballots.Request] = []
        for voter in 1...n {
            let request = try Ballots.Request()
            try scenario.run(
                .issueCredential(
                    place: 1, tokenHash: Fixture.token(voter), blindedMessageHash: request.blindedMessageHash),
                at: Fixture.duringVoting)
            requests.append(request)
        }
        var random = SplitMix64(seed: seed)
        var order = Array(0..<n)
        order.shuffle(using: &random)
        for voter in order {
            try scenario.run(
                .castAnonymousVote(
                    place: 1, candidate: UInt32(voter % 3 + 1), credential: requests[voter].credential,
                    signature: try requests[voter].signed()),
                at: Fixture.duringVoting)
        }
        func payloads(_ select: (ElectionEvent) -> Bool) -> [[UInt8]] {
            scenario.log.map(\.event).filter(select).map(\.ledgerEvent.payload)
        }
        let issuances = payloads { if case .credentialIssued = $0 { true } else { false } }
        let votes = payloads { if case .anonymousVoteCast = $0 { true } else { false } }
        #expect(issuances.count == n && votes.count == n)
        func windows(_ bytes: [UInt8]) -> Set<[UInt8]> {
            bytes.count < 32 ? [] : Set((0...(bytes.count - 32)).map { Array(bytes[$0..<($0 + 32)]) })
        }
        let issuanceWindows = issuances.reduce(into: Set<[UInt8]>()) { $0.formUnion(windows($1)) }
        let voteWindows = votes.reduce(into: Set<[UInt8]>()) { $0.formUnion(windows($1)) }
        #expect(issuanceWindows.isDisjoint(with: voteWindows))

        // Every recorded value is distinct: codes' hashes, blinded messages' hashes, credentials, their hashes,
        // signatures.
        var values: [[UInt8]] = []
        for (voter, request) in requests.enumerated() {
            values += [
                Fixture.token(voter + 1).bytes, request.blindedMessageHash.bytes, request.credential,
                SHA256.hash(request.credential).bytes, try request.signed(),
            ]
        }
        #expect(Set(values).count == values.count)

        // What the authority records for voter A holds nothing computed from A's credential.
        for (voter, request) in requests.enumerated() {
            let records = scenario.log.map(\.event).filter { event in
                switch event {
                case .voterAuthorized(_, _, let code, _), .credentialIssued(_, let code, _):
                    code == Fixture.token(voter + 1)
                default: false
                }
            }
            #expect(records.count == 2)
            let fromCredential = windows(request.credential).union(windows(SHA256.hash(request.credential).bytes))
                .union(windows(try request.signed()))
            for record in records {
                #expect(windows(record.ledgerEvent.payload).isDisjoint(with: fromCredential))
            }
        }
    }

    // MARK: Snapshot

    /// A snapshot keeps an anonymous place's ballot key and its issued count.
    @Test func snapshotRoundTrip() throws {
        var scenario = try Ballots.scenario(voters: 3)
        try Ballots.issueAndCast(&scenario, code: 1, candidate: 3)
        try scenario.run(
            .issueCredential(place: 1, tokenHash: Fixture.token(2), blindedMessageHash: .zero), at: Fixture.duringVoting
        )
        let snapshot = Snapshot(height: 7, headerHash: .zero, state: scenario.state)
        let decoded = try Snapshot(decoding: snapshot.encoded)
        #expect(decoded == snapshot)
        let place = try #require(decoded.state.place(1))
        #expect(place.issued == 2 && place.voted == 1 && place.place.ballotKey == Ballots.der())
        #expect(place.ballotKey != nil)
    }
}

extension AnonymousBallotTests {
    /// The public key of a 2048-bit RSA key (DER SubjectPublicKeyInfo, made with openssl): too small for a ballot key.
    static let rsa2048 =
        "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAt+Haeytq5zz4ErVZ8Q7FZ9r1ngNftKB+9kSuOKdbwpOAR92dsXeG4RrQhIOE+HastJI3ORZYbKFEjwAlnrOGA3JXGNnO4tqJhiE+Ve41IVxwBC0q7UMKJfjdERp1QNX22k/k5YPLpMIVyoxFWtL6yCrPMsfzASkauFvZORA/foOd+HSz6N8DIyiz8j6sKF+pFTD6MoOIupJd3dKDzjhYwD0Xi/PY0tlr8PipaZhkcnOoEUIrmfEJ165LAO1e7F0ZFbqSbcG+YlTQzEW9JQYUPZZJMZ1U02YdL0OVaYMlLJRr1WZj8KfEjRp/A17Q862vu4N45RvHxUPvG7JZmTy70wIDAQAB"
    /// The public key of a 3072-bit RSA key with public exponent 3 (DER SubjectPublicKeyInfo, made with openssl).
    static let rsa3072ExponentThree =
        "MIIBoDANBgkqhkiG9w0BAQEFAAOCAY0AMIIBiAKCAYEAvHI2DwZifVSLMSUQFSVoa11tUSMbdKRaVCB5hQm6oYZ+PeiV8fYDkXnNQJGqcLjOSaOe+hIkPgWn7nLf5wbnZMNZg4keR3Cz832Fx7qIxZmSAPvFHLI8hOhmcZZ3ai19s88Vj+xlYsiy3+QqKtIHU/4Q8bvRt8Iz1oPhuJGFnjHQCBe26WvYGL42r9SUvmOcSIApCJG2OOeOwaxmiKUnFgDoKjzPhyzFkFl4o6h5vKRLTBYdcL82dzVMX9IlWbaFR1sYNnS58zX7i25xID9H+SI17dpVW0ciV7FtFhTKHY3bOErx6yV9Lf9BLIrJYtxzhLAHBZVknQR688XADBhaYEm5rlO8g+KZ0d3n3jUx9C+zrsPBPtVyCagIua/j4RG3fNcHBv3Q5SQMD1c646Q+SNvNVGs0BcToUK5htRKp+isHCb78ddoHwFDXggSKmJ7QZPeFsamRcDsUqkQAQY2IqPhvZe2nDKCPtHyxyzk14hFqT1ezEbASa6gueDG9Uq8TAgED"

    static func bytes(base64 text: String) -> [UInt8] { Array(Data(base64Encoded: text)!) }
}
