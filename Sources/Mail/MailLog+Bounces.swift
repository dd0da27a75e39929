import Foundation
public import VoteLedger

// MARK: - Saved mail

/// The messages an officer saved from their mailbox: an mbox file (messages after `From ` lines), a Maildir
/// directory (its `new/` and `cur/`), or single message files (`.eml`). Everything is read, and checked to be
/// UTF-8 and under the limits, before anything is recorded: bad input writes nothing.
public enum SavedMail {
    /// The largest file read.
    public static let maxFileBytes = 64 << 20
    /// The most read in one run, all files together.
    public static let maxTotalBytes = 256 << 20

    /// One message and where it came from (`FILE` or `FILE, message N`), for errors.
    public struct Message: Sendable {
        public var source: String
        public var text: String
    }

    /// Every message in `paths`, in order.
    public static func read(_ paths: [String]) throws(VoteError) -> [Message] {
        var messages: [Message] = []
        var total = 0
        for path in paths {
            var info = stat()
            guard stat(path, &info) == 0 else {
                throw VoteError(.refused, "\(path): \(VoteError.describe(errno: errno))")
            }
            var files = [path]
            if info.st_mode & S_IFMT == S_IFDIR {
                let subdirectories = ["new", "cur"].map { path + "/" + $0 }
                guard
                    subdirectories.allSatisfy({
                        var inner = stat()
                        return stat($0, &inner) == 0 && inner.st_mode & S_IFMT == S_IFDIR
                    })
                else { throw VoteError(.refused, "\(path) is a directory but not a Maildir (it has no new/ and cur/)") }
                files = []
                for subdirectory in subdirectories {
                    let names: [String]
                    do { names = try FileManager.default.contentsOfDirectory(atPath: subdirectory) } catch {
                        throw VoteError(.io, "cannot read the Maildir \(subdirectory)")
                    }
                    files += names.filter { !$0.hasPrefix(".") }.sorted().map { subdirectory + "/" + $0 }
                }
            }
            for file in files {
                let text = try readText(file, total: &total)
                let pieces = split(text)
                for (index, piece) in pieces.enumerated() {
                    messages.append(
                        Message(source: pieces.count == 1 ? file : "\(file), message \(index + 1)", text: piece))
                }
            }
        }
        return messages
    }

    /// `text` as its messages: an mbox (it starts with a `From ` line) split at each `From ` line that starts the
    /// file or follows an empty line, `>From ` unquoted (mboxrd); else one message.
    public static func split(_ text: String) -> [String] {
        let lines = BounceParser.lines(text)
        guard lines.first?.hasPrefix("From ") == true else { return [text] }
        var messages: [[String]] = []
        for (index, line) in lines.enumerated() {
            if line.hasPrefix("From ") && (index == 0 || lines[index - 1].isEmpty) {
                messages.append([])
                continue
            }
            let unquoted = line.drop { $0 == ">" }
            messages[messages.count - 1].append(
                unquoted.hasPrefix("From ") && unquoted.count < line.count ? String(line.dropFirst()) : line)
        }
        return messages.map { $0.joined(separator: "\n") + "\n" }
    }

    private static func readText(_ path: String, total: inout Int) throws(VoteError) -> String {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw VoteError(.refused, "\(path) is not a regular file")
        }
        let size = Int(info.st_size)
        guard size <= maxFileBytes else {
            throw VoteError(.refused, "\(path) is over \(maxFileBytes >> 20) MB: save fewer messages in it")
        }
        total += size
        guard total <= maxTotalBytes else {
            throw VoteError(.refused, "the files are over \(maxTotalBytes >> 20) MB together: give fewer at a time")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw VoteError(.io, "cannot read \(path)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw VoteError(.refused, "\(path) is not UTF-8 text (save the messages as they are, in mbox or .eml)")
        }
        return text
    }
}

// MARK: - Recording bounces

