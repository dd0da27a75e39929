import ArgumentParser
import Election
import Foundation
import Ledger
import Mail
import OutputFiles
import VoteCommandLine
import VoteLedger

extension VoterCommand {
    /// `vote voter letters`: printable letters with the voting links as QR codes, one per member from the contact
    /// book, or one page per voter of a tokens file.
    struct Letters: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "letters", abstract: "Write printable letters to members (HTML, A4; optionally PDF).",
            discussion: """
                Reads the contact book (kept by `vote voter authorize --from LIST --identity-column C`, with \
                --name-column, --language-column and --address-column) and writes one letter per member listing \
                every place they may vote in that has not closed and where they have not voted: its window in \
                --time-zone, what is on its ballot, and their own link (BASE/#/booth/PLACE?t=TOKEN) as text and as \
                a QR code; whom to ask for help; and the member's name and postal address where a DIN 5008 window \
                envelope (C5/6 or DL, window on the left) shows them. English, or Korean for a member whose \
                language is ko. With --tokens FILE --place P instead: one page per voter of a tokens file (an \
                --tokens-out file), English, with no address. Open the HTML in a browser and print it, or give \
                --pdf to have headless Chromium print it. Every file is created new, 0600: it holds the tokens.
                """)

        @OptionGroup var ledger: LedgerOptions
        @Option(
            help:
                "Place id (repeat): only these places (default: every place in the contact book); with --tokens, the one place of the tokens."
        )
        var place: [UInt32] = []
        @Option(
            help: "Tokens file (\"identity,token\" lines, as --tokens-out writes them) instead of the contact book.")
        var tokens: String?
        @Option(help: "The web app's address, as voters reach it (https://…).") var baseURL: String
        @Option(help: "Whom members ask for help (an e-mail address or a phone number), printed in every letter.")
        var helpContact: String?
        @Option(
            help:
                "The time zone the windows are given in (an IANA name, e.g. Europe/Paris; default UTC), for members without one of their own (authorize --time-zone-column)."
        )
        var timeZone: String?
        @Option(help: "Where to write the letters (HTML; must not exist).") var out: String
        @Option(help: "Also print them to this PDF with headless Chromium (must not exist).") var pdf: String?

        func validate() throws {
            do { _ = try VotingLink.base(baseURL) } catch { throw ValidationError(error.description) }
            if tokens != nil {
                guard place.count == 1 else { throw ValidationError("--tokens goes with one --place") }
                if helpContact != nil || timeZone != nil {
                    throw ValidationError("--help-contact and --time-zone go with the contact book (without --tokens)")
                }
                return
            }
            guard let helpContact else {
                throw ValidationError("give --help-contact (or --tokens FILE --place P for the old pages)")
            }
            guard !helpContact.trimmingCharacters(in: .whitespaces).isEmpty, helpContact.utf8.count <= 200 else {
                throw ValidationError("--help-contact must be 1-200 bytes")
            }
            if let timeZone, TimeZone(identifier: timeZone) == nil {
                throw ValidationError(
                    "--time-zone \(timeZone) is not a time zone name (such as Europe/Paris or Asia/Seoul)")
            }
        }

        func run() throws {
            let base = try VotingLink.base(baseURL)
            let chromium = try pdf.map { _ in try Self.chromium() }
            let (html, summary, note) = try tokens.map { try fromTokens($0, base: base) } ?? fromContactBook(base: base)
            // Both files are claimed first, so a refusal leaves neither behind.
            let file = try OutputFile(creating: out, what: "letters file")
            let pdfFile: OutputFile?
            do { pdfFile = try pdf.map { try OutputFile(creating: $0, what: "PDF file") } } catch {
                file.remove()
                throw error
            }
            do {
                try file.appendDurably(html)
                // Kept open until the PDF is printed: `remove` deletes only the file this run claimed.
                if let pdfFile, let chromium { try Self.print(html: out, to: pdfFile, chromium: chromium) }
                file.close()
            } catch {
                file.remove()
                pdfFile?.remove()
                throw error
            }
            if let note { Output.note(note) }
            try Output.line("wrote \(summary) to \(out)" + (pdf.map { " and \($0)" } ?? ""))
        }

        // MARK: - From the contact book

        /// One letter per member of the contact book with a place to vote in, what was written, and a note on
        /// those without a postal address.
        private func fromContactBook(base: String) throws -> (String, String, String?) {
            let reader = try ledger.reader()
            let view = try ledger.view(of: reader)
            let (book, _) = try officerRecords(ledger, reader)
            let members = try book.members()
            guard !members.isEmpty else {
                throw VoteError(
                    .refused,
                    "the contact book is empty: authorise the members from their list with --identity-column first (vote voter authorize --help)"
                )
            }
            let now = Clock.now()
            var letters: [(member: ContactBook.Member, places: [LetterPlace])] = []
            for member in members {
                let places = try placesToVoteIn(
                    member, only: place, view: view, source: reader, derived: ledger.derived, now: now
                ).map {
                    (state, token) in
                    LetterPlace(
                        place: MailPlace(state.place), token: token,
                        questions: state.place.ballot?.questions ?? [],
                        candidates: state.place.ballot == nil
                            ? state.candidates.filter { !$0.withdrawn }.map(\.name) : [])
                }
                if !places.isEmpty { letters.append((member, places)) }
            }
            guard !letters.isEmpty else {
                throw VoteError(.refused, "no member of the contact book has a place to vote in that has not closed")
            }
            let withoutAddress = letters.filter { $0.member.contact.address == nil }.count
            let note =
                withoutAddress == 0
                ? nil
                : "\(Output.count(withoutAddress, "member")) \(withoutAddress == 1 ? "has" : "have") no postal address (authorize --address-column): the envelope window shows the name only"
            let writer = MemberLetters(
                election: reader.genesis.name, base: base, help: helpContact ?? "",
                timeZone: TimeZone(identifier: timeZone ?? "UTC")!)
            let html = try writer.html(letters) { link in try QRCode(bytes: Array(link.utf8)).svg(width: "32mm") }
            return (html, Output.count(letters.count, "letter"), note)
        }

        // MARK: - From a tokens file

        /// One page per voter of a tokens file for one place.
        private func fromTokens(_ tokens: String, base: String) throws -> (String, String, String?) {
            let place = place[0]
            let text: String
            do { text = try String(contentsOfFile: tokens, encoding: .utf8) } catch {
                throw VoteError(.refused, "cannot read the tokens file \(tokens)")
            }
            let voters: [(identity: String, token: VotingToken)]
            do { voters = try VoterLetters.read(tokensFile: text) } catch {
                throw VoteError(.refused, error.description)
            }
            let view = try ledger.view()
            let placed = try view.place(place).place
            let html = try VoterLetters.html(
                election: view.genesis.name, place: place, placeName: placed.name, base: base, voters: voters,
                anonymous: placed.isAnonymous)
            return (html, "\(voters.count) voter letters for place \(place)", nil)
        }

        // MARK: - PDF

        /// Headless Chromium: $CHROMIUM, else chromium or chromium-browser on the PATH, as the web tests find it.
        static func chromium() throws -> String {
            let environment = ProcessInfo.processInfo.environment
            if let path = environment["CHROMIUM"], FileManager.default.isExecutableFile(atPath: path) { return path }
            for directory in (environment["PATH"] ?? "/usr/bin").split(separator: ":") {
                for name in ["chromium", "chromium-browser"]
                where FileManager.default.isExecutableFile(atPath: "\(directory)/\(name)") {
                    return "\(directory)/\(name)"
                }
            }
            throw VoteError(
                .refused,
                "--pdf needs headless Chromium, found neither $CHROMIUM nor chromium on the PATH (apt-get install chromium); or print the HTML from a browser"
            )
        }

        /// Prints the HTML file at `html` into `file` (created new, 0600). Chromium writes into a private directory
        /// of its own (with a throwaway profile); the bytes are then copied into the file.
        static func print(html: String, to file: OutputFile, chromium: String) throws {
            let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("vote-letters-\(UUID())").path
            try FileManager.default.createDirectory(
                atPath: scratch, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
            defer { try? FileManager.default.removeItem(atPath: scratch) }
            let absolute = URL(fileURLWithPath: html).standardizedFileURL
            let process = Process()
            process.executableURL = URL(fileURLWithPath: chromium)
            process.arguments = [
                "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=\(scratch)/profile",
                "--print-to-pdf=\(scratch)/letters.pdf", "--no-pdf-header-footer", absolute.absoluteString,
            ]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            guard process.terminationStatus == 0,
                let bytes = FileManager.default.contents(atPath: scratch + "/letters.pdf"),
                bytes.starts(with: Array("%PDF".utf8))
            else { throw VoteError(.io, "Chromium did not print the letters to PDF (\(chromium))") }
            try file.appendDurably(bytes: Array(bytes))
            file.close()
        }
    }
}
