import Election
import Testing

/// The text rules of FORMAT.md §11.3-§11.4 on their hard cases: the candidate-name key (canonical caseless
/// match on Unicode 14.0.0), trimming of exactly the 25 White_Space code points, the listed forbidden code
/// points, lengths in code points, and no time before 1970 (rule 11.7.3).
@Suite struct NameRuleTests {
    /// Registers `first` then `second` in one place; the second's outcome.
    static func register(_ first: String, then second: String) throws -> Violation? {
        var scenario = try Fixture.scenario(candidates: [])
        try scenario.run(.registerCandidate(place: 1, name: first, pledge: ""), at: Fixture.duringRegistration)
        do {
            try scenario.run(.registerCandidate(place: 1, name: second, pledge: ""), at: Fixture.duringRegistration)
            return nil
        } catch {
            return error
        }
    }

    // MARK: §11.4 The name key

    /// Names whose keys are equal: full case folding (ß, ﬁ, final sigma, the iota subscript, İ, Cherokee,
    /// the Kelvin sign, titlecase digraphs), canonical equivalence (NFC/NFD, Hangul, the Ohm sign), and both.
    @Test(arguments: [
        ("Straße", "STRASSE"),
        ("\u{FB01}x", "fix"),  // ﬁ folds to "fi"
        ("Jos\u{E9}", "Jose\u{301}"),  // NFC, NFD
        ("ΝΙΚΟΣ", "Νικος"),  // final sigma
        ("ὈΔΥΣΣΕΎΣ", "ὀδυσσεύς"),
        ("\u{1FB3}", "ΑΙ"),  // ᾳ folds to "αι"
        ("\u{1FB4}", "\u{3B1}\u{301}\u{3B9}"),  // ᾴ = ά + ypogegrammeni: NFD first, then folding
        ("\u{130}stanbul", "i\u{307}stanbul"),  // İ folds to i + combining dot above
        ("\u{13E3}\u{13B3}\u{13A9}", "\u{ABB3}\u{AB83}\u{AB79}"),  // ᏣᎳᎩ and its lowercase: both fold to upper
        ("\u{212A}elvin", "kelvin"),  // KELVIN SIGN
        ("\u{2126}", "\u{3C9}"),  // OHM SIGN is canonically Ω
        ("\u{1C5}", "\u{1C6}"),  // ǅ and ǆ
        ("\u{D55C}\u{AE00}", "\u{1112}\u{1161}\u{11AB}\u{1100}\u{1173}\u{11AF}"),  // 한글: syllables and jamo
        ("a\u{301}\u{316}", "A\u{316}\u{301}"),  // combining marks in either order (classes 230, 220)
    ])
    func collide(first: String, second: String) throws {
        #expect(try Self.register(first, then: second) == .duplicateCandidateName(second))
        #expect(try Self.register(second, then: first) == .duplicateCandidateName(first))
    }

    /// Names whose keys differ: compatibility equivalents (fullwidth, ligature-free digraphs, circled
    /// digits), Turkish dotless and dotted i against plain i, marks in a blocked order, and a case pair
    /// that Unicode 14.0.0 does not have (Cyrillic TJE, Unicode 16), which pins the version.
    @Test(arguments: [
        ("ＢＯＢ", "Bob"),
        ("\u{1C4}", "D\u{17D}"),  // Ǆ is only compatibility-equivalent to DŽ
        ("\u{2460}", "1"),
        ("\u{131}", "i"),  // dotless ı has no folding
        ("\u{131}", "I"),
        ("\u{130}", "i"),  // İ folds to i + U+0307, not i
        ("a\u{301}\u{301}", "a\u{301}"),
        ("\u{1C89}", "\u{1C8A}"),  // unassigned in 14.0.0: no folding
        ("Alice", "Alice\u{200B}"),  // ZERO WIDTH SPACE is neither trimmed nor ignored
    ])
    func doNotCollide(first: String, second: String) throws {
        #expect(try Self.register(first, then: second) == nil)
    }

    // MARK: §11.3 Trimming, emptiness, length, forbidden code points

