import Election
import Foundation

/// A list of voters as an officer exports it from a spreadsheet (`vote voter authorize --from`, the CSV body of
/// the voters route). Either one identity per line, perhaps under a header line, a line perhaps giving the voter's
/// weight after a comma (`member-7,120`: 120 shares, in a place that asks questions); or, with `Columns`, a table
/// as the organisation keeps it (CSV, semicolons or TSV, under a header, any columns) of which one column is the
/// identity and perhaps one the weight.
public enum VoterList {
    /// The columns of a table that hold each voter's identity and weight, and the contact data the officer keeps
    /// (name, e-mail address, language, postal address, time zone; never written to the ledger): a header's name (compared
    /// without case and surrounding spaces) or a number from 1.
    public struct Columns: Sendable {
        public var identity: String
        public var weight: String?
        public var name: String?
        public var email: String?
        public var language: String?
        public var address: String?
        public var timeZone: String?

        public init(
            identity: String, weight: String? = nil, name: String? = nil, email: String? = nil, language: String? = nil,
            address: String? = nil, timeZone: String? = nil
        ) {
            self.identity = identity
            self.weight = weight
            self.name = name
            self.email = email
            self.language = language
            self.address = address
            self.timeZone = timeZone
        }

        /// Whether the table gives contact data (a contact book is kept).
        public var hasContact: Bool {
            name != nil || email != nil || language != nil || address != nil || timeZone != nil
        }
    }

    /// How to reach a member, as the organisation's list gives it: kept by the officer (`ContactBook`), never on
    /// the ledger.
    public struct Contact: Codable, Sendable, Equatable {
        public var name: String?
        public var email: String?
        /// A language tag, lowercased ("en", "ko").
        public var language: String?
        /// The postal address as one line of text, printed under the name in a letter's envelope window.
        public var address: String?
        /// The member's time zone (an IANA name, "Asia/Seoul"): their messages and letters give the voting windows
        /// in it rather than in the organisation's.
        public var timeZone: String?

        public init(
            name: String? = nil, email: String? = nil, language: String? = nil, address: String? = nil,
            timeZone: String? = nil
        ) {
            self.name = name
            self.email = email
            self.language = language
            self.address = address
            self.timeZone = timeZone
        }

        /// The contact of a row's fields (trimmed; an empty field gives nothing), or why it is refused: an e-mail
        /// field that is not one address, a time zone that is not an IANA name, a field over 254 bytes or with a
        /// control character.
        static func read(
            name: String?, email: String?, language: String?, address: String? = nil, timeZone: String? = nil
        ) -> Result<Contact?, Layout.Refusal> {
            func clean(_ field: String?, _ what: String) -> Result<String?, Layout.Refusal> {
                guard let text = field?.trimmingCharacters(in: .whitespaces), !text.isEmpty else {
                    return .success(nil)
                }
                guard text.utf8.count <= 254,
                    !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
                else {
                    return .failure(Layout.Refusal("the \(what) is longer than 254 bytes or holds a control character"))
                }
                return .success(text)
            }
            var contact: Contact
            switch (clean(name, "name"), clean(email, "e-mail address"), clean(language, "language")) {
            case (.success(let name), .success(let email), .success(let language)):
                contact = Contact(name: name, email: email, language: language?.lowercased())
            case (.failure(let refusal), _, _), (_, .failure(let refusal), _), (_, _, .failure(let refusal)):
                return .failure(refusal)
            }
            switch (clean(address, "postal address"), clean(timeZone, "time zone")) {
            case (.success(let address), .success(let timeZone)):
                contact.address = address
                contact.timeZone = timeZone
            case (.failure(let refusal), _), (_, .failure(let refusal)): return .failure(refusal)
            }
            if let zone = contact.timeZone, TimeZone(identifier: zone) == nil {
                return .failure(Layout.Refusal("\"\(zone)\" is not a time zone name (such as Europe/Berlin)"))
            }
            if let email = contact.email, !isAddress(email) {
                return .failure(Layout.Refusal("\"\(email)\" is not an e-mail address"))
            }
            return .success(contact == Contact() ? nil : contact)
        }

        /// Whether `text` is one plain address (local@domain, no space, angle bracket or second @): what an SMTP
        /// relay is given in RCPT TO.
        public static func isAddress(_ text: String) -> Bool {
            let parts = text.split(separator: "@", omittingEmptySubsequences: false)
            return parts.count == 2 && !parts[0].isEmpty && parts[1].contains(".") && !parts[1].hasPrefix(".")
                && !parts[1].hasSuffix(".")
                && !text.unicodeScalars.contains { $0.value <= 0x20 || "<>()[],;:\\\"".unicodeScalars.contains($0) }
        }
    }

    /// The column names a header line starts with (ASCII case and spaces, "-" and "_" ignored).
    private static let headerNames: Set<String> = [
        "identity", "identities", "voter", "voters", "voterid", "member", "members", "memberid", "id", "phone",
        "phonenumber", "mobile", "name", "email",
    ]

