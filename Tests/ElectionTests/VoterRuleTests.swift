import Election
import LedgerCrypto
import Testing

/// The rules for authorising voters, and the identity format and keyed tag behind a voter tag.
@Suite struct VoterRuleTests {
    // MARK: Authorisation window

    /// Voters may be authorised any time before voting closes: before registration, during it, while waiting,
    /// and from the first to the last millisecond of voting.
    @Test(arguments: [
        Fixture.now, Fixture.duringRegistration, Fixture.registration.end, Fixture.voting.start, Fixture.duringVoting,
        Fixture.voting.end - 1,
    ])
    func authorisesBeforeVotingCloses(t: Int64) throws {
        var scenario = try Fixture.scenario()
        let event = try scenario.run(
            .authorizeVoter(place: 1, voterTag: Fixture.tag(1), tokenHash: Fixture.token(1)), at: t)
        #expect(event == .voterAuthorized(place: 1, voterTag: Fixture.tag(1), tokenHash: Fixture.token(1)))
        #expect(scenario.state.roll?.hasVoted(tokenHash: Fixture.token(1), place: 1) == false)
        #expect(scenario.place(1).authorized == 1)
    }

    /// Authorisation is refused from the moment voting closes.
    @Test(arguments: [Fixture.voting.end, Fixture.voting.end + 1, Int64.max])
    func refusesAuthorisationAfterVotingCloses(t: Int64) throws {
        expectRejected(
            .authorizeVoter(place: 1, voterTag: Fixture.tag(1), tokenHash: Fixture.token(1)),
            in: try Fixture.scenario(), at: t, as: .authorizationClosed(place: 1),
            mentioning: ["place 1", "closed", "authorised"])
    }

    /// Authorising in a place that does not exist is refused.
    @Test func refusesUnknownPlace() throws {
        expectRejected(
            .authorizeVoter(place: 3, voterTag: Fixture.tag(1), tokenHash: Fixture.token(1)),
            in: try Fixture.scenario(places: 2), at: Fixture.now, as: .placeNotFound(3), mentioning: ["place 3"])
    }

    // MARK: One authorisation per voter, one voter per token

    /// A voter tag is authorised once per place (even with a fresh token) but may be authorised in another place.
    @Test func oneAuthorisationPerVoterPerPlace() throws {
        var scenario = try Fixture.scenario(places: 2)
        try scenario.run(
            .authorizeVoter(place: 1, voterTag: Fixture.tag(1), tokenHash: Fixture.token(1)), at: Fixture.now)
        expectRejected(
            .authorizeVoter(place: 1, voterTag: Fixture.tag(1), tokenHash: Fixture.token(2)), in: scenario,
            at: Fixture.now, as: .voterAlreadyAuthorized, mentioning: ["already authorised"])
        try scenario.run(
            .authorizeVoter(place: 2, voterTag: Fixture.tag(1), tokenHash: Fixture.token(2)), at: Fixture.now)
        #expect(scenario.place(1).authorized == 1)
        #expect(scenario.place(2).authorized == 1)
    }

    /// A token hash already issued in the place is refused for a different voter.
    @Test func refusesReissuedToken() throws {
        var scenario = try Fixture.scenario()
        try scenario.run(
            .authorizeVoter(place: 1, voterTag: Fixture.tag(1), tokenHash: Fixture.token(1)), at: Fixture.now)
        expectRejected(
            .authorizeVoter(place: 1, voterTag: Fixture.tag(2), tokenHash: Fixture.token(1)), in: scenario,
            at: Fixture.duringVoting, as: .tokenAlreadyIssued, mentioning: ["token", "already issued"])
    }

    // MARK: Identity format

