import Election
import Ledger
import LedgerCrypto
import Testing

/// Snapshots of the election state: they round-trip exactly (including what the contract checks against),
/// continue replay as if nothing was cut, and refuse malformed bytes.
@Suite struct SnapshotTests {
    /// A state with everything in it: three places (one limited), unicode names, a withdrawal, voters and votes,
    /// and place 1 certified.
    static func richState() throws -> ElectionState {
        var scenario = try RecheckTests.fullElection()
        try scenario.run(.registerCandidate(place: 3, name: "Jose\u{301} 🗳️", pledge: "멀티\n라인"), at: Fixture.now + 5_001)
        try scenario.certify(1, at: Fixture.now + 5_002)
        return scenario.state
    }

    /// The typed decode error for `bytes`, or `nil` if they decode.
    static func decodeError(_ bytes: [UInt8]) -> DecodeError? {
        do {
            _ = try Snapshot(decoding: bytes)
            return nil
        } catch {
            return error
        }
    }

    // MARK: Round trip

    /// An empty state, and heights 0 and UInt64.max, round-trip.
    @Test(arguments: [0, 1, UInt64.max])
    func emptyStateRoundTrips(height: UInt64) throws {
        let snapshot = Snapshot(height: height, headerHash: Fixture.token(Int(height % 1000)), state: ElectionState())
        #expect(try Snapshot(decoding: snapshot.encoded) == snapshot)
    }

    /// A rich state round-trips to an equal snapshot, with equal tallies and turnout.
    @Test func richStateRoundTrips() throws {
        let state = try Self.richState()
        let snapshot = Snapshot(height: 42, headerHash: Fixture.token(42), state: state)
        let decoded = try Snapshot(decoding: snapshot.encoded)
        #expect(decoded == snapshot)
        #expect(decoded.height == 42 && decoded.headerHash == Fixture.token(42))
        for (original, restored) in zip(state.places, decoded.state.places) {
            #expect(Projections.tally(restored) == Projections.tally(original))
            #expect(Projections.turnout(restored) == Projections.turnout(original))
        }
        #expect(try Snapshot(decoding: decoded.encoded) == snapshot)
    }

    /// The restored state, with the original's roll, decides every kind of command exactly as the original:
    /// duplicate names (by case and normalisation), voters, tokens and votes are still refused, and ids continue.
    @Test func restoredStateDecidesAlike() throws {
        let state = try Self.richState()
        var restored = try Snapshot(decoding: Snapshot(height: 1, headerHash: .zero, state: state).encoded).state
        #expect(restored.roll == nil)
        // The snapshot leaves the roll out: the writer attaches its own (voters.idx).
        restored.roll = state.roll
        let commands: [(Command, Int64)] = [
            (Fixture.createPlace("Next"), Fixture.now),
            (.registerCandidate(place: 3, name: "JOS\u{C9} 🗳️", pledge: ""), Fixture.now + 5_002),
            (.registerCandidate(place: 3, name: "Third", pledge: ""), Fixture.now + 5_002),
            (.registerCandidate(place: 1, name: "Dave", pledge: ""), Fixture.duringRegistration),
            (.withdrawCandidate(place: 1, candidate: 3), Fixture.registration.end),
            (.withdrawCandidate(place: 1, candidate: 2), Fixture.registration.end),
            (.authorizeVoter(place: 1, voterTag: Fixture.tag(2), tokenHash: Fixture.token(50)), Fixture.now),
            (.authorizeVoter(place: 1, voterTag: Fixture.tag(50), tokenHash: Fixture.token(2)), Fixture.now),
            (.authorizeVoter(place: 1, voterTag: Fixture.tag(50), tokenHash: Fixture.token(50)), Fixture.now),
            (.castVote(place: 1, candidate: 1, tokenHash: Fixture.token(2)), Fixture.duringVoting),
            (.castVote(place: 2, candidate: 1, tokenHash: Fixture.token(2)), Fixture.duringVoting),
            (.castVote(place: 1, candidate: 3, tokenHash: Fixture.token(4)), Fixture.duringVoting),
            (.certifyResults(place: 1, treeSize: 30), Fixture.now + 5_002),
            (.certifyResults(place: 2, treeSize: 30), Fixture.now + 5_002),
            (.certifyResults(place: 3, treeSize: 30), Fixture.now + 5_002),
            (.certifyResults(place: 3, treeSize: 30), Fixture.now + 7_000),
        ]
        for (command, t) in commands {
            let original = Result { () throws(Violation) in try Contract.decide(command, state: state, at: t) }
            let again = Result { () throws(Violation) in try Contract.decide(command, state: restored, at: t) }
            #expect(original == again, "\(command)")
        }
    }

