import Ballots
import Foundation
import VoteLedger

/// A place's questions as an officer writes them (`vote place create --questions FILE`): a JSON object
/// `{"questions": [...]}`, each question an object with
/// - `title` (and an optional `description`), `options` (a list of names; none for yes/no), `blank` (may it be
///   left blank; default false), and `method`:
/// - `"choose"`: `min` (default 1), `max` (default 1), `seats` (default `max`): tick min to max options, the
///   `seats` with most votes are elected;
/// - `"yes-no"`: `threshold`, one of `"more-yes-than-no"` (the default), `"N/D of yes-and-no"`,
///   `"N/D of ballots"`, `"majority-of-electorate"`; and an optional `quorum` `"N/D"` of the electorate;
/// - `"rank"`: `seats` (default 1) and `rule`, `"scottish-stv"` (the default; one seat is instant runoff) or
///   `"schulze"`.
/// Any other key is refused, so a misspelt one is not silently ignored.
enum QuestionsFile {
    private struct File: Decodable {
        var questions: [QuestionJSON]
    }

    static func read(_ path: String) throws -> Ballot {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw VoteError(.notFound, "--questions: cannot read \(path)")
        }
        guard data.count <= 1 << 20 else { throw VoteError(.refused, "--questions: \(path) is over 1 MiB") }
        // The keys first, from the plain JSON, so that a misspelt key is named rather than ignored.
        guard let root = try? JSONSerialization.jsonObject(with: data) else {
            throw VoteError(.refused, "--questions: \(path) is not JSON")
        }
        guard let object = root as? [String: Any], let list = object["questions"] as? [Any], object.count == 1 else {
            throw VoteError(.refused, "--questions: \(path) must be an object with only a \"questions\" list")
        }
        for (index, question) in list.enumerated() {
            guard let keys = (question as? [String: Any])?.keys else {
                throw VoteError(.refused, "--questions: question \(index + 1): must be an object")
            }
            let method = (question as? [String: Any])?["method"] as? String ?? ""
            let allowed: Set<String> =
                switch method {
                case "choose": ["min", "max", "seats"]
                case "yes-no": ["threshold", "quorum"]
                case "rank": ["seats", "rule"]
                default:
                    throw VoteError(
                        .refused, "--questions: question \(index + 1): method must be choose, yes-no or rank")
                }
            let unknown = Set(keys).subtracting(["title", "description", "options", "blank", "method"]).subtracting(
                allowed)
            if let key = unknown.sorted().first {
                throw VoteError(
                    .refused, "--questions: question \(index + 1): unknown key \"\(key)\" for a \(method) question")
            }
        }
        let file: File
        do {
            file = try JSONDecoder().decode(File.self, from: data)
        } catch let DecodingError.typeMismatch(_, context) {
            throw VoteError(.refused, "--questions: \(location(context)) has the wrong type")
        } catch {
            throw VoteError(.refused, "--questions: \(path) could not be read as questions")
        }
        return Ballot(questions: try file.questions.enumerated().map { try question($1, number: $0 + 1) })
    }

    /// "question 2's seats", from where a decoding error happened.
    private static func location(_ context: DecodingError.Context) -> String {
        let path = context.codingPath
        guard path.count >= 2, let index = path[1].intValue else { return "the file" }
        return "question \(index + 1)'s " + (path.count > 2 ? path[2].stringValue : "entry")
    }

    private static func question(_ fields: QuestionJSON, number: Int) throws -> Question {
        func fail(_ message: String) -> VoteError { VoteError(.refused, "--questions: question \(number): \(message)") }
        guard let title = fields.title else { throw fail("has no title") }
        let options = fields.options ?? []
        let method: Method
        switch fields.method {
        case "choose":
            let max = fields.max ?? 1
            method = .choose(min: fields.min ?? 1, max: max, seats: fields.seats ?? max)
        case "yes-no":
            let threshold = try self.threshold(fields.threshold ?? "more-yes-than-no", fail: fail)
            let quorum = try fields.quorum.map { try fraction($0, key: "quorum", fail: fail) }
            method = .yesNo(threshold: threshold, quorum: quorum)
        default:
            guard let rule = RankRule(rawValue: fields.rule ?? RankRule.scottishSTV.rawValue) else {
                throw fail("rule must be scottish-stv or schulze")
            }
            method = .rank(seats: fields.seats ?? 1, rule: rule)
        }
        return Question(
            title: title, description: fields.description ?? "", options: options, method: method,
            blankAllowed: fields.blank ?? false)
    }

    private static func threshold(_ text: String, fail: (String) -> VoteError) throws -> Threshold {
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

    private static func fraction(_ text: String, key: String, fail: (String) -> VoteError) throws -> Fraction {
        let parts = text.split(separator: "/")
        guard parts.count == 2, let numerator = UInt64(parts[0]), let denominator = UInt64(parts[1]),
            numerator >= 1, numerator <= denominator
        else { throw fail("\(key) must be a fraction N/D with 1 ≤ N ≤ D, such as 2/3") }
        return Fraction(numerator, denominator)
    }
}

extension Question {
    /// How the question is answered and decided, in a few words ("choose 1 to 3; 3 elected").
    var methodText: String {
        let blank = blankAllowed ? "; may be left blank" : ""
        switch method {
        case .choose(let min, let max, let seats):
            return "choose \(min == max ? "\(max)" : "\(min) to \(max)"); \(seats) elected" + blank
        case .yesNo(let threshold, let quorum):
            let passes =
                switch threshold {
                case .moreYesThanNo: "more yes than no"
                case .ofYesAndNo(let share): "yes at least \(share.numerator)/\(share.denominator) of yes and no"
                case .ofBallots(let share): "yes at least \(share.numerator)/\(share.denominator) of all ballots"
                case .majorityOfElectorate: "yes from more than half of the electorate"
                }
            let quorumText = quorum.map { "; quorum \($0.numerator)/\($0.denominator) of the electorate" } ?? ""
            return "yes, no or abstain; passes with \(passes)\(quorumText)" + blank
        case .rank(let seats, let rule):
            let how =
                switch rule {
                case .scottishSTV: seats == 1 ? "instant runoff" : "Scottish STV"
                case .schulze: "the Schulze method"
                }
            return "rank; \(seats) elected by \(how)" + blank
        }
    }

    /// The question's options as the voter numbers them ("1. Ana").
    var optionLines: [String] {
        if case .yesNo = method { return ["yes", "no", "abstain"] }
        return options.enumerated().map { "\($0 + 1). \($1)" }
    }
}
