import Election
import LedgerCrypto
import Testing

/// The voter roll and its flat hash table: what the rules ask (authorised? voted?) answered exactly,
/// through growth, with copies of a state independent until changes are committed.
@Suite struct VoterRollTests {
    typealias Key = VoterTable.Key

    /// Thousands of random keys, as voter and as token in several places, read back exactly after the
    /// table has grown from its smallest size; absent keys (same digest, other place or kind) stay absent.
    @Test func tableAnswersExactlyThroughGrowth() throws {
        let table = VoterTable(capacity: 1)
        let initialSlots = table.slotCount
        var expected: [Key: VoterTable.Entry] = [:]
        var random = SplitMix64(seed: 0x7E57)
        for index in 0..<5000 {
            let digest = Fixture.token(Int(random.next() % 1_000_000_000))
            let key = Key(digest: digest, place: UInt32(index % 3 + 1), kind: index % 2 == 0 ? .voter : .token)
            let entry: VoterTable.Entry = key.kind == .token && index % 4 == 1 ? .voted : .authorized
            try table.reserve(1)
            table.set(key, entry)
            expected[key] = entry
        }
        #expect(table.slotCount > initialSlots)
        #expect(table.count == expected.count)
        for (key, entry) in expected {
            #expect(table.entry(key) == entry)
            #expect(table.entry(Key(digest: key.digest, place: key.place + 10, kind: key.kind)) == nil)
            let otherKind: Key.Kind = key.kind == .voter ? .token : .voter
            if expected[Key(digest: key.digest, place: key.place, kind: otherKind)] == nil {
                #expect(table.entry(Key(digest: key.digest, place: key.place, kind: otherKind)) == nil)
            }
        }
        #expect(table.entries == expected)
    }

    /// Setting an existing key changes its entry in place (a vote), without counting it twice.
    @Test func updateInPlace() throws {
        let table = VoterTable()
        let key = Key(digest: Fixture.token(1), place: 1, kind: .token)
        try table.reserve(1)
        table.set(key, .authorized)
        table.set(key, .voted)
        #expect(table.count == 1)
        #expect(table.entry(key) == .voted)
    }

    /// Pending changes belong to one copy of a roll: a copy (the writer's scratch state for a batch) sees
    /// only its own until it commits; after the commit every copy sharing the table sees them.
    @Test func copiesAreIndependentUntilCommit() {
        var committed = VoterRoll()
        var scratch = committed
        scratch.apply(.voterAuthorized(place: 1, voterTag: Fixture.tag(1), tokenHash: Fixture.token(1)))
        #expect(scratch.isAuthorized(voterTag: Fixture.tag(1), place: 1))
        #expect(scratch.hasVoted(tokenHash: Fixture.token(1), place: 1) == false)
        #expect(!committed.isAuthorized(voterTag: Fixture.tag(1), place: 1))
        #expect(committed.hasVoted(tokenHash: Fixture.token(1), place: 1) == nil)
        #expect(scratch != committed)

        scratch.apply(.voteCast(place: 1, candidate: 1, tokenHash: Fixture.token(1)))
        #expect(scratch.hasVoted(tokenHash: Fixture.token(1), place: 1) == true)
        #expect(scratch.pendingCount == 2)
        scratch.commit()
        #expect(scratch.pendingCount == 0)
        #expect(committed.hasVoted(tokenHash: Fixture.token(1), place: 1) == true)
        #expect(committed.isAuthorized(voterTag: Fixture.tag(1), place: 1))
        #expect(scratch == committed)
        committed.commit()
        #expect(committed.table.count == 2)
    }

    /// Rolls over different tables are equal when they hold the same entries, committed or not.
    @Test func equalityIsByContent() {
        var left = VoterRoll()
        var right = VoterRoll()
        let event = ElectionEvent.voterAuthorized(place: 2, voterTag: Fixture.tag(3), tokenHash: Fixture.token(3))
        left.apply(event)
        #expect(left != right)
        right.apply(event)
        #expect(left == right)
        left.commit()
        #expect(left == right)
        right.apply(.voteCast(place: 2, candidate: 1, tokenHash: Fixture.token(3)))
        #expect(left != right)
    }

    /// A counts-only state (what the read side replays) folds every event into its counters and has no roll.
    @Test func countsOnlyStateKeepsCounters() throws {
        let scenario = try Fixture.scenario()
        var counts = ElectionState(roll: nil)
        for recorded in scenario.log { counts.apply(recorded.event) }
        #expect(counts.roll == nil)
        #expect(counts.places == scenario.state.places)
    }

    /// Events naming a place or candidate that does not exist cannot be applied (a replay of damaged
    /// files checks this instead of trapping); the contract's own events always can.
    @Test func canApplyRefusesDanglingReferences() throws {
        let scenario = try Fixture.scenario()
        var state = ElectionState(roll: nil)
        for recorded in scenario.log {
            #expect(state.canApply(recorded.event))
            state.apply(recorded.event)
        }
        let dangling: [ElectionEvent] = [
            .voteCast(place: 99, candidate: 1, tokenHash: Fixture.token(1)),
            .voteCast(place: 1, candidate: 99, tokenHash: Fixture.token(1)),
            .voteCast(place: 1, candidate: 0, tokenHash: Fixture.token(1)),
            .candidateWithdrawn(place: 1, candidate: 99),
            .candidateRegistered(place: 1, candidate: 99, name: "Skips ids", pledge: ""),
            .voterAuthorized(place: 0, voterTag: Fixture.tag(1), tokenHash: Fixture.token(1)),
            .placeCreated(
                Place(id: 99, name: "Skips ids", description: "", registration: Fixture.registration, voting: Fixture.voting, maxCandidates: nil)),
            .resultsCertified(CertifiedResults(place: 99, treeSize: 0, authorized: 0, voted: 0, votes: [])),
        ]
        for event in dangling { #expect(!state.canApply(event), "\(event)") }
    }
}
