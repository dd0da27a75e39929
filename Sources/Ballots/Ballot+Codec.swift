public import Ledger

// The ledger encodings of a place's ballot and of a voter's answers (FORMAT.md §11.20): big-endian, strings as a
// u32 byte length and UTF-8, as every event payload. Decoding takes exactly one encoding of each value (no
// trailing bytes, no unknown tag, no spare bit); whether the decoded ballot or answers are valid is
// `Ballot.violation` and `Ballot.violation(of:)`, which a decoder's caller applies.

extension Ballot {
    /// The encoding version this code writes and the only one it reads.
    public static let encodingVersion: UInt8 = 1

    /// Appends the ballot's encoding. The ballot must be valid (`violation == nil`): its counts fit the fields.
    public func write(to writer: inout ByteWriter) {
        writer.write(Ballot.encodingVersion)
        writer.write(UInt8(questions.count))
        for question in questions {
            writer.writeString(question.title)
            writer.writeString(question.description)
            writer.write(question.blankAllowed ? UInt8(1) : 0)
            switch question.method {
            case .choose(let min, let max, let seats):
                writer.write(MethodTag.choose.rawValue)
                for limit in [min, max, seats] { writer.write(UInt16(limit)) }
            case .yesNo(let threshold, let quorum):
                writer.write(MethodTag.yesNo.rawValue)
                switch threshold {
                case .moreYesThanNo: writer.write(ThresholdTag.moreYesThanNo.rawValue)
                case .ofYesAndNo(let fraction):
                    writer.write(ThresholdTag.ofYesAndNo.rawValue)
                    fraction.write(to: &writer)
                case .ofBallots(let fraction):
                    writer.write(ThresholdTag.ofBallots.rawValue)
                    fraction.write(to: &writer)
                case .majorityOfElectorate: writer.write(ThresholdTag.majorityOfElectorate.rawValue)
                }
                if let quorum {
                    writer.write(UInt8(1))
                    quorum.write(to: &writer)
                } else {
                    writer.write(UInt8(0))
                }
            case .rank(let seats, let rule):
                writer.write(MethodTag.rank.rawValue)
                writer.write(UInt16(seats))
                writer.write(RuleTag(rule).rawValue)
            }
            writer.write(UInt16(question.options.count))
            for option in question.options { writer.writeString(option) }
        }
    }

    /// Reads one ballot encoding from `reader`, refusing anything but this version's exact form.
    public static func read(from reader: inout ByteReader) throws(DecodeError) -> Ballot {
        let version = try reader.read(UInt8.self, "ballot version")
        guard version == encodingVersion else { throw DecodeError("ballot version: \(version) is not 1") }
        let count = try reader.read(UInt8.self, "ballot question count")
        var questions: [Question] = []
        for index in 0..<Int(count) {
            let what = "ballot question \(index)"
            let title = try reader.readString(what + " title")
            let description = try reader.readString(what + " description")
            let flags = try reader.read(UInt8.self, what + " flags")
            guard flags <= 1 else { throw DecodeError("\(what) flags: undefined bits set (\(flags))") }
            let method: Method
            switch MethodTag(rawValue: try reader.read(UInt8.self, what + " method")) {
            case .choose:
                let min = Int(try reader.read(UInt16.self, what + " min"))
                let max = Int(try reader.read(UInt16.self, what + " max"))
                method = .choose(min: min, max: max, seats: Int(try reader.read(UInt16.self, what + " seats")))
            case .yesNo:
                let threshold: Threshold
                switch ThresholdTag(rawValue: try reader.read(UInt8.self, what + " threshold")) {
                case .moreYesThanNo: threshold = .moreYesThanNo
                case .ofYesAndNo: threshold = .ofYesAndNo(try Fraction.read(from: &reader, what + " threshold"))
                case .ofBallots: threshold = .ofBallots(try Fraction.read(from: &reader, what + " threshold"))
                case .majorityOfElectorate: threshold = .majorityOfElectorate
                case nil: throw DecodeError("\(what) threshold: unknown kind")
                }
                let quorum: Fraction?
                switch try reader.read(UInt8.self, what + " quorum") {
                case 0: quorum = nil
                case 1: quorum = try Fraction.read(from: &reader, what + " quorum")
                default: throw DecodeError("\(what) quorum: neither 0 nor 1")
                }
                method = .yesNo(threshold: threshold, quorum: quorum)
            case .rank:
                let seats = Int(try reader.read(UInt16.self, what + " seats"))
                guard let rule = RuleTag(rawValue: try reader.read(UInt8.self, what + " rule")) else {
                    throw DecodeError("\(what) rule: unknown")
                }
                method = .rank(seats: seats, rule: rule.rule)
            case nil: throw DecodeError("\(what) method: unknown")
            }
            let optionCount = try reader.read(UInt16.self, what + " option count")
            var options: [String] = []
            for option in 0..<Int(optionCount) { options.append(try reader.readString("\(what) option \(option)")) }
            questions.append(
                Question(
                    title: title, description: description, options: options, method: method,
                    blankAllowed: flags == 1))
        }
        return Ballot(questions: questions)
    }

    /// Appends the encoding of `answers`, one per question of a ballot.
    public static func write(answers: [Answer], to writer: inout ByteWriter) {
        writer.write(UInt8(answers.count))
        for answer in answers {
            switch answer {
            case .blank: writer.write(UInt16.max)
            case .options(let picked):
                writer.write(UInt16(picked.count))
                for option in picked { writer.write(UInt16(option)) }
            }
        }
    }

    /// Reads one encoding of a ballot's answers from `reader`.
    public static func readAnswers(from reader: inout ByteReader) throws(DecodeError) -> [Answer] {
        let count = try reader.read(UInt8.self, "answer count")
        var answers: [Answer] = []
        for index in 0..<Int(count) {
            let picked = try reader.read(UInt16.self, "answer \(index)")
            if picked == UInt16.max {
                answers.append(.blank)
                continue
            }
            var options: [Int] = []
            for _ in 0..<Int(picked) { options.append(Int(try reader.read(UInt16.self, "answer \(index) option"))) }
            answers.append(.options(options))
        }
        return answers
    }
}

extension Fraction {
    fileprivate func write(to writer: inout ByteWriter) {
        writer.write(numerator)
        writer.write(denominator)
    }

    fileprivate static func read(from reader: inout ByteReader, _ what: String) throws(DecodeError) -> Fraction {
        Fraction(try reader.read(UInt64.self, what), try reader.read(UInt64.self, what))
    }
}

private enum MethodTag: UInt8 {
    case choose = 1
    case yesNo = 2
    case rank = 3
}

private enum ThresholdTag: UInt8 {
    case moreYesThanNo = 1
    case ofYesAndNo = 2
    case ofBallots = 3
    case majorityOfElectorate = 4
}

private enum RuleTag: UInt8 {
    case scottishSTV = 1
    case schulze = 2

    init(_ rule: RankRule) {
        switch rule {
        case .scottishSTV: self = .scottishSTV
        case .schulze: self = .schulze
        }
    }

    var rule: RankRule {
        switch self {
        case .scottishSTV: .scottishSTV
        case .schulze: .schulze
        }
    }
}
