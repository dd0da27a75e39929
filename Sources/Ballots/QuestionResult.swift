public import Ledger

/// What a certificate records of one question's count (FORMAT.md §11.26): its totals, members and weight, and
/// what it decided. Everything else a count shows (the stages of an STV count, a Schulze order) follows from the
/// ballots, which anyone recounts.
public struct QuestionResult: Sendable, Equatable {
    /// Every ballot of the place, blank answers to this question included.
    public var ballots: Weighed
    /// The ballots that left this question blank.
    public var blank: Weighed
    /// Per option (yes, no and abstain for a yes/no question): the ballots that picked it or ranked it first.
    public var options: [Weighed]
    /// For a yes/no question, whether the motion passed; nil for the other methods.
    public var passed: Bool?
    /// The options elected, in order (empty for yes/no).
    public var elected: [Int]

    public init(ballots: Weighed, blank: Weighed, options: [Weighed], passed: Bool?, elected: [Int]) {
        self.ballots = ballots
        self.blank = blank
        self.options = options
        self.passed = passed
        self.elected = elected
    }

    /// What a certificate records of `count`.
    public init(_ count: QuestionCount) {
        self.init(
            ballots: count.ballots, blank: count.blank, options: count.options, passed: count.passed,
            elected: count.elected)
    }

    /// Appends the result's encoding: ballots, blank, the options (a u16 count, then members and weight each), the
    /// outcome (0 not passed, 1 passed, 2 no motion) and the elected (a u16 count of u16 option indexes).
    public func write(to writer: inout ByteWriter) {
        for total in [ballots, blank] {
            writer.write(total.members)
            writer.write(total.weight)
        }
        writer.write(UInt16(options.count))
        for total in options {
            writer.write(total.members)
            writer.write(total.weight)
        }
        writer.write(passed.map { $0 ? UInt8(1) : 0 } ?? 2)
        writer.write(UInt16(elected.count))
        for option in elected { writer.write(UInt16(option)) }
    }

    /// Reads one result as `write(to:)` encodes it; an outcome other than 0, 1 or 2 is refused (rule 11.2.14).
    public static func read(from reader: inout ByteReader, _ what: String) throws(DecodeError) -> QuestionResult {
        func total() throws(DecodeError) -> Weighed {
            Weighed(members: try reader.read(UInt64.self, what), weight: try reader.read(UInt64.self, what))
        }
        let (ballots, blank) = (try total(), try total())
        let optionCount = try reader.read(UInt16.self, what)
        var options: [Weighed] = []
        for _ in 0..<optionCount { options.append(try total()) }
        let outcome = try reader.read(UInt8.self, what)
        guard outcome <= 2 else { throw DecodeError("\(what): unknown outcome \(outcome)") }
        let electedCount = try reader.read(UInt16.self, what)
        var elected: [Int] = []
        for _ in 0..<electedCount { elected.append(Int(try reader.read(UInt16.self, what))) }
        return QuestionResult(
            ballots: ballots, blank: blank, options: options, passed: outcome == 2 ? nil : outcome == 1,
            elected: elected)
    }
}