    /// Phone numbers in E.164 form (with spaces, dashes, dots or parentheses) and member ids are accepted and
    /// normalised: separators dropped, member ids lowercased.
    @Test(arguments: [
        ("+821012345678", "+821012345678"),
        ("+82 10-1234-5678", "+821012345678"),
        ("+82 (10) 1234.5678", "+821012345678"),
        ("  +821012345678\n", "+821012345678"),
        ("+12345678", "+12345678"),  // 8 digits, the shortest
        ("+123456789012345", "+123456789012345"),  // 15 digits, the longest
        ("Member_01", "member_01"),
        ("member_01", "member_01"),
        ("MEMBER-01", "member-01"),
        ("12345678", "12345678"),
        ("x", "x"),
        (String(repeating: "Ab", count: 32), String(repeating: "ab", count: 32)),
        // E-mail addresses, lowercased.
        ("Anna.Kim@Example.ORG", "anna.kim@example.org"), (" tenant+2g@mail.example ", "tenant+2g@mail.example"),
        // Member ids in any script: lowercased, in NFC, inner white space one space.
        ("José Álvarez", "josé álvarez"), ("Jose\u{301}  \t\u{C1}lvarez", "jos\u{E9} \u{E1}lvarez"),
        ("김민지", "김민지"), ("\u{1100}\u{1175}\u{11B7}", "\u{AE40}"), ("member.01", "member.01"),
        ("2G-001", "2g-001"), (String(repeating: "é", count: 64), String(repeating: "é", count: 64)),
    ])
    func normalisesValidIdentities(identity: String, normalised: String) throws {
        #expect(try VoterIdentity.normalize(identity) == normalised)
    }

    /// Malformed identities are refused: empty, a bare "+", a leading zero, too few or too many digits, letters
    /// in a number, over-long member ids, control and bidirectional formatting characters, and e-mail addresses
    /// without two sides, with two "@" or with white space.
    @Test(arguments: [
        "", "   ", "+", "+0123456789", "+12", "+1234567", "+1234567890123456", "+12345678901234567890",
        "+82 10 1234 567a", "++821012345678", "+82\u{0661}\u{0662}\u{0663}\u{0664}\u{0665}\u{0666}\u{0667}\u{0668}",
        String(repeating: "m", count: 65), String(repeating: "é", count: 65), "tab\u{7}bell", "abc\u{202E}def",
        "@example.org", "anna@", "anna@@example.org", "an na@example.org", "a@b@c",
        String(repeating: "a", count: 250) + "@b.cd",
    ])
    func refusesInvalidIdentities(identity: String) {
        let refused = violation { () throws(Violation) in _ = try VoterIdentity.normalize(identity) }
        #expect(refused == .invalidIdentity)
        if let refused { expectSensible(refused, mentioning: ["E.164", "member id"]) }
        let untagged = violation { () throws(Violation) in _ = try VoterIdentity.tag(identity, secret: Fixture.secret) }
        #expect(untagged == .invalidIdentity)
    }

    // MARK: Voter tag

    /// The tag is HMAC-SHA256 under the secret of the normalised identity's UTF-8.
    @Test(arguments: [
        ("+82 10-1234-5678", "+821012345678"), ("Member_01", "member_01"), ("12345678", "12345678"),
    ])
    func tagIsHMACOfNormalisedIdentity(identity: String, normalised: String) throws {
        let expected = HMACSHA256.authenticationCode(for: Array(normalised.utf8), key: Fixture.secret)
        #expect(try VoterIdentity.tag(identity, secret: Fixture.secret) == expected)
    }

    /// Spellings of one identity give one tag; other identities and other secrets give other tags.
    @Test func tagsIdentifyVoters() throws {
        let phone = try VoterIdentity.tag("+821012345678", secret: Fixture.secret)
        #expect(try VoterIdentity.tag("+82 10-1234-5678", secret: Fixture.secret) == phone)
        #expect(try VoterIdentity.tag("+821012345679", secret: Fixture.secret) != phone)
        #expect(try VoterIdentity.tag("+821012345678", secret: Array("another secret".utf8)) != phone)
        #expect(
            try VoterIdentity.tag("Member_01", secret: Fixture.secret)
                == VoterIdentity.tag("member_01", secret: Fixture.secret))
    }

    /// Two spellings of the same identity are the same voter to the contract.
    @Test func sameIdentityDifferentSpellingIsOneVoter() throws {
        var scenario = try Fixture.scenario()
        let first = try VoterIdentity.tag("+821012345678", secret: Fixture.secret)
        let second = try VoterIdentity.tag("+82 10-1234-5678", secret: Fixture.secret)
        try scenario.run(.authorizeVoter(place: 1, voterTag: first, tokenHash: Fixture.token(1)), at: Fixture.now)
        expectRejected(
            .authorizeVoter(place: 1, voterTag: second, tokenHash: Fixture.token(2)), in: scenario, at: Fixture.now,
            as: .voterAlreadyAuthorized)
    }
}