    // MARK: Certified results

    /// A certified place keeps its certification through a round trip; the others stay uncertified.
    @Test func certifiedPlaceRoundTrips() throws {
        let state = try Self.richState()
        let certified = try #require(state.place(1)?.certified)
        #expect(certified.votes.map(\.votes) == [3, 0, 0] && certified.authorized == 3 && certified.voted == 3)
        let restored = try Snapshot(decoding: Snapshot(height: 9, headerHash: .zero, state: state).encoded).state
        #expect(restored.place(1)?.certified == certified)
        #expect(restored.place(2)?.certified == nil && restored.place(3)?.certified == nil)
        #expect(restored.places == state.places)
    }

    /// A place whose results are embargoed until voting ends (flag bit 0) keeps the flag through a snapshot, and a
    /// place without it stays without.
    @Test func resultsEmbargoRoundTrips() throws {
        var state = ElectionState()
        for (id, embargoed) in [(UInt32(1), true), (2, false)] {
            state.apply(
                .placeCreated(
                    Place(
                        id: id, name: "P\(id)", description: "", registration: Fixture.registration,
                        voting: Fixture.voting, maxCandidates: nil, resultsAfterClose: embargoed)))
        }
        let restored = try Snapshot(decoding: Snapshot(height: 2, headerHash: .zero, state: state).encoded).state
        #expect(restored.place(1)?.place.resultsAfterClose == true)
        #expect(restored.place(2)?.place.resultsAfterClose == false)
        #expect(restored.places == state.places)
    }

    /// Certified results with no candidates and extreme counts round-trip as well.
    @Test func emptyCertificationRoundTrips() throws {
        var scenario = Scenario()
        try scenario.run(Fixture.createPlace(), at: Fixture.now)
        try scenario.run(.certifyResults(place: 1, treeSize: .max), at: Fixture.voting.end)
        let snapshot = Snapshot(height: .max, headerHash: Fixture.token(1), state: scenario.state)
        let decoded = try Snapshot(decoding: snapshot.encoded)
        #expect(decoded == snapshot)
        #expect(decoded.state.place(1)?.certified?.treeSize == .max)
        #expect(decoded.state.place(1)?.certified?.votes.isEmpty == true)
    }

    /// States that differ only by a certification encode differently, so the certification is really carried.
    @Test func certificationChangesEncoding() throws {
        var scenario = try Fixture.scenario()
        let uncertified = Snapshot(height: 1, headerHash: .zero, state: scenario.state)
        try scenario.certify(1, at: Fixture.voting.end)
        let certified = Snapshot(height: 1, headerHash: .zero, state: scenario.state)
        #expect(uncertified.encoded != certified.encoded)
        #expect(try Snapshot(decoding: uncertified.encoded) == uncertified)
        #expect(try Snapshot(decoding: certified.encoded) == certified)
    }

    /// After a snapshot at any point of a certified election, the rest of the log still passes recheck at its
    /// leaf indices (so certified results are recomputed from restored counters) and rebuilds the state.
    @Test func verifiedTailAfterEveryCut() throws {
        let scenario = try RecheckTests.certifiedElection()
        for cut in 0...scenario.log.count {
            let atCut = cut < scenario.log.count ? scenario.log[cut].before : scenario.state
            var state = try Snapshot(decoding: Snapshot(height: 1, headerHash: .zero, state: atCut).encoded).state
            state.roll = atCut.roll
            for recorded in scenario.log[cut...] {
                let refused = violation { () throws(Violation) in
                    try Contract.recheck(recorded.event, state: state, at: recorded.time, index: recorded.index)
                }
                #expect(refused == nil, "cut \(cut): \(recorded.event)")
                state.apply(recorded.event)
            }
            #expect(state == scenario.state, "cut \(cut)")
        }
    }

    // MARK: Determinism

    /// Equal states encode to the same bytes, whatever order their voters were authorised in.
    @Test func equalStatesEncodeIdentically() throws {
        var forward = try Fixture.scenario()
        var backward = try Fixture.scenario()
        for index in 1...64 {
            try forward.run(
                .authorizeVoter(place: 1, voterTag: Fixture.tag(index), tokenHash: Fixture.token(index)),
                at: Fixture.now)
            try backward.run(
                .authorizeVoter(place: 1, voterTag: Fixture.tag(65 - index), tokenHash: Fixture.token(65 - index)),
                at: Fixture.now)
        }
        #expect(forward.state == backward.state)
        let first = Snapshot(height: 1, headerHash: .zero, state: forward.state).encoded
        let second = Snapshot(height: 1, headerHash: .zero, state: backward.state).encoded
        #expect(first.count == second.count)
        #expect(SHA256.hash(first) == SHA256.hash(second))
    }

