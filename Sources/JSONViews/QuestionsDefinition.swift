public import Ballots
public import Foundation
import VoteLedger

// A place's questions as an officer writes them: `vote place create --questions FILE` reads a file
// `{"questions": [...]}` and the console sends the same list as `questions` in `POST /api/v1/places`. Each question
// is an object with
// - `title` (and an optional `description`), `options` (a list of names; none for yes/no), `blank` (may it be
//   left blank; default false), and `method`:
// - `"choose"`: `min` (default 1), `max` (default 1), `seats` (default `max`): tick min to max options, the
//   `seats` with most votes are elected;
// - `"yes-no"`: `threshold`, one of `"more-yes-than-no"` (the default), `"N/D of yes-and-no"`,
//   `"N/D of ballots"`, `"majority-of-electorate"`; and an optional `quorum` `"N/D"` of the electorate;
// - `"rank"`: `seats` (default 1) and `rule`, `"scottish-stv"` (the default; one seat is instant runoff) or
//   `"schulze"`.
// Any other key is refused, so a misspelt one is not silently ignored.

/// Why a question definition was refused, in one line naming the question ("question 2: has no title").
public struct QuestionsRefusal: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

extension QuestionJSON {
    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// Decodes one question, refusing a key its method does not have (`QuestionsRefusal`).
    public init(from decoder: any Decoder) throws {
        let number = (decoder.codingPath.last?.intValue ?? 0) + 1
        let keys = try decoder.container(keyedBy: AnyKey.self).allKeys.map(\.stringValue)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        method = try container.decodeIfPresent(String.self, forKey: .method)
        let allowed: Set<String> =
            switch method {
            case "choose": ["min", "max", "seats"]
            case "yes-no": ["threshold", "quorum"]
            case "rank": ["seats", "rule"]
            default: throw QuestionsRefusal("question \(number): method must be choose, yes-no or rank")
            }
        let unknown = Set(keys).subtracting(["title", "description", "options", "blank", "method"]).subtracting(allowed)
        if let key = unknown.sorted().first {
            throw QuestionsRefusal("question \(number): unknown key \"\(key)\" for a \(method ?? "") question")
        }
        title = try container.decodeIfPresent(String.self, forKey: .title)
        description = try container.decodeIfPresent(String.self, forKey: .description)
        options = try container.decodeIfPresent([String].self, forKey: .options)
        blank = try container.decodeIfPresent(Bool.self, forKey: .blank)
        min = try container.decodeIfPresent(Int.self, forKey: .min)
        max = try container.decodeIfPresent(Int.self, forKey: .max)
        seats = try container.decodeIfPresent(Int.self, forKey: .seats)
        threshold = try container.decodeIfPresent(String.self, forKey: .threshold)
        quorum = try container.decodeIfPresent(String.self, forKey: .quorum)
        rule = try container.decodeIfPresent(String.self, forKey: .rule)
    }

    /// The ballot `questions` define, numbered from 1; the contract still checks it (`Ballot.violation`).
    public static func ballot(_ questions: [QuestionJSON]) throws(QuestionsRefusal) -> Ballot {
        var list: [Question] = []
        for (index, question) in questions.enumerated() { list.append(try question.question(number: index + 1)) }
        return Ballot(questions: list)
    }

    /// The ballot of a questions file's bytes, `{"questions": [...]}` and nothing else.
    public static func ballot(file data: Data) throws(QuestionsRefusal) -> Ballot {
        struct File: Decodable { var questions: [QuestionJSON] }
        guard let root = try? JSONSerialization.jsonObject(with: data) else { throw QuestionsRefusal("is not JSON") }
        guard let object = root as? [String: Any], object["questions"] is [Any], object.count == 1 else {
            throw QuestionsRefusal("must be an object with only a \"questions\" list")
        }
        do { return try ballot(JSONDecoder().decode(File.self, from: data).questions) } catch let refusal
            as QuestionsRefusal
        {
            throw refusal
        } catch let DecodingError.typeMismatch(_, context) {
            throw QuestionsRefusal("\(location(context)) has the wrong type")
        } catch let DecodingError.valueNotFound(_, context) {
            throw QuestionsRefusal("\(location(context)) has the wrong type")
        } catch {
            throw QuestionsRefusal("could not be read as questions")
        }
    }

    /// "question 2's seats", from where a decoding error happened.
    private static func location(_ context: DecodingError.Context) -> String {
        let path = context.codingPath
        guard path.count >= 2, let index = path[1].intValue else { return "the file" }
        return "question \(index + 1)'s " + (path.count > 2 ? path[2].stringValue : "entry")
    }

    private func question(number: Int) throws(QuestionsRefusal) -> Question {
        func fail(_ message: String) -> QuestionsRefusal { QuestionsRefusal("question \(number): \(message)") }
        guard let title else { throw fail("has no title") }
        let method: Method
        switch self.method {
        case "choose":
            let max = max ?? 1
            method = .choose(min: min ?? 1, max: max, seats: seats ?? max)
        case "yes-no":
            let threshold = try Self.threshold(threshold ?? "more-yes-than-no", fail: fail)
            let quorum = try quorum.map { text throws(QuestionsRefusal) in
                try Self.fraction(text, key: "quorum", fail: fail)
            }
            method = .yesNo(threshold: threshold, quorum: quorum)
        default:
            guard let rule = RankRule(rawValue: rule ?? RankRule.scottishSTV.rawValue) else {
                throw fail("rule must be scottish-stv or schulze")
            }
            method = .rank(seats: seats ?? 1, rule: rule)
        }
        return Question(
            title: title, description: description ?? "", options: options ?? [], method: method,
            blankAllowed: blank ?? false)
    }

    private static func threshold(
        _ text: String, fail: (String) -> QuestionsRefusal
    ) throws(QuestionsRefusal) -> Threshold {
        switch text {
        case "more-yes-than-no": return .moreYesThanNo
        case "majority-of-electorate": return .majorityOfElectorate
        default:
            let parts = text.split(separator: " ")
            let usage =
                "threshold must be more-yes-than-no, N/D of yes-and-no, N/D of ballots or majority-of-electorate"
            guard parts.count == 3, parts[1] == "of" else { throw fail(usage) }
            let share = try fraction(String(parts[0]), key: "threshold", fail: fail)
            switch parts[2] {
            case "yes-and-no": return .ofYesAndNo(share)
            case "ballots": return .ofBallots(share)
            default: throw fail(usage)
            }
        }
    }

    private static func fraction(
        _ text: String, key: String, fail: (String) -> QuestionsRefusal
    ) throws(QuestionsRefusal) -> Fraction {
        let parts = text.split(separator: "/")
        guard parts.count == 2, let numerator = UInt64(parts[0]), let denominator = UInt64(parts[1]),
            numerator >= 1, numerator <= denominator
        else { throw fail("\(key) must be a fraction N/D with 1 ≤ N ≤ D, such as 2/3") }
        return Fraction(numerator, denominator)
    }
}