    /// Whether the first line of a list is a header (its first field names a column, such as "identity" or
    /// "Voter ID"): it is skipped with a note, never authorised. A member whose id is one of these words is
    /// listed on another line.
    public static func isHeader(_ firstLine: some StringProtocol) -> Bool {
        let field = firstLine.prefix { $0 != "," && $0 != ";" && $0 != "\t" }
        let word = String(field.lowercased().filter { !" -_\"'\u{FEFF}\r".contains($0) })
        return headerNames.contains(word)
    }
}

extension VoterList {
    /// A line's identity (trimmed) and the weight given after its last comma (1 if none).
    static func weighed(_ line: String) throws(Violation) -> (identity: String, weight: UInt64) {
        let trimmed = line.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let comma = trimmed.lastIndex(of: ",") else { return (trimmed, 1) }
        let weight = try weight(trimmed[trimmed.index(after: comma)...], where: "after the comma")
        return (trimmed[..<comma].trimmingCharacters(in: .whitespaces), weight)
    }

    /// The weight `text` gives (`place` says where it was read, for the refusal).
    static func weight(_ text: some StringProtocol, where place: String) throws(Violation) -> UInt64 {
        let given = text.trimmingCharacters(in: .whitespaces)
        guard !given.isEmpty, given.allSatisfy(\.isASCII), let weight = UInt64(given) else {
            throw .invalidWeight("the weight \(place) must be a whole number from 1 to \(Contract.maxWeight)")
        }
        return weight
    }
}

extension VoterList {
    /// Where a table's columns are, read from its header line.
    struct Layout {
        /// The field separator: a tab if the header holds one, else a semicolon if it holds one and no comma
        /// (a spreadsheet saved where the comma is the decimal mark), else a comma.
        let separator: Character
        let identity: Int
        let weight: Int?
        let name: Int?
        let email: Int?
        let language: Int?
        let address: Int?
        let timeZone: Int?

        /// The layout of `header` for `columns`; a usage error naming the columns the header has if one is not
        /// among them.
        init(header: String, columns: Columns) throws(VoteError) {
            separator =
                header.contains("\t") ? "\t" : header.contains(";") && !header.contains(",") ? ";" : ","
            let names = (VoterList.fields(header, separator: separator) ?? [header]).map {
                $0.filter { $0 != "\u{FEFF}" }.trimmingCharacters(in: .whitespaces)
            }
            func position(_ wanted: String) throws(VoteError) -> Int {
                let key = wanted.trimmingCharacters(in: .whitespaces).lowercased()
                if let number = Int(key), (1...names.count).contains(number) { return number - 1 }
                if let index = names.firstIndex(where: { $0.lowercased() == key }) { return index }
                throw VoteError(
                    .usage,
                    "the list has no column \"\(wanted)\" (its header names \(names.map { "\"\($0)\"" }.joined(separator: ", ")))"
                )
            }
            identity = try position(columns.identity)
            weight = try columns.weight.map(position)
            name = try columns.name.map(position)
            email = try columns.email.map(position)
            language = try columns.language.map(position)
            address = try columns.address.map(position)
            timeZone = try columns.timeZone.map(position)
        }

        /// What a row says: its identity, weight field and contact, or why it is refused; nil for a row whose every
        /// field is empty (a spreadsheet's blank row). An empty contact field is no contact data, not a refusal.
        func row(_ line: String) -> Result<(identity: String, weight: String?, contact: Contact?), Refusal>? {
            guard let fields = VoterList.fields(line, separator: separator) else {
                return .failure(Refusal("a quoted field is not closed on its line"))
            }
            if fields.allSatisfy({ $0.trimmingCharacters(in: .whitespaces).isEmpty }) { return nil }
            guard identity < fields.count else { return .failure(Refusal("the line has no column \(identity + 1)")) }
            if let weight, weight >= fields.count { return .failure(Refusal("the line has no column \(weight + 1)")) }
            let optional = { (column: Int?) in column.flatMap { $0 < fields.count ? fields[$0] : nil } }
            switch Contact.read(
                name: optional(name), email: optional(email), language: optional(language),
                address: optional(address), timeZone: optional(timeZone))
            {
            case .failure(let refusal): return .failure(refusal)
            case .success(let contact): return .success((fields[identity], weight.map { fields[$0] }, contact))
            }
        }

        struct Refusal: Error {
            let reason: String
            init(_ reason: String) { self.reason = reason }
        }
    }

    /// The fields of one CSV line (RFC 4180 quoting: a field in double quotes may hold the separator, and "" is
    /// a quote in it); nil if a quoted field is not closed on the line.
    public static func fields(_ line: String, separator: Character) -> [String]? {
        var fields: [String] = []
        var field = ""
        var quoted = false
        var iterator = line.makeIterator()
        var atStart = true
        while let character = iterator.next() {
            if quoted {
                if character == "\"" {
                    // A quote ends the quoted part unless another follows it.
                    var lookahead = iterator
                    if lookahead.next() == "\"" {
                        field.append("\"")
                        iterator = lookahead
                    } else {
                        quoted = false
                    }
                } else {
                    field.append(character)
                }
            } else if character == separator {
                fields.append(field)
                field = ""
                atStart = true
                continue
            } else if character == "\"" && field.allSatisfy(\.isWhitespace) && atStart {
                quoted = true
                field = ""
            } else {
                field.append(character)
            }
            atStart = atStart && character.isWhitespace
        }
        guard !quoted else { return nil }
        fields.append(field)
        return fields
    }
}

