import Ballots
import Ledger
import Testing

/// The ballot's and the answers' ledger encodings: one encoding per value, and nothing else read.
@Suite struct BallotCodecTests {
    static let agenda = Ballot(questions: [
        Question(
            title: "Board", description: "Three seats", options: ["Ana", "Ben", "Chloé"],
            method: .choose(min: 1, max: 2, seats: 2), blankAllowed: true),
        Question(
            title: "Bylaws", options: [],
            method: .yesNo(threshold: .ofYesAndNo(Fraction(2, 3)), quorum: Fraction(1, 4)),
            blankAllowed: false),
        Question(
            title: "Chair", options: ["Ana", "Ben"], method: .rank(seats: 1, rule: .scottishSTV), blankAllowed: false),
    ])

    /// The agenda's encoding, written out field by field as FORMAT.md §11.20 lays it out.
    static let agendaHex =
        "01" + "03"
        + "00000005" + "426f617264" + "0000000b" + "5468726565207365617473" + "01" + "01"
        + "0001" + "0002" + "0002" + "0003" + "00000003" + "416e61" + "00000003" + "42656e" + "00000006"
        + "43686c6fc3a9"
        + "00000006" + "42796c617773" + "00000000" + "00" + "02" + "02" + "0000000000000002" + "0000000000000003"
        + "01" + "0000000000000001" + "0000000000000004" + "0000"
        + "00000005" + "4368616972" + "00000000" + "00" + "03" + "0001" + "01" + "0002" + "00000003" + "416e61"
        + "00000003" + "42656e"

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String($0 >> 4, radix: 16) + String($0 & 0xf, radix: 16) }.joined()
    }

    static func bytes(_ hex: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }

    static func decode(_ bytes: [UInt8]) throws(DecodeError) -> Ballot {
        try ByteReader.reading(bytes) { (reader: inout ByteReader) throws(DecodeError) -> Ballot in
            let ballot = try Ballot.read(from: &reader, "place created")
            guard reader.remaining == 0 else { throw DecodeError("ballot: trailing bytes") }
            return ballot
        }
    }

    @Test func theAgendaEncodesAsFormatSays() throws {
        var writer = ByteWriter()
        Self.agenda.write(to: &writer)
        #expect(Self.hex(writer.bytes) == Self.agendaHex)
        #expect(try Self.decode(writer.bytes) == Self.agenda)
        #expect(Self.agenda.violation == nil)
    }

    @Test func anythingButTheExactFormIsRefused() {
        let good = Self.bytes(Self.agendaHex)
        func refused(_ bytes: [UInt8], _ fragment: String) {
            do {
                _ = try Self.decode(bytes)
                Issue.record("decoded though \(fragment)")
            } catch {
                #expect(error.message.contains(fragment), "\(error.message)")
            }
        }
        var version = good
        version[0] = 2
        refused(version, "place created: ballot version 2 is not 1")
        refused(Array(good.dropLast()), "place created: truncated (needs 3 bytes, has 2)")
        refused(good + [0], "trailing")
        var flags = good
        flags[26] = 3  // question 0's flags, after version, count, title (4 + 5) and description (4 + 11)
        refused(flags, "place created: question 1 has unknown flags 3")
        var method = good
        method[27] = 9
        refused(method, "place created: question 1 has unknown method 9")
        var utf8 = good
        utf8[utf8.count - 1] = 0xff
        refused(utf8, "place created: invalid UTF-8")
    }

    @Test func answersRoundTripAndBlankIsItsOwnValue() throws {
        let answers: [Answer] = [.options([0, 2]), .blank, .options([1, 0])]
        var writer = ByteWriter()
        Ballot.write(answers: answers, to: &writer)
        #expect(Self.hex(writer.bytes) == "03" + "0002" + "0000" + "0002" + "ffff" + "0002" + "0001" + "0000")
        let decoded = try ByteReader.reading(writer.bytes) { (reader: inout ByteReader) throws(DecodeError) in
            try Ballot.readAnswers(from: &reader, "ballot cast")
        }
        #expect(decoded == answers)
        #expect(Self.agenda.violation(of: decoded)! == (1, .blankNotAllowed))
    }
}
