public import Ballots
public import Election
public import Ledger

extension ElectionView {
    /// The counts of `place`'s questions by this view's head, recounted from the log; `nil` for a place with
    /// candidates, not questions.
    public func ballotCount(_ source: any BlockSource, place: UInt32) throws -> [QuestionCount]? {
        guard let state = state.place(place) else { return nil }
        return try Self.ballotCount(of: state, in: source, upTo: head)
    }

    /// The counts of the questions of `state` (a place's state at `head`), recounted from `source`: every ballot
    /// cast in it up to `head`, in ledger order, each member of weight 1. `nil` for a place with candidates. The
    /// log is read from its start: a place's answers are kept nowhere else, so nothing derived enters the count.
    public static func ballotCount(
        of state: PlaceState, in source: any BlockSource, upTo head: BlockHeader
    ) throws -> [QuestionCount]? {
        guard let ballot = state.place.ballot else { return nil }
        let place = state.place.id
        let cast = ElectionEvent.Tag.ballotCast.rawValue
        var answers: [(answers: [Answer], weight: UInt64)] = []
        var height: UInt64 = 1
        while height <= head.height, let block = try source.block(at: height) {
            for event in block.events where event.type == cast {
                guard case .ballotCast(place, _, let given) = try ElectionEvent(event.ledgerEvent) else { continue }
                answers.append((given, 1))
            }
            height += 1
        }
        return ballot.count(answers, electorate: Weighed(members: state.authorized, weight: state.authorized))
    }
}