extension VoterList {
    /// `text` as one CSV field (RFC 4180): in double quotes, its quotes doubled, if it holds a comma, a quote, or
    /// a CR or LF; `prefix` goes inside the quotes before the text (and forces them).
    public static func field(_ text: String, prefix: String = "") -> String {
        let special = text.unicodeScalars.contains { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }
        guard special || !prefix.isEmpty else { return text }
        return "\"" + prefix + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

/// A voter of a list authorised by `VoterList.authorize`: the identity as listed and the voter's new token.
public struct IssuedToken: Sendable {
    /// The identity as the list gives it (trimmed); the ledger's tag keys its normalised form.
    public let identity: String
    public let token: VotingToken
    /// The contact data of the voter's row, if the table has contact columns and the row fills one.
    public var contact: VoterList.Contact? = nil
}

extension VoterList {
    /// Authorises every identity of `lines` in `place` with a new token each: the one bulk authorisation,
    /// which `vote voter authorize --from` and the voters route's CSV body both run. Blank lines are
    /// skipped, and so is a header as the first line (`skippedHeader` hears its number); every other line is
    /// normalised, tagged with the writer's voter secret and sent through `writer` in batches of
    /// `batchSize`, each one block (`BulkRun`). `rejected` hears of every refused line; `beforeWriting`
    /// sees each batch's accepted voters before its block is written (if it throws, nothing of the batch is
    /// recorded), `afterWriting` once it is durable. A failing batch stops the run with a `BulkStop`.
    public static func authorize(
        _ lines: inout LineReader, place: UInt32, writer: LedgerWriter, batchSize: Int, columns: Columns? = nil,
        skippedHeader: (_ line: Int) -> Void = { _ in },
        rejected: (BulkRejection) -> Void,
        beforeWriting: @escaping @Sendable ([IssuedToken]) throws -> Void = { _ in },
        afterWriting: ([IssuedToken]) async throws -> Void = { _ in },
        progress: (BulkTotals) -> Void = { _ in }
    ) async throws -> BulkTotals {
        let secret = writer.voterSecret
        var tokens: [VotingToken] = []  // drawn a batch at a time: one call to the random generator
        var firstLine = true
        var layout: Layout?  // a table's, once its header is read
        /// The voters of `entries` whose command was accepted.
        @Sendable func accepted(
            _ entries: [BulkEntry<IssuedToken>], _ results: [Result<EventReceipt, Violation>]
        ) -> [IssuedToken] {
            zip(entries, results).compactMap { entry, result in
                if case .success = result { entry.item } else { nil }
            }
        }
        return try await BulkRun<IssuedToken>(writer: writer, batchSize: batchSize).run(
            &lines,
            parse: { text in
                defer { firstLine = false }
                let listed: String
                let weight: UInt64
                var contact: Contact?
                do {
                    if let columns {
                        // A table: its first line is the header, which says where the columns are.
                        guard let layout else {
                            layout = try Layout(header: text, columns: columns)
                            return .skip
                        }
                        switch layout.row(text) {
                        case nil: return .blank
                        case .failure(let refusal): return .reject(refusal.reason)
                        case .success(let row):
                            listed = row.identity.trimmingCharacters(in: .whitespaces)
                            contact = row.contact
                            weight =
                                try row.weight.map { text throws(Violation) in
                                    try VoterList.weight(text, where: "in column \(layout.weight! + 1)")
                                } ?? 1
                        }
                    } else {
                        if firstLine, isHeader(text) { return .skip }
                        (listed, weight) = try weighed(text)
                    }
                    // The tag keys the normalised identity; the answer names the voter as listed.
                    let identity = try VoterIdentity.normalize(listed)
                    if tokens.isEmpty { tokens = try VotingToken.generate(count: batchSize).reversed() }
                    let token = tokens.removeLast()
                    let command = Command.authorizeVoter(
                        place: place, voterTag: try secret.tag(identity), tokenHash: token.hash, weight: weight)
                    return .entry(IssuedToken(identity: listed, token: token, contact: contact), command)
                } catch let violation as Violation {
                    return .violates(violation)
                }
            },
            rejected: rejected,
            skipped: skippedHeader,
            beforeWriting: { entries, results in try beforeWriting(accepted(entries, results)) },
            afterWriting: { entries, outcome in try await afterWriting(accepted(entries, outcome.results)) },
            progress: progress)
    }
}
