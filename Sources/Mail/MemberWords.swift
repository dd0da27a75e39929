import Ballots
import Foundation

/// What the organisation says to a member, in the member's language (Korean for a tag starting "ko", else
/// English): the one place that holds the words of both the e-mails (`Invitation`) and the printed letters
/// (`MemberLetters`), so a sentence changed or translated once reads the same on paper and on screen.
public struct MemberWords: Sendable {
    /// The language the words are in: "en" or "ko".
    public let language: String

    /// The words for a member whose contact gives `tag` (nil: English).
    public init(_ tag: String?) { language = tag?.hasPrefix("ko") == true ? "ko" : "en" }

    private var ko: Bool { language == "ko" }

    // MARK: - Both

    func dear(_ name: String) -> String { ko ? "\(name) 님께," : "Dear \(name)," }
    var dearMember: String { ko ? "회원님께," : "Dear member," }
    /// `place`'s voting window in `zone`, named.
    func window(_ place: MailPlace, in zone: TimeZone) -> String {
        let (opens, closes) = (date(place.opens, in: zone), date(place.closes, in: zone))
        return ko
            ? "투표 기간: \(opens) ~ \(closes) (\(zone.identifier))"
            : "Voting opens \(opens) and closes \(closes) (\(zone.identifier) time)."
    }
    var anonymous: String {
        ko
            ? "이 링크로 익명 투표권을 받습니다. 누가 어떻게 투표했는지는 아무도 알 수 없습니다."
            : "This link gets you an anonymous ballot: no one, the organisers included, can tell how you voted."
    }
    func help(_ contact: String) -> String { ko ? "문의: \(contact)" : "Questions? Ask \(contact)." }

