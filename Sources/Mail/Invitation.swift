public import Foundation
public import VoteLedger

/// A place as a message names it: what the CLI reads from the ledger for each place a member may vote in.
public struct MailPlace: Sendable {
    public var id: UInt32
    public var name: String
    public var opens: Date
    public var closes: Date
    /// The link buys an anonymous ballot credential rather than voting itself.
    public var anonymous: Bool

    public init(id: UInt32, name: String, opens: Date, closes: Date, anonymous: Bool) {
        self.id = id
        self.name = name
        self.opens = opens
        self.closes = closes
        self.anonymous = anonymous
    }
}

/// What a mailing sends: the first message with the links, or a reminder to those who have not voted.
public enum MailKind: String, Codable, Sendable {
    case invitation
    case reminder
}

/// The message one member gets: every place they may vote in, each with its voting link (the token in the
/// fragment, as the letters have it, so it never reaches a server's log), its window in the member's (else the organisation's) time
/// zone and the member's language (English or Korean; English for any other), and whom to ask for help; plain
/// text and HTML.
public struct Invitation: Sendable {
    public var kind: MailKind
    public var election: String
    /// The web app's address as voters reach it (checked by `VotingLink.base`).
    public var base: String
    public var help: String
    public var timeZone: TimeZone

    public init(kind: MailKind, election: String, base: String, help: String, timeZone: TimeZone) {
        self.kind = kind
        self.election = election
        self.base = base
        self.help = help
        self.timeZone = timeZone
    }

    /// The message to `member` for `places` (each with the member's token), from `from`, as RFC 5322 bytes.
    public func message(
        to member: ContactBook.Member, address: String, places: [(MailPlace, VotingToken)], from: String
    ) throws -> [UInt8] {
        let words = MemberWords(member.contact.language)
        let zone = MemberWords.zone(of: member, else: timeZone)
        let greeting = member.contact.name.map { words.dear($0) } ?? words.dearMember
        let subject = kind == .invitation ? words.invitationSubject(election) : words.reminderSubject(election)
        var text = greeting + "\n\n" + (kind == .invitation ? words.invitationIntro : words.reminderIntro) + "\n\n"
        var html =
            "<!doctype html><html lang=\"\(words.language)\"><meta charset=\"utf-8\"><body style=\"font-family:sans-serif\">"
            + "<p>\(escape(greeting))</p><p>\(escape(kind == .invitation ? words.invitationIntro : words.reminderIntro))</p>"
        for (place, token) in places {
            let link = "\(base)/#/booth/\(place.id)?t=\(token.compact)"
            let window = words.window(place, in: zone)
            text += "\(place.name)\n\(window)\n\(place.anonymous ? words.anonymous + "\n" : "")\(link)\n\n"
            html +=
                "<h2 style=\"font-size:1.1em\">\(escape(place.name))</h2><p>\(escape(window))</p>"
                + (place.anonymous ? "<p>\(escape(words.anonymous))</p>" : "")
                + "<p><a href=\"\(escape(link))\">\(escape(words.vote))</a><br><small>\(escape(link))</small></p>"
        }
        text += words.keepPrivate + "\n" + words.help(help) + "\n"
        html += "<p>\(escape(words.keepPrivate))</p><p>\(escape(words.help(help)))</p></body></html>"
        return MIMEMessage(
            from: from, to: address, toName: member.contact.name, subject: subject, text: text, html: html
        ).bytes()
    }

}

/// A message of plain text and HTML alternatives in UTF-8 (RFC 5322, RFC 2045-2047): both parts in base64, a
/// header of encoded words where it is not ASCII.
struct MIMEMessage {
    var from: String
    var to: String
    var toName: String?
    var subject: String
    var text: String
    var html: String

    func bytes() -> [UInt8] {
        let boundary = "voteledger-" + UUID().uuidString
        let domain = from.split(separator: "@").last.map(String.init) ?? "voteledger.invalid"
        let date = DateFormatter()
        date.locale = Locale(identifier: "en_US_POSIX")
        date.dateFormat = "EEE, dd MMM yyyy HH:mm:ss Z"
        var lines = [
            "From: \(from)",
            "To: " + (toName.map { "\(MIMEMessage.displayName($0)) <\(to)>" } ?? to),
            "Subject: \(MIMEMessage.encodedWord(subject))",
            "Date: \(date.string(from: Date()))",
            "Message-ID: <\(UUID().uuidString.lowercased())@\(domain)>",
            "MIME-Version: 1.0",
            "Content-Type: multipart/alternative; boundary=\"\(boundary)\"",
            "",
        ]
        for (type, body) in [("text/plain", text), ("text/html", html)] {
            lines += [
                "--\(boundary)", "Content-Type: \(type); charset=utf-8", "Content-Transfer-Encoding: base64", "",
            ]
            lines += MIMEMessage.base64Lines(Array(body.utf8))
        }
        lines.append("--\(boundary)--")
        return Array((lines.joined(separator: "\r\n") + "\r\n").utf8)
    }

    /// `text` as it goes into a header: as it is if plain printable ASCII, else one RFC 2047 encoded word per
    /// piece of at most 45 bytes (each under the 75-character limit, a character never split).
    static func encodedWord(_ text: String) -> String {
        let plain = text.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value < 0x7F }
        if plain && !text.contains("=?") { return text }
        var pieces: [String] = []
        var piece: [UInt8] = []
        for character in text {
            let bytes = Array(String(character).utf8)
            if piece.count + bytes.count > 45 {
                pieces.append(piece.isEmpty ? "" : "=?utf-8?B?\(Data(piece).base64EncodedString())?=")
                piece = []
            }
            piece += bytes
        }
        if !piece.isEmpty { pieces.append("=?utf-8?B?\(Data(piece).base64EncodedString())?=") }
        return pieces.filter { !$0.isEmpty }.joined(separator: "\r\n ")
    }

    /// A display name: an encoded word if it is not ASCII, else a quoted string (a comma or dot in it is text).
    static func displayName(_ name: String) -> String {
        guard name.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7F }), !name.contains("=?") else {
            return encodedWord(name)
        }
        return "\"" + name.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            + "\""
    }

    /// Base64 in lines of 76 characters.
    static func base64Lines(_ bytes: [UInt8]) -> [String] {
        let encoded = Data(bytes).base64EncodedString()
        var lines: [String] = []
        var start = encoded.startIndex
        while start < encoded.endIndex {
            let end = encoded.index(start, offsetBy: 76, limitedBy: encoded.endIndex) ?? encoded.endIndex
            lines.append(String(encoded[start..<end]))
            start = end
        }
        return lines
    }
}
