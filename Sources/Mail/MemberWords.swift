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
    func window(_ opens: String, _ closes: String, _ zone: String) -> String {
        ko ? "투표 기간: \(opens) ~ \(closes) (\(zone))" : "Voting opens \(opens) and closes \(closes) (\(zone) time)."
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
