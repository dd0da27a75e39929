import Foundation
public import VoteLedger

/// What a bounce says about one recipient: a per-recipient block of a delivery status notification (RFC 3464
/// §2.3). A relay that accepted a message may still fail to deliver it; the notice comes back to the envelope
/// sender (the officer's From address) long after `vote voter mail` logged the message as sent.
public struct DeliveryStatus: Sendable, Equatable {
    /// What the reporting MTA did with the message for this recipient (RFC 3464 §2.3.3).
    public enum Action: String, Sendable {
        case failed, delayed, delivered, relayed, expanded
        /// A value RFC 3464 does not name.
        case other
    }

    /// The address the message failed at (`Final-Recipient`), without its address type.
    public var finalRecipient: String
    /// The address as the sender gave it, when the MTA kept it (`Original-Recipient`): before any alias.
    public var originalRecipient: String?
    public var action: Action
    /// The enhanced status code (`Status`, RFC 3463), such as 5.1.1.
    public var status: String?
    /// What the remote server said (`Diagnostic-Code`), unfolded, without its type (`smtp;`).
    public var diagnostic: String?

    public init(
        finalRecipient: String, originalRecipient: String?, action: Action, status: String?, diagnostic: String?
    ) {
        self.finalRecipient = finalRecipient
        self.originalRecipient = originalRecipient
        self.action = action
        self.status = status
        self.diagnostic = diagnostic
    }
}

/// A delivery status notification (RFC 3464: `multipart/report; report-type=delivery-status`) found in a message.
public struct DeliveryReport: Sendable {
    public var recipients: [DeliveryStatus]
    /// The Message-ID of the message that bounced, without its angle brackets: from the returned headers
    /// (`text/rfc822-headers` or `message/rfc822`), else the report's `X-Original-Message-ID` or `In-Reply-To`.
    /// It names the exact message the log recorded, so a bounce of an old message is not taken for a new one.
    public var originalMessageID: String?
}

/// Finds delivery status notifications in saved messages: a small MIME walker (header unfolding, multipart
/// boundaries, base64 and quoted-printable parts) sufficient for RFC 3462/3464 reports, CRLF or LF line ends.
/// Bounces that are not DSNs (plain text of an old MTA, an auto-reply) are told apart, not guessed at.
public enum BounceParser {
    /// The largest message read (a bounce returning a whole message with attachments stays well under it).
    public static let maxMessageBytes = 32 << 20
    /// How deep multiparts may nest before the message is refused as damaged.
    static let maxDepth = 8

    /// The report in `message` (one RFC 5322 message), or `nil` if it holds none. Throws, in one line, for a
    /// message that cannot be read as MIME (a header line without a colon, a multipart without its boundary or its
    /// closing delimiter, a report without its delivery-status part, a recipient without Final-Recipient or Action).
    public static func report(in message: String) throws(VoteError) -> DeliveryReport? {
        guard message.utf8.count <= maxMessageBytes else {
            throw VoteError(.refused, "a message is over \(maxMessageBytes >> 20) MB")
        }
        return try report(in: try Entity(lines(message)[...]), depth: 0)
    }

    // MARK: - Reports

    private static func report(in entity: Entity, depth: Int) throws(VoteError) -> DeliveryReport? {
        guard depth < maxDepth else { throw VoteError(.refused, "damaged MIME: multiparts nested too deep") }
        let type = entity.contentType
        guard type.type.hasPrefix("multipart/") else { return nil }
        let parts = try entity.parts()
        guard type.type == "multipart/report" else {
            // A report inside a multipart (a forwarder's wrapper): the first one found.
            for part in parts {
                if let found = try report(in: part, depth: depth + 1) { return found }
            }
            return nil
        }
        // Read receipts (disposition-notification) and other reports are not bounces.
        guard type.parameters["report-type"]?.lowercased() == "delivery-status" else { return nil }
        guard
            let status = parts.first(where: {
                ["message/delivery-status", "message/global-delivery-status"].contains($0.contentType.type)
            })
        else { throw VoteError(.refused, "damaged MIME: a delivery report without its message/delivery-status part") }
        var groups: [[Field]] = []
        var group: [String] = []
        for line in try status.decodedLines() + [""] {
            if line.allSatisfy({ $0 == " " || $0 == "\t" }) {
                if !group.isEmpty { groups.append(try fields(group[...]).fields) }
                group = []
            } else {
                group.append(line)
            }
        }
        var recipients: [DeliveryStatus] = []
        var originalMessageID: String?
        for (index, group) in groups.enumerated() {
            guard let final = value("final-recipient", in: group) else {
                if index == 0 { originalMessageID = value("x-original-message-id", in: group).flatMap(messageID) }
                continue
            }
            guard let action = value("action", in: group) else {
                throw VoteError(.refused, "damaged delivery report: a recipient without Action")
            }
            recipients.append(
                DeliveryStatus(
                    finalRecipient: address(final),
                    originalRecipient: value("original-recipient", in: group).map(address),
                    action: DeliveryStatus.Action(rawValue: action.lowercased()) ?? .other,
                    status: value("status", in: group).map { code in String(code.prefix { !$0.isWhitespace }) },
                    diagnostic: value("diagnostic-code", in: group).map(typed)))
        }
        guard !recipients.isEmpty else {
            throw VoteError(.refused, "damaged delivery report: no recipient has a Final-Recipient")
        }
        let returned = parts.first {
            ["text/rfc822-headers", "message/rfc822", "message/global", "message/global-headers"].contains(
                $0.contentType.type)
        }
        if let returned, let headers = try? Entity(returned.decodedLines()[...]),
            let id = headers.header("message-id").flatMap(messageID)
        {
            originalMessageID = id
        }
        return DeliveryReport(
            recipients: recipients,
            originalMessageID: originalMessageID ?? entity.header("in-reply-to").flatMap(messageID))
    }