    /// `date` as the member reads it, in `zone`: the full date and the time ("Monday, 7 December 2026 at 09:00").
    func date(_ date: Date, in zone: TimeZone) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: ko ? "ko_KR" : "en_GB")
        formatter.timeZone = zone
        formatter.dateStyle = .full
        formatter.timeStyle = .short
        return formatter.string(from: date)
    }

    /// The time zone a member reads the windows in: their own if the list gave one, else the organisation's.
    static func zone(of member: ContactBook.Member, else organisation: TimeZone) -> TimeZone {
        member.contact.timeZone.flatMap(TimeZone.init(identifier:)) ?? organisation
    }

    // MARK: - E-mail

    func invitationSubject(_ election: String) -> String { ko ? "투표 안내: \(election)" : "Your vote: \(election)" }
    func reminderSubject(_ election: String) -> String {
        ko ? "아직 투표하지 않으셨습니다: \(election)" : "Reminder, you have not voted yet: \(election)"
    }
    var invitationIntro: String {
        ko
            ? "다음 투표에 참여하실 수 있습니다. 아래 링크로 투표하세요."
            : "You may vote in the following. Each link below is your own way to vote."
    }
    var reminderIntro: String {
        ko
            ? "아래 투표에 아직 참여하지 않으셨습니다. 투표 기간 안에 투표해 주세요."
            : "You have not yet voted in the following. Please vote before it closes."
    }
    var vote: String { ko ? "투표하기" : "Vote" }
    var keepPrivate: String {
        ko ? "이 링크는 회원님만의 것입니다. 다른 사람에게 전달하지 마세요." : "The link is yours alone: do not forward this message."
    }

    // MARK: - Letters

    func letterTitle(_ election: String) -> String { ko ? "투표 안내: \(election)" : "Your vote: \(election)" }
    var letterIntro: String {
        ko
            ? "다음 투표에 참여하실 수 있습니다. 휴대전화로 QR 코드를 스캔하거나 링크를 열어 투표하세요. 각 코드는 회원님만의 것입니다."
            : "You may vote in the following. Scan a QR code with your phone, or open its link, to vote: each code is your own."
    }
    var questions: String { ko ? "안건" : "On the ballot" }
    var candidates: String { ko ? "후보" : "Candidates" }
    var yesNoAbstain: [String] { ko ? ["찬성", "반대", "기권"] : ["yes", "no", "abstain"] }

    /// How `question` is answered and decided, as the booth says it (the web app's `methodText`): what to tick
    /// or rank, how many are elected or when the motion passes, the quorum, and whether it may be left blank.
    func rule(_ question: Question) -> String {
        func fraction(_ share: Fraction) -> String { "\(share.numerator)/\(share.denominator)" }
        var parts: [String] = []
        switch question.method {
        case .choose(let min, let max, let seats):
            let pick =
                switch (min == max || min == 1, max) {
                case (true, 1): ko ? "하나를 고르세요." : "Choose one option."
                case (true, _) where min == max: ko ? "정확히 \(max)개를 고르세요." : "Choose exactly \(max) options."
                case (true, _): ko ? "\(max)개까지 고르세요." : "Choose up to \(max) options."
                case (false, _): ko ? "\(min)개에서 \(max)개까지 고르세요." : "Choose between \(min) and \(max) options."
                }
            parts.append(pick)
            parts.append(
                ko
                    ? "가장 많은 표를 받은 \(seats)개가 선출됩니다."
                    : seats == 1
                        ? "The option with the most votes is elected."
                        : "The \(seats) options with the most votes are elected.")
        case .yesNo(let threshold, let quorum):
            parts.append(ko ? "찬성, 반대 또는 기권으로 답하세요." : "Answer yes, no or abstain.")
            let passes =
                switch threshold {
                case .moreYesThanNo: ko ? "찬성이 반대보다 많으면 가결됩니다." : "It passes with more yes than no."
                case .ofYesAndNo(let share):
                    ko
                        ? "찬성과 반대 중 찬성이 \(fraction(share)) 이상이면 가결됩니다."
                        : "It passes if at least \(fraction(share)) of those answering yes or no answer yes."
                case .ofBallots(let share):
                    ko
                        ? "전체 투표 중 찬성이 \(fraction(share)) 이상이면 가결됩니다 (기권과 빈 답은 찬성이 아닌 것으로 셉니다)."
                        : "It passes if at least \(fraction(share)) of all ballots answer yes (abstentions and blanks count as not yes)."
                case .majorityOfElectorate:
                    ko ? "등록된 유권자 과반수가 찬성하면 가결됩니다." : "It passes if more than half of all authorised voters answer yes."
                }
            parts.append(passes)
            if let quorum {
                parts.append(
                    ko
                        ? "정족수: 등록된 유권자의 \(fraction(quorum)) 이상이 투표해야 합니다."
                        : "Quorum: at least \(fraction(quorum)) of the authorised voters must cast a ballot.")
            }
        case .rank(let seats, let rule):
            parts.append(
                ko
                    ? "선호하는 순서대로 순위를 매기세요. 원하는 만큼만 매겨도 됩니다."
                    : "Rank the options in order of preference; rank as few as you like.")
            let counted =
                switch (rule, seats) {
                case (.schulze, 1):
                    ko
                        ? "슐체 방식으로 집계하며, 순서의 처음 1개가 선출됩니다."
                        : "Counted by the Schulze method; the first in its order is elected."
                case (.schulze, _):
                    ko
                        ? "슐체 방식으로 집계하며, 순서의 처음 \(seats)개가 선출됩니다."
                        : "Counted by the Schulze method; the first \(seats) in its order are elected."
                case (.scottishSTV, 1):
                    ko ? "즉석 결선 투표로 집계합니다 (스코틀랜드 STV 규칙)." : "Counted by instant runoff (Scottish STV rules)."
                case (.scottishSTV, _):
                    ko
                        ? "단기 이양식 투표로 \(seats)석을 채웁니다 (스코틀랜드 STV 규칙)."
                        : "\(seats) seats are filled by single transferable vote (Scottish STV rules)."
                }
            parts.append(counted)
        }
        if question.blankAllowed { parts.append(ko ? "빈 답으로 남겨도 됩니다." : "It may be left blank.") }
        return parts.joined(separator: " ")
    }
    func typed(anonymous: Bool) -> String {
        ko
            ? (anonymous ? "발급 코드" : "투표 토큰") + " (직접 입력할 때):"
            : (anonymous ? "Issuance code" : "Voting token") + " (if you type it in):"
    }
    var keepLetter: String {
        ko
            ? "이 편지는 회원님만 보관하세요. 코드를 가진 사람은 누구나 회원님 대신 투표할 수 있습니다."
            : "Keep this letter private: anyone holding its codes can vote in your place."
    }
}

/// `text` as HTML content or a quoted attribute value: what the messages and the letters both write.
func escape(_ text: String) -> String {
    text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
        .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
        .replacingOccurrences(of: "'", with: "&#39;")
}
