import Election
import Ledger

/// The vectors of corrections to a place (FORMAT.md §11.28): an amended election a verifier must accept, where a
/// vote counts only because the window was extended, and one case per rule an amendment can break.
extension ElectionVectors {
    /// Place 1 of the base election amended as recorded: name "Board", its description, and voting `voting`.
    static func amended(
        name: String = "Board", description: String = "Annual board election", voting: TimeWindow
    ) -> LedgerEvent {
        ElectionEvent.placeAmended(place: 1, name: name, description: description, voting: voting).ledgerEvent
    }

    static var amendmentCases: [Case] {
        [
            rule(
                "place-amended", "valid",
                "nothing: place 1's voting extended from 40 s to 45 s at 25 s and its name corrected, then a vote at 42 s",
                from: .authorized,
                setup: {
                    try $0.decide(
                        25_000,
                        [
                            .amendPlace(
                                place: 1, name: "Board of directors", description: nil, voting: window(30_000, 45_000))
                        ])
                }, at: 42_000
            ) { _ in [vote(1, for: 1)] },
            rule(
                "amend-after-voting-ended", "amendment", "place 1 amended at 40 s, when its voting has ended",
                from: .authorized, at: 40_000
            ) { _ in [amended(voting: window(30_000, 50_000))] },
            rule(
                "amend-shortens-open-voting", "amendment", "place 1's open voting shortened from 40 s to 38 s at 35 s",
                from: .authorized, at: 35_000
            ) { _ in [amended(voting: window(30_000, 38_000))] },
            rule(
                "amend-moves-open-start", "amendment", "place 1's voting start moved to 31 s at 35 s, voting open",
                from: .authorized, at: 35_000
            ) { _ in [amended(voting: window(31_000, 40_000))] },
            rule(
                "amend-start-in-past", "amendment", "place 1's voting moved at 25 s to start at 24 s",
                from: .authorized, at: 25_000
            ) { _ in [amended(voting: window(24_000, 40_000))] },
            rule(
                "amend-before-registration-end", "amendment",
                "place 1's voting moved at 15 s to start at 19 s, before registration ends at 20 s", from: .authorized,
                at: 15_000
            ) { _ in [amended(voting: window(19_000, 40_000))] },
            rule(
                "amend-changes-nothing", "amendment", "place 1 amended to the name, description and window it has",
                from: .authorized, at: 25_000
            ) { _ in [amended(voting: window(30_000, 40_000))] },
            rule(
                "amend-name-untrimmed", "amendment", "place 1 renamed \" Board 2 \" (names are stored trimmed)",
                from: .authorized, at: 25_000
            ) { _ in [amended(name: " Board 2 ", voting: window(30_000, 40_000))] },
            rule(
                "amend-unknown-place", "amendment", "place 2, which does not exist, amended", from: .authorized,
                at: 25_000
            ) { _ in
                [
                    ElectionEvent.placeAmended(place: 2, name: "X", description: "", voting: window(30_000, 40_000))
                        .ledgerEvent
                ]
            },
        ]
    }
}