    /// Each of the 25 White_Space code points is trimmed from both ends, and the recorded name is the rest.
    @Test func trimsExactlyWhiteSpace() throws {
        let whiteSpace: [UInt32] =
            [0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0x85, 0xA0, 0x1680] + Array(0x2000...0x200A)
            + [0x2028, 0x2029, 0x202F, 0x205F, 0x3000]
        #expect(whiteSpace.count == 25)
        for value in whiteSpace {
            let space = String(Unicode.Scalar(value)!)
            var scenario = try Fixture.scenario(candidates: [])
            let event = try scenario.run(
                .registerCandidate(place: 1, name: space + "Alice" + space, pledge: ""), at: Fixture.duringRegistration)
            #expect(event == .candidateRegistered(place: 1, candidate: 1, name: "Alice", pledge: ""), "U+\(value)")
            expectRejected(
                .registerCandidate(place: 1, name: space, pledge: ""), in: scenario, at: Fixture.duringRegistration,
                as: .invalidText(field: "candidate name", reason: "must not be empty"))
        }
        // Not White_Space: kept, so the name is neither empty nor "Alice".
        for value: UInt32 in [0x200B, 0x180E, 0xFEFF] {
            let other = String(Unicode.Scalar(value)!)
            var scenario = try Fixture.scenario(candidates: [])
            let event = try scenario.run(
                .registerCandidate(place: 1, name: other + "Alice", pledge: ""), at: Fixture.duringRegistration)
            #expect(event == .candidateRegistered(place: 1, candidate: 1, name: other + "Alice", pledge: ""))
        }
    }

    /// Limits count code points: 200 (names) and 2000 (texts) of them pass, whatever their grapheme
    /// clusters, and one more fails; 200 "é" in NFD are 400 code points.
    @Test func countsCodePoints() throws {
        let scenario = try Fixture.scenario(candidates: [])
        let t = Fixture.duringRegistration
        var accepted = scenario
        try accepted.run(
            .registerCandidate(
                place: 1, name: String(repeating: "\u{1F469}\u{200D}\u{1F52C}", count: 66) + "ab",
                pledge: String(repeating: "e\u{301}", count: 1000)), at: t)
        expectRejected(
            .registerCandidate(place: 1, name: String(repeating: "e\u{301}", count: 101), pledge: ""), in: scenario,
            at: t, as: .invalidText(field: "candidate name", reason: "must be at most 200 code points"))
        expectRejected(
            .registerCandidate(place: 1, name: "Alice", pledge: String(repeating: "e\u{301}", count: 1000) + "!"),
            in: scenario, at: t, as: .invalidText(field: "pledge", reason: "must be at most 2000 code points"))
    }

    /// Every listed code point is refused inside a name and a text, except line feed in a text; the
    /// neighbours of the lists are accepted.
    @Test func refusesExactlyTheListedCodePoints() throws {
        let forbidden: [UInt32] =
            Array(0x00...0x1F) + Array(0x7F...0x9F)
            + [0x061C, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069]
        let scenario = try Fixture.scenario(candidates: [])
        let t = Fixture.duringRegistration
        let reason = "must not contain control or text-direction characters"
        for value in forbidden {
            let inside = "A" + String(Unicode.Scalar(value)!) + "B"
            expectRejected(
                .registerCandidate(place: 1, name: inside, pledge: ""), in: scenario, at: t,
                as: .invalidText(field: "candidate name", reason: reason))
            if value != 0x0A {
                expectRejected(
                    .registerCandidate(place: 1, name: "Alice", pledge: inside), in: scenario, at: t,
                    as: .invalidText(field: "pledge", reason: reason))
            }
        }
        var accepted = scenario
        for (index, value) in [0x20, 0x7E, 0xA0 + 1, 0x061B, 0x061D, 0x200D, 0x2010, 0x2029, 0x202F, 0x2065, 0x206A]
            .enumerated()
        {
            let name = "A\(index)" + String(Unicode.Scalar(UInt32(value))!) + "B"
            try accepted.run(.registerCandidate(place: 1, name: name, pledge: "line\nfeed"), at: t)
        }
    }

    // MARK: Rule 11.7.3 Times

    /// A window time before 1970 is refused, even with the windows in order (FORMAT.md §1: times are never
    /// negative); 0 itself is allowed.
    @Test func refusesTimesBefore1970() throws {
        let voting = TimeWindow(start: Fixture.now + 10, end: Fixture.now + 20)
        expectRejected(
            Fixture.createPlace(registration: TimeWindow(start: -5, end: Fixture.now + 5), voting: voting),
            in: Scenario(), at: Fixture.now, as: .invalidWindows("times must not be before 1970"),
            mentioning: ["1970"])
        expectRejected(
            Fixture.createPlace(registration: TimeWindow(start: -10, end: -5), voting: voting),
            in: Scenario(), at: Fixture.now, as: .invalidWindows("times must not be before 1970"))
        var scenario = Scenario()
        try scenario.run(
            Fixture.createPlace(registration: TimeWindow(start: 0, end: 1), voting: voting), at: Fixture.now)
    }
}