/// What `MailLog.recordBounces` did.
public struct BounceTotals: Encodable, Sendable {
    /// Messages read.
    public var messages = 0
    /// Delivery status notifications among them.
    public var reports = 0
    /// Messages that are not DSNs (another MTA's plain-text bounce, an auto-reply): skipped.
    public var notReports = 0
    /// Members whose message is now logged as bounced.
    public var bounced = 0
    /// Failures already logged (the same report read before, or the message already failed), or of a message a
    /// later one to the same member replaced.
    public var alreadyRecorded = 0
    /// Failed addresses no member of the contact book has.
    public var notInContactBook = 0
    /// Failures of a message the log does not hold (another message from the same address).
    public var notInLog = 0
    /// Recipients reported delayed, delivered, relayed or expanded: not a failure, nothing recorded.
    public var notFailed = 0

    public init() {}

    enum CodingKeys: String, CodingKey {
        case messages, reports, bounced
        case notReports = "not_reports"
        case alreadyRecorded = "already_recorded"
        case notInContactBook = "not_in_contact_book"
        case notInLog = "not_in_log"
        case notFailed = "not_failed"
    }
}

extension MailLog {
    /// Logs each failed recipient of `reports` as a bounce of the message it names: by its Message-ID if the log
    /// recorded it, else the latest message to each member whose address it is (members of one household may
    /// share one; the domain compared without case, as RFC 5321 allows; the local part as written first, then
    /// without case). Recorded once: a report read again finds the bounce already logged.
    public func recordBounces(_ reports: [DeliveryReport], members: [ContactBook.Member]) throws -> BounceTotals {
        let unlock = try lock()
        defer { unlock() }
        var records = try all()
        var exact: [String: [String]] = [:]
        var folded: [String: [String]] = [:]
        for member in members {
            guard let email = member.contact.email else { continue }
            exact[MailLog.canonical(email), default: []].append(member.identity)
            folded[email.lowercased(), default: []].append(member.identity)
        }
        func identities(of address: String) -> [String] {
            exact[MailLog.canonical(address)] ?? folded[address.lowercased()] ?? []
        }
        let messageStatuses: Set<Status> = [.sent, .refused, .deferred, .failed, .bounced]
        var totals = BounceTotals()
        for report in reports {
            for recipient in report.recipients {
                guard recipient.action == .failed else {
                    totals.notFailed += 1
                    continue
                }
                var bounced: [Record] = []
                if let id = report.originalMessageID,
                    let sent = records.last(where: { $0.messageID == id && $0.status == .sent })
                {
                    bounced = [sent]
                } else {
                    var members = identities(of: recipient.finalRecipient)
                    if members.isEmpty, let original = recipient.originalRecipient {
                        members = identities(of: original)
                    }
                    if members.isEmpty { totals.notInContactBook += 1 }
                    for member in members {
                        let latest = records.last { $0.identity == member && messageStatuses.contains($0.status) }
                        // The log names its messages: a report of another one is not of ours.
                        guard let latest, report.originalMessageID == nil || latest.messageID == nil else {
                            totals.notInLog += 1
                            continue
                        }
                        if latest.status == .sent { bounced.append(latest) } else { totals.alreadyRecorded += 1 }
                    }
                }
                for message in bounced {
                    // Only the member's latest message of its kind is marked: a later one replaced it.
                    let latest = records.last {
                        $0.identity == message.identity && $0.kind == message.kind
                            && messageStatuses.contains($0.status)
                    }
                    guard let latest, latest.status == .sent, latest.messageID == message.messageID,
                        latest.mailing == message.mailing, latest.at == message.at
                    else {
                        totals.alreadyRecorded += 1
                        continue
                    }
                    var record = message
                    record.status = .bounced
                    record.detail = MailLog.detail(recipient)
                    record.at = Date()
                    try append(record)
                    records.append(record)
                    totals.bounced += 1
                }
            }
        }
        return totals
    }

    /// An address with its domain lowercased: how two spellings of one mailbox compare.
    static func canonical(_ address: String) -> String {
        guard let at = address.lastIndex(of: "@") else { return address }
        return String(address[..<at]) + address[at...].lowercased()
    }

    /// `5.1.1 550 5.1.1 <ada@example.org>: User unknown`: the status and what the server said, as one line of
    /// printable text of at most 300 characters.
    static func detail(_ recipient: DeliveryStatus) -> String {
        let text = [recipient.status ?? "5.0.0", recipient.diagnostic ?? "failed"].joined(separator: " ")
        let printable = String(
            String.UnicodeScalarView(
                text.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : $0 }))
        return String(printable.split(separator: " ").joined(separator: " ").prefix(300))
    }
}
