import Ballots
import Election
import Ledger

/// The vectors of anonymous places that ask questions (FORMAT.md §11.27): an election a verifier must accept and
/// count, and one case per rule such a place adds.
extension ElectionVectors {
    /// The anonymous base (no vote cast), then place 3 "Secret AGM": anonymous under the same test key, asking
    /// `agenda` (created at 2 s, voting 30-40 s); voters 11 and 12 authorised there at 16 s and issued credentials
    /// at 26 s.
    static func secretAgenda() throws -> Script {
        var script = try anonymousBase(voted: false)
        try script.decide(
            2_000,
            [
                .createPlace(
                    name: "Secret AGM", description: "", registration: window(10_000, 20_000),
                    voting: window(30_000, 40_000), maxCandidates: nil, ballotKey: ballotKeyDER, ballot: agenda)
            ])
        try script.decide(16_000, [11, 12].map { .authorizeVoter(place: 3, voterTag: tag($0), tokenHash: token($0)) })
        try script.decide(
            26_000,
            [11, 12].map {
                .issueCredential(place: 3, tokenHash: token($0), blindedMessageHash: blindedMessageHash($0))
            })
        return script
    }

    /// Credential `voter`'s anonymous ballot of `answers` in `place`, as recorded.
    static func anonymousAnswers(_ voter: Int, _ answers: [Answer], place: UInt32 = 3) -> LedgerEvent {
        ElectionEvent.anonymousBallotCast(
            place: place, credential: credential(voter), signature: signature(credential(voter)), answers: answers
        ).ledgerEvent
    }

    static func secret(
        _ name: String, group: String = "anonymous", _ breaks: String, at time: Int64 = 31_000,
        _ events: @escaping () -> [LedgerEvent]
    ) -> Case {
        Case(name: name, group: group, breaks: breaks) { path in
            var script = try secretAgenda()
            script.raw(time, events())
            try write(script, to: path)
            return UInt64(script.blocks.count)
        }
    }

    static var anonymousQuestionCases: [Case] {
        let yes = Answer.options([YesNo.yes.rawValue])
        return [
            secret(
                "anonymous-questions-election", group: "valid",
                "nothing: two anonymous ballots on place 3's agenda, which a verifier counts"
            ) {
                [
                    anonymousAnswers(11, [.options([0, 1, 2]), yes, .options([0, 1]), .options([0, 1, 2, 3])]),
                    anonymousAnswers(12, [.blank, .options([YesNo.no.rawValue]), .options([2, 1]), .options([2])]),
                ]
            },
            secret("anonymous-ballot-invalid-answer", "credential 11 ticks four board candidates (at most three)") {
                [anonymousAnswers(11, [.options([0, 1, 2, 3]), yes, .blank, .options([0])])]
            },
            secret(
                "anonymous-ballot-in-candidates-place",
                "an anonymous ballot of answers in place 1, which has candidates"
            ) { [anonymousAnswers(1, [.options([0])], place: 1)] },
            secret("anonymous-vote-in-questions-place", "credential 11 voting for candidate 1 in place 3") {
                [anonymousVote(11, for: 1, place: 3)]
            },
            secret("token-ballot-in-anonymous-place", "voter 11's issuance code casting answers as a token") {
                [answers(11, [.blank, yes, .blank, .options([0])], place: 3)]
            },
            secret("weight-in-anonymous-place", "voter 13 authorised in place 3 with a weight of 2", at: 17_000) {
                [weighted(13, weight: 2, place: 3)]
            },
            secret("anonymous-place-revoting", "a place with anonymous ballots, questions and re-voting", at: 3_000) {
                [
                    ElectionEvent.placeCreated(
                        Place(
                            id: 4, name: "Secret strike", description: "", registration: window(10_000, 20_000),
                            voting: window(30_000, 40_000), maxCandidates: nil, ballotKey: ballotKeyDER,
                            ballot: agenda, revoting: true)
                    ).ledgerEvent
                ]
            },
        ]
    }
}
