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

    /// Reads one ballot encoding from `reader`, refusing anything but this version's exact form. Every failure
    /// starts with `what`, the event being read (FORMAT.md §11.2): "place created: truncated (needs 4 bytes, has 1)".
    public static func read(from reader: inout ByteReader, _ what: String) throws(DecodeError) -> Ballot {
        let version = try reader.read(UInt8.self, what)
        guard version == encodingVersion else { throw DecodeError("\(what): ballot version \(version) is not 1") }
        let count = try reader.read(UInt8.self, what)
        var questions: [Question] = []
        for index in 0..<Int(count) {
            let title = try reader.readString(what)
            let description = try reader.readString(what)
            let flags = try reader.read(UInt8.self, what)
            guard flags <= 1 else { throw DecodeError("\(what): question \(index + 1) has unknown flags \(flags)") }
            let method: Method
            let methodTag = try reader.read(UInt8.self, what)
            switch MethodTag(rawValue: methodTag) {
            case .choose:
                let min = Int(try reader.read(UInt16.self, what))
                let max = Int(try reader.read(UInt16.self, what))
                method = .choose(min: min, max: max, seats: Int(try reader.read(UInt16.self, what)))
            case .yesNo:
                let threshold: Threshold
                let thresholdTag = try reader.read(UInt8.self, what)
                switch ThresholdTag(rawValue: thresholdTag) {
                case .moreYesThanNo: threshold = .moreYesThanNo
                case .ofYesAndNo: threshold = .ofYesAndNo(try Fraction.read(from: &reader, what))
                case .ofBallots: threshold = .ofBallots(try Fraction.read(from: &reader, what))
                case .majorityOfElectorate: threshold = .majorityOfElectorate
                case nil:
                    throw DecodeError("\(what): question \(index + 1) has unknown threshold \(thresholdTag)")
                }
                let quorum: Fraction?
                switch try reader.read(UInt8.self, what) {
                case 0: quorum = nil
                case 1: quorum = try Fraction.read(from: &reader, what)
                case let other: throw DecodeError("\(what): question \(index + 1) has unknown quorum flag \(other)")
                }
                method = .yesNo(threshold: threshold, quorum: quorum)
            case .rank:
                let seats = Int(try reader.read(UInt16.self, what))
                let ruleTag = try reader.read(UInt8.self, what)
                guard let rule = RuleTag(rawValue: ruleTag) else {
                    throw DecodeError("\(what): question \(index + 1) has unknown rule \(ruleTag)")
                }
                method = .rank(seats: seats, rule: rule.rule)
            case nil: throw DecodeError("\(what): question \(index + 1) has unknown method \(methodTag)")
            }
            let optionCount = try reader.read(UInt16.self, what)
            var options: [String] = []
            for _ in 0..<Int(optionCount) { options.append(try reader.readString(what)) }
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

    /// Reads one encoding of a ballot's answers from `reader`; failures start with `what`, as `read(from:_:)`'s.
    public static func readAnswers(from reader: inout ByteReader, _ what: String) throws(DecodeError) -> [Answer] {
        let count = try reader.read(UInt8.self, what)
        var answers: [Answer] = []
        for _ in 0..<Int(count) {
            let picked = try reader.read(UInt16.self, what)
            if picked == UInt16.max {
                answers.append(.blank)
                continue
            }
            var options: [Int] = []
            for _ in 0..<Int(picked) { options.append(Int(try reader.read(UInt16.self, what))) }
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
