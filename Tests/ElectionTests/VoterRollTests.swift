import Election
import LedgerCrypto
import Testing

/// The voter roll (the reference dictionary): what the rules ask (authorised? voted?) answered exactly,
/// copies independent, and the contract reading the state's entries over a committed roll.
@Suite struct VoterRollTests {
    /// A roll is a value: a copy (the writer's scratch state for a batch) changes alone.
    @Test func copiesAreIndependent() {
        let committed = VoterRoll()
        var scratch = committed
        scratch.apply(.voterAuthorized(place: 1, voterTag: Fixture.tag(1), tokenHash: Fixture.token(1)))
        #expect(scratch.isAuthorized(voterTag: Fixture.tag(1), place: 1))
        #expect(scratch.hasVoted(tokenHash: Fixture.token(1), place: 1) == false)
        #expect(!scratch.isAuthorized(voterTag: Fixture.tag(1), place: 2))
        #expect(!committed.isAuthorized(voterTag: Fixture.tag(1), place: 1))
        #expect(committed.hasVoted(tokenHash: Fixture.token(1), place: 1) == nil)
        #expect(scratch != committed)

        scratch.apply(.voteCast(place: 1, candidate: 1, tokenHash: Fixture.token(1)))
        #expect(scratch.hasVoted(tokenHash: Fixture.token(1), place: 1) == true)
        #expect(scratch.count == 3)  // the tag, the token, and their binding
        scratch.removeAll()
        #expect(scratch == committed)
    }

    /// A batch's key count, which the writer reserves table room by, is the number of keys each command
    /// lists, for every kind of command.
    @Test func keyCountIsTheNumberOfKeysListed() {
        let commands: [Command] = [
            .createPlace(
                name: "P", description: "", registration: .init(start: 0, end: 1), voting: .init(start: 1, end: 2),
                maxCandidates: nil),
            .registerCandidate(place: 1, name: "C", pledge: ""),
            .withdrawCandidate(place: 1, candidate: 1),
            .authorizeVoter(place: 1, voterTag: Fixture.tag(1), tokenHash: Fixture.token(1)),
            .castVote(place: 1, candidate: 1, tokenHash: Fixture.token(1)),
            .reissueToken(
                place: 1, voterTag: Fixture.tag(1), oldTokenHash: Fixture.token(1), newTokenHash: Fixture.token(2)),
            .certifyResults(place: 1, treeSize: 3),
        ]
        for command in commands {
            var keys: [VoterRoll.Key] = []
            VoterRoll.keys(of: command, into: &keys)
            #expect(VoterRoll.keyCount(of: command) == keys.count, "\(command)")
        }
    }

    /// The writer's split: the state holds only the entries since the last commit and the rest is passed
    /// in as the committed roll. Every voter command is decided exactly as against one state holding the
    /// whole roll, wherever the cut falls.
    @Test func stateEntriesOverCommittedRollDecideAsOneRoll() throws {
        var scenario = try Fixture.scenario()
        for index in 0..<4 {
            try scenario.run(
                .authorizeVoter(place: 1, voterTag: Fixture.tag(index), tokenHash: Fixture.token(index)),
                at: Fixture.duringRegistration)
        }
        try scenario.run(
            .reissueToken(
                place: 1, voterTag: Fixture.tag(3), oldTokenHash: Fixture.token(3), newTokenHash: Fixture.token(203)),
            at: Fixture.duringRegistration)
        for index in 0..<2 {
            try scenario.run(
                .castVote(place: 1, candidate: 1, tokenHash: Fixture.token(index)), at: Fixture.duringVoting)
        }
        let t = Fixture.duringVoting
        for cut in 0...scenario.log.count {
            var committed = VoterRoll()
            var split = ElectionState()
            for (index, recorded) in scenario.log.enumerated() {
                if index < cut { committed.apply(recorded.event) }
                split.apply(recorded.event)
                if index == cut - 1 { split.roll?.removeAll() }
            }
            for index in 0..<6 {
                let commands: [Command] = [
                    .authorizeVoter(place: 1, voterTag: Fixture.tag(index), tokenHash: Fixture.token(100 + index)),
                    .authorizeVoter(place: 1, voterTag: Fixture.tag(100 + index), tokenHash: Fixture.token(index)),
                    .castVote(place: 1, candidate: 1, tokenHash: Fixture.token(index)),
                    .reissueToken(
                        place: 1, voterTag: Fixture.tag(index), oldTokenHash: Fixture.token(index),
                        newTokenHash: Fixture.token(300 + index)),
                    .reissueToken(
                        place: 1, voterTag: Fixture.tag(index), oldTokenHash: Fixture.token(200 + index),
                        newTokenHash: Fixture.token(index + 1)),
                ]
                for command in commands {
                    let whole = Result { () throws(Violation) in
                        try Contract.decide(command, state: scenario.state, at: t)
                    }
                    let layered = Result { () throws(Violation) in
                        try Contract.decide(command, state: split, committed: committed, at: t)
                    }
                    #expect(whole == layered, "cut \(cut): \(command)")
                }
            }
        }
    }

    /// A counts-only state (what the read side replays) folds every event into its counters and has no roll.
    @Test func countsOnlyStateKeepsCounters() throws {
        let scenario = try Fixture.scenario()
        var counts = ElectionState(roll: nil)
        for recorded in scenario.log { counts.apply(recorded.event) }
        #expect(counts.roll == nil)
        #expect(counts.places == scenario.state.places)
    }
}