    private static func value(_ name: String, in fields: [Field]) -> String? {
        fields.first { $0.name == name }?.value
    }

    /// `rfc822; Ada@Example.org` as `Ada@Example.org` (angle brackets and the address type gone).
    private static func address(_ value: String) -> String {
        var text = Substring(typed(value))
        if text.hasPrefix("<") && text.hasSuffix(">") { text = text.dropFirst().dropLast() }
        return String(text).trimmingCharacters(in: .whitespaces)
    }

    /// A typed field's text after `type;` (`smtp; 550 …`, `rfc822; addr`), or all of it if it has no type.
    private static func typed(_ value: String) -> String {
        guard let semicolon = value.firstIndex(of: ";"),
            value[..<semicolon].allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" })
        else { return value }
        return value[value.index(after: semicolon)...].trimmingCharacters(in: .whitespaces)
    }

    /// The first `<id>` in a header's value, without the brackets (or the trimmed value if it has none).
    static func messageID(_ value: String) -> String? {
        let text = value.trimmingCharacters(in: .whitespaces)
        if let open = text.firstIndex(of: "<"), let close = text[open...].firstIndex(of: ">") {
            let id = text[text.index(after: open)..<close]
            return id.isEmpty ? nil : String(id)
        }
        return text.isEmpty || text.contains(" ") ? nil : text
    }

    // MARK: - MIME

    struct Field {
        /// Lowercased.
        var name: String
        /// Unfolded: each continuation line joined to the one before with one space.
        var value: String
    }

    struct ContentType {
        /// `type/subtype`, lowercased; `text/plain` if the part has no Content-Type (RFC 2045 §5.2).
        var type: String
        /// Names lowercased, values unquoted.
        var parameters: [String: String]
    }

    /// One entity (a message or a body part): its header fields and its body's lines.
    struct Entity {
        var fields: [Field]
        var body: ArraySlice<String>

        init(_ lines: ArraySlice<String>) throws(VoteError) {
            let blank = lines.firstIndex(of: "") ?? lines.endIndex
            fields = try BounceParser.fields(lines[..<blank]).fields
            body = blank < lines.endIndex ? lines[(blank + 1)...] : []
        }

        func header(_ name: String) -> String? { fields.first { $0.name == name }?.value }

        var contentType: ContentType { BounceParser.contentType(header("content-type")) }

        /// The body parts of a multipart entity, preamble and epilogue left out.
        func parts() throws(VoteError) -> [Entity] {
            guard let boundary = contentType.parameters["boundary"], (1...200).contains(boundary.count) else {
                throw VoteError(.refused, "damaged MIME: a \(contentType.type) without a boundary")
            }
            let delimiter = "--" + boundary
            var parts: [Entity] = []
            var start: Int?
            for index in body.indices {
                let line = body[index]
                guard line.hasPrefix(delimiter) else { continue }
                let rest = line.dropFirst(delimiter.count)
                let closing = rest.hasPrefix("--")
                // Transport padding may follow a delimiter; anything else makes it a line of text.
                guard rest.dropFirst(closing ? 2 : 0).allSatisfy({ $0 == " " || $0 == "\t" }) else { continue }
                if let start { parts.append(try Entity(body[start..<index])) }
                if closing { return parts }
                start = index + 1
            }
            throw VoteError(
                .refused,
                start == nil
                    ? "damaged MIME: a \(contentType.type) whose boundary never occurs"
                    : "damaged MIME: a \(contentType.type) without its closing boundary")
        }

