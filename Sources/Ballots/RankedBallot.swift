/// One voter's answer to a ranked question, as the counts take it: the options (their indexes on the question)
/// in order of preference, the most preferred first, with the weight the voter's authorisation carries.
/// A ranking may be partial (options left out are ranked below every ranked one) and may be empty (a blank
/// ballot, which no ranked count transfers to anyone). The question's rules have already refused a repeated or
/// unknown option before a count sees the ballot.
public struct RankedBallot: Sendable, Hashable {
    /// Option indexes, most preferred first, each at most once.
    public var ranking: [Int]
    /// The voter's weight: a positive integer, 1 unless the authorisation says otherwise.
    public var weight: UInt64

    /// A ballot ranking `ranking` with `weight`.
    public init(ranking: [Int], weight: UInt64 = 1) {
        self.ranking = ranking
        self.weight = weight
    }
}
