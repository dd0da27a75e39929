/// Read-side views over `ElectionState`: what the CLI shows. Pure functions of the state (and a time),
/// so live use and replay give the same answers.
public enum Projections {
    /// One line of a tally.
    public struct TallyRow: Equatable, Sendable {
        public var candidate: UInt32
        public var name: String
        public var votes: UInt64
        /// Share of the votes cast in the place, 0...1 (0 when no votes).
        public var share: Double
        public var withdrawn: Bool

        public init(candidate: UInt32, name: String, votes: UInt64, share: Double, withdrawn: Bool) {
            self.candidate = candidate
            self.name = name
            self.votes = votes
            self.share = share
            self.withdrawn = withdrawn
        }
    }

    /// Authorised voters, votes cast and the percentage.
    public struct Turnout: Equatable, Sendable {
        public var authorized: UInt64
        public var voted: UInt64
        /// voted / authorized × 100 (0 when nobody is authorised).
        public var percentage: Double
        /// Ballot credentials issued, in an anonymous place; `nil` in a place whose voters vote with tokens.
        public var issued: UInt64?

        public init(authorized: UInt64, voted: UInt64, percentage: Double, issued: UInt64? = nil) {
            self.authorized = authorized
            self.voted = voted
            self.percentage = percentage
            self.issued = issued
        }
    }

    /// Votes per candidate of a place, in candidate order.
    public static func tally(_ place: PlaceState) -> [TallyRow] {
        let total = place.voted
        return place.candidates.map {
            TallyRow(
                candidate: $0.id, name: $0.name, votes: $0.votes,
                share: total == 0 ? 0 : Double($0.votes) / Double(total), withdrawn: $0.withdrawn)
        }
    }

    /// Turnout of a place.
    public static func turnout(_ place: PlaceState) -> Turnout {
        Turnout(
            authorized: place.authorized, voted: place.voted,
            percentage: place.authorized == 0 ? 0 : Double(place.voted) * 100 / Double(place.authorized),
            issued: place.place.isAnonymous ? place.issued : nil)
    }

    /// Places whose status at `time` is `status` (all places when `nil`), in id order.
    public static func places(_ state: ElectionState, status: PlaceStatus?, at time: Int64) -> [PlaceState] {
        state.places.filter { status == nil || $0.status(at: time) == status }
    }
}