        /// The body's lines with its Content-Transfer-Encoding undone (base64 or quoted-printable).
        func decodedLines() throws(VoteError) -> [String] {
            switch (header("content-transfer-encoding") ?? "").lowercased().trimmingCharacters(in: .whitespaces) {
            case "base64":
                guard let data = Data(base64Encoded: body.joined(), options: .ignoreUnknownCharacters),
                    let text = String(data: data, encoding: .utf8)
                else { throw VoteError(.refused, "damaged MIME: a base64 part that does not decode to UTF-8") }
                return BounceParser.lines(text)
            case "quoted-printable":
                guard let text = BounceParser.quotedPrintable(body) else {
                    throw VoteError(.refused, "damaged MIME: a quoted-printable part that does not decode to UTF-8")
                }
                return BounceParser.lines(text)
            default: return Array(body)
            }
        }
    }

    /// The lines of `text`, each without its CR LF or LF.
    static func lines(_ text: String) -> [String] {
        // By scalars: "\r\n" is one Character, which a split on "\n" would not cut.
        var lines = text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            String(Substring(line.last == "\r" ? line.dropLast() : line))
        }
        if lines.last == "" { lines.removeLast() }
        return lines
    }

    /// Header fields, unfolded (RFC 5322 §2.2.3).
    static func fields(_ lines: ArraySlice<String>) throws(VoteError) -> (fields: [Field], count: Int) {
        var fields: [Field] = []
        for line in lines {
            if line.first == " " || line.first == "\t" {
                guard !fields.isEmpty else {
                    throw VoteError(.refused, "damaged MIME: a header starts with a continuation line")
                }
                fields[fields.count - 1].value += " " + line.trimmingCharacters(in: .whitespaces)
                continue
            }
            guard let colon = line.firstIndex(of: ":"), colon > line.startIndex,
                line[..<colon].allSatisfy({ $0.isASCII && $0 != " " && $0 != "\t" && !$0.isNewline })
            else { throw VoteError(.refused, "damaged MIME: a header line without a field name and colon") }
            fields.append(
                Field(
                    name: line[..<colon].lowercased(),
                    value: line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        return (fields, fields.count)
    }

    /// `multipart/report; report-type=delivery-status; boundary="x"` as its type and parameters.
    static func contentType(_ value: String?) -> ContentType {
        guard let value else { return ContentType(type: "text/plain", parameters: [:]) }
        var pieces: [String] = []
        var piece = ""
        var quoted = false
        var escaped = false
        for character in value {
            if escaped {
                piece.append(character)
                escaped = false
            } else if quoted && character == "\\" {
                escaped = true
            } else if character == "\"" {
                quoted.toggle()
            } else if character == ";" && !quoted {
                pieces.append(piece)
                piece = ""
            } else {
                piece.append(character)
            }
        }
        pieces.append(piece)
        var parameters: [String: String] = [:]
        for parameter in pieces.dropFirst() {
            guard let equals = parameter.firstIndex(of: "=") else { continue }
            let name = parameter[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            if parameters[name] == nil {
                parameters[name] = parameter[parameter.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            }
        }
        let type = pieces[0].trimmingCharacters(in: .whitespaces).lowercased()
        return ContentType(type: type.isEmpty ? "text/plain" : type, parameters: parameters)
    }

    /// Quoted-printable (RFC 2045 §6.7): `=XX` bytes and `=` soft line breaks.
    static func quotedPrintable(_ lines: ArraySlice<String>) -> String? {
        var bytes: [UInt8] = []
        for line in lines {
            var utf8 = Array(line.utf8)
            while utf8.last == 0x20 || utf8.last == 0x09 { utf8.removeLast() }
            var soft = false
            var index = 0
            while index < utf8.count {
                if utf8[index] == UInt8(ascii: "=") {
                    if index == utf8.count - 1 {
                        soft = true
                        break
                    }
                    guard index + 2 < utf8.count,
                        let byte = UInt8(String(decoding: utf8[index + 1...index + 2], as: UTF8.self), radix: 16)
                    else { return nil }
                    bytes.append(byte)
                    index += 3
                } else {
                    bytes.append(utf8[index])
                    index += 1
                }
            }
            if !soft { bytes.append(0x0A) }
        }
        return String(bytes: bytes, encoding: .utf8)
    }
}

extension MIMEMessage {
    /// The Message-ID `bytes` (a message `bytes()` made) carries, without its angle brackets: what the log keeps
    /// so a bounce can name the exact message.
    static func messageID(in bytes: [UInt8]) -> String? {
        let text = String(decoding: bytes.prefix(4096), as: UTF8.self)
        for line in BounceParser.lines(text) {
            if line.isEmpty { return nil }
            if line.lowercased().hasPrefix("message-id:") { return BounceParser.messageID(String(line.dropFirst(11))) }
        }
        return nil
    }
}
