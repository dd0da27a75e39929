import ArgumentParser
import Mail
import VoteCommandLine
import VoteLedger

extension VoterCommand {
    /// `vote voter bounces`: the bounces that came back after the relay accepted a message, into the delivery log.
    struct Bounces: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "bounces", abstract: "Log the members whose message bounced after the relay accepted it.",
            discussion: """
                A relay that accepted a message may still fail to deliver it; the delivery status notification \
                (RFC 3464) comes back to the --from address of `vote voter mail`. Save those messages from that \
                mailbox (an mbox file, a Maildir directory, or .eml files) and give them here: each recipient a \
                report says failed is matched to a member (by the message's Message-ID if the log has it, else by \
                the e-mail address in the contact book) and their message logged as bounced, so `vote voter \
                mail-log` shows it and `vote voter mail --failed-only` mails them again. Delayed notices record \
                nothing; bounces that are not delivery status notifications are counted and skipped. Reading the \
                same bounce again records nothing new. Files must be UTF-8, each at most 64 MB.
                """)

        @OptionGroup var ledger: LedgerOptions
        @Argument(help: "mbox files, Maildir directories or single message (.eml) files holding the bounces.")
        var files: [String]
        @OptionGroup var output: JSONOption

        func validate() throws {
            guard !files.isEmpty else { throw ValidationError("give the files or Maildir directories to read") }
        }

        func run() throws {
            // Everything is read and parsed before the log is touched: bad input writes nothing.
            let messages = try SavedMail.read(files)
            var reports: [DeliveryReport] = []
            var notReports = 0
            for message in messages {
                let report: DeliveryReport?
                do { report = try BounceParser.report(in: message.text) } catch {
                    throw VoteError(error.reason, "\(message.source): \(error.message)")
                }
                if let report { reports.append(report) } else { notReports += 1 }
            }
            let (book, log) = try officerRecords(ledger, try ledger.reader())
            var totals = try log.recordBounces(reports, members: try book.members())
            totals.messages = messages.count
            totals.reports = reports.count
            totals.notReports = notReports
            if output.json { return try Output.json(totals) }
            try Output.line(
                "\(Output.count(totals.reports, "delivery report")) read: \(Output.count(totals.bounced, "member")) marked bounced, \(totals.alreadyRecorded) already recorded, \(Output.count(totals.notInContactBook, "address", "addresses")) not in the contact book, \(totals.notInLog) not of a message in the log, \(totals.notFailed) delayed or delivered; \(Output.count(totals.notReports, "message")) not a delivery report skipped"
            )
            if totals.bounced > 0 {
                Output.note("vote voter mail-log lists them; send them again with vote voter mail --failed-only")
            }
        }
    }
}
