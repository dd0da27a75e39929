public import Ballots
public import Election
public import Ledger
import LedgerCrypto

extension ElectionView {
    /// The counts of `place`'s questions by this view's head, recounted from the log; `nil` for a place with
    /// candidates, not questions.
    public func ballotCount(_ source: any BlockSource, place: UInt32) throws -> [QuestionCount]? {
        guard let state = state.place(place) else { return nil }
        return try Self.ballotCount(of: state, in: source, upTo: head)
    }

    /// The counts of the questions of `state` (a place's state at `head`), recounted from `source`: every voter's
    /// last ballot in it up to `head` (a ballot replaced by a re-vote is not counted), in the order of their first,
    /// each of the weight its token's authorisation gave (a re-issued token keeps it). `nil` for a place with
    /// candidates. The log is read from its start: a place's answers are kept nowhere else, so nothing derived
    /// enters the count.
    public static func ballotCount(
        of state: PlaceState, in source: any BlockSource, upTo head: BlockHeader
    ) throws -> [QuestionCount]? {
        guard let ballot = state.place.ballot else { return nil }
        let place = state.place.id
        let read: Set<UInt16> = [
            ElectionEvent.Tag.ballotCast.rawValue, ElectionEvent.Tag.ballotReplaced.rawValue,
            ElectionEvent.Tag.weightedVoterAuthorized.rawValue, ElectionEvent.Tag.voterTokenReissued.rawValue,
            ElectionEvent.Tag.anonymousBallotCast.rawValue,
        ]
        var answers: [(answers: [Answer], weight: UInt64)] = []
        var position: [Digest: Int] = [:]
        // The tokens whose weight is not 1 (FORMAT.md §11.25).
        var weights: [Digest: UInt64] = [:]
        var height: UInt64 = 1
        while height <= head.height, let block = try source.block(at: height) {
            for event in block.events where read.contains(event.type) {
                switch try ElectionEvent(event.ledgerEvent) {
                case .ballotCast(place, let token, let given):
                    position[token] = answers.count
                    answers.append((given, weights[token] ?? 1))
                case .ballotReplaced(place, let token, let given):
                    // The contract records a replacement only for a token that has cast (FORMAT.md §11.24).
                    if let index = position[token] { answers[index].answers = given }
                case .anonymousBallotCast(place, _, _, let given):
                    answers.append((given, 1))  // a credential casts once, of weight 1 (FORMAT.md §11.27)
                case .voterAuthorized(place, _, let token, let weight): weights[token] = weight
                case .voterTokenReissued(place, _, let old, let new):
                    if let weight = weights.removeValue(forKey: old) { weights[new] = weight }
                default: continue
                }
            }
            height += 1
        }
        return ballot.count(
            answers, electorate: Weighed(members: state.authorized, weight: state.authorizedWeight))
    }
}
