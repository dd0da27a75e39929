/// An amount of votes in fixed point: a whole number of hundred-thousandths of a vote. Scottish STV computes
/// every transfer value to five decimal places, remainder ignored (SSI 2007/42, Schedule 1 rule 48(3)), so
/// counting in 1/100000 units is exact: no floating point, and every total can be recomputed to the unit.
public struct Votes: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Units in one vote: five decimal places.
    public static let unitsPerVote: UInt64 = 100_000

    /// No votes.
    public static let zero = Votes(units: 0)

    /// The amount in hundred-thousandths of a vote.
    public var units: UInt64

    /// `units` hundred-thousandths of a vote.
    public init(units: UInt64) {
        self.units = units
    }

    /// `whole` votes exactly; `nil` if that many units do not fit in 64 bits.
    public init?(whole: UInt64) {
        let (units, overflow) = whole.multipliedReportingOverflow(by: Votes.unitsPerVote)
        guard !overflow else { return nil }
        self.units = units
    }

    /// Compares the amounts.
    public static func < (lhs: Votes, rhs: Votes) -> Bool {
        lhs.units < rhs.units
    }

    /// Whole votes, a point and five decimals: "7.18178", "11.00000".
    public var description: String {
        let fraction = String(units % Votes.unitsPerVote)
        return "\(units / Votes.unitsPerVote)." + String(repeating: "0", count: 5 - fraction.count) + fraction
    }

    /// The sum (traps on overflow, which no count of valid weights reaches).
    public static func + (lhs: Votes, rhs: Votes) -> Votes {
        Votes(units: lhs.units + rhs.units)
    }

    /// The difference; `lhs` must be at least `rhs`.
    public static func - (lhs: Votes, rhs: Votes) -> Votes {
        Votes(units: lhs.units - rhs.units)
    }

    /// Adds `rhs` to `lhs`.
    public static func += (lhs: inout Votes, rhs: Votes) {
        lhs.units += rhs.units
    }
}