    // MARK: Refused

    /// Bytes that do not start with the snapshot magic are refused.
    @Test func refusesWrongMagic() throws {
        var bytes = Snapshot(height: 1, headerHash: .zero, state: try Self.richState()).encoded
        bytes[0] ^= 0x01
        #expect(Self.decodeError(bytes)?.message == "not a snapshot")
        #expect(Self.decodeError([]) != nil)
    }

    /// Every proper prefix of a snapshot is refused.
    @Test func refusesEveryTruncation() throws {
        let bytes = Snapshot(height: 7, headerHash: Fixture.token(7), state: try Self.richState()).encoded
        for length in 0..<bytes.count {
            #expect(Self.decodeError(Array(bytes.prefix(length))) != nil, "\(length) of \(bytes.count) bytes decoded")
        }
    }

    /// Bytes after a complete snapshot are refused.
    @Test func refusesTrailingBytes() throws {
        let bytes = Snapshot(height: 7, headerHash: Fixture.token(7), state: try Self.richState()).encoded
        #expect(Self.decodeError(bytes + [0])?.message.contains("trailing") == true)
    }

    /// A snapshot of the previous format (VLSNAP01, without certifications) is refused, so the state is rebuilt.
    @Test func refusesPreviousFormat() throws {
        var bytes = Snapshot(height: 1, headerHash: .zero, state: try Fixture.scenario().state).encoded
        bytes.replaceSubrange(0..<8, with: Array("VLSNAP01".utf8))
        #expect(Self.decodeError(bytes)?.message == "not a snapshot")
    }

    /// A certified candidate count larger than the bytes left is refused up front, without allocating for it.
    @Test func refusesImpossibleResultsCount() {
        var writer = ByteWriter()
        writer.write(bytes: Array("VLSNAP09".utf8))
        writer.write(UInt64(1))
        writer.write(Digest.zero)
        writer.write(UInt32(1))
        let place = Place(
            id: 1, name: "P", description: "", registration: Fixture.registration, voting: Fixture.voting,
            maxCandidates: nil)
        writer.write(bytes: ElectionEvent.placeCreated(place).ledgerEvent.payload)
        writer.write(UInt32(0))  // flags
        writer.write(UInt32(0))
        writer.write(UInt64(0))
        writer.write(UInt64(0))  // authorised weight
        writer.write(UInt64(0))
        writer.write(UInt64(0))  // issued
        writer.write(UInt32(0))  // amendments
        writer.write(UInt64(0))  // withdrawn
        writer.write(UInt32(0))  // weighted voters
        writer.write(UInt8(0))  // not cancelled
        writer.write(UInt8(1))
        writer.write(UInt32(1))
        for count in [UInt64(7), 0, 0] { writer.write(count) }
        writer.write(UInt32.max)
        writer.write(UInt64(0))
        #expect(Self.decodeError(writer.bytes)?.message.contains("bad results") == true)
    }

    /// A snapshot whose places are not numbered 1, 2, 3… in order is refused (ids index the state).
    @Test func refusesPlacesOutOfOrder() {
        var writer = ByteWriter()
        writer.write(bytes: Array("VLSNAP09".utf8))
        writer.write(UInt64(1))
        writer.write(Digest.zero)
        writer.write(UInt32(1))
        let place = Place(
            id: 2, name: "P", description: "", registration: Fixture.registration, voting: Fixture.voting,
            maxCandidates: nil)
        writer.write(bytes: ElectionEvent.placeCreated(place).ledgerEvent.payload)
        writer.write(UInt32(0))
        writer.write(UInt64(0))
        writer.write(UInt64(0))
        writer.write(UInt64(0))
        writer.write(UInt64(0))
        writer.write(UInt32(0))  // amendments
        writer.write(UInt64(0))  // withdrawn
        writer.write(UInt32(0))  // weighted voters
        writer.write(UInt8(0))  // not cancelled
        writer.write(UInt8(0))
        #expect(Self.decodeError(writer.bytes)?.message.contains("place 2 out of order") == true)
    }
}
