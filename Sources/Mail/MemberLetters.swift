public import Ballots
public import Foundation
public import VoteLedger

/// A place as a letter shows it: the place as a message names it, the member's token, and what its ballot
/// offers as the ledger states it.
public struct LetterPlace: Sendable {
    public var place: MailPlace
    public var token: VotingToken
    /// The questions of a place voted on with a ballot; empty in a candidates place.
    public var questions: [Question]
    /// The candidates standing (not withdrawn), in a candidates place.
    public var candidates: [String]

    public init(place: MailPlace, token: VotingToken, questions: [Question], candidates: [String]) {
        self.place = place
        self.token = token
        self.questions = questions
        self.candidates = candidates
    }
}

/// Printed letters from the contact book (`vote voter letters` without a tokens file): one letter per member, in
/// the member's language, listing every place they may vote in with its window in the organisation's time zone,
/// what is on its ballot, and their own link as text and as a QR code; the help contact; and the member's name
/// and postal address where a DIN 5008 (form B) C5/6 or DL window envelope shows them, so the letter goes in the
/// envelope as it is printed.
public struct MemberLetters {
    public var election: String
    /// The web app's address as voters reach it (checked by `VotingLink.base`).
    public var base: String
    public var help: String
    public var timeZone: TimeZone

    public init(election: String, base: String, help: String, timeZone: TimeZone) {
        self.election = election
        self.base = base
        self.help = help
        self.timeZone = timeZone
    }

    /// The HTML document of one A4 letter per member (a letter with many places runs on to a next page);
    /// `qrCode` draws a link as an SVG QR code.
    public func html(
        _ letters: [(member: ContactBook.Member, places: [LetterPlace])], qrCode: (String) throws -> String
    ) throws -> String {
        var pages = ""
        for (member, places) in letters {
            pages += try letter(member, places, qrCode: qrCode)
        }
        return """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <title>\(escape(election)): letters to members</title>
            <style>
            @page { size: A4; margin: 0; }
            body { margin: 0; color: #111; font: 10.5pt/1.4 "Noto Sans", "DejaVu Sans", "NanumGothic", sans-serif; }
            .letter { position: relative; width: 210mm; min-height: 297mm; box-sizing: border-box;
              padding: 98mm 20mm 18mm 25mm; break-after: page; page-break-after: always; }
            .letter:last-child { break-after: auto; page-break-after: auto; }
            @media screen { body { background: #d8d8d8; } .letter { background: #fff; margin: 0 auto 6mm; } }
            .head { position: absolute; left: 25mm; right: 20mm; top: 14mm; font-size: 15pt; font-weight: 600;
              border-bottom: 0.6mm solid #2a5d8f; padding-bottom: 2mm; color: #2a5d8f; }
            .window { position: absolute; left: 20mm; top: 45mm; width: 85mm; height: 45mm; box-sizing: border-box;
              padding: 4mm 5mm 0 5mm; overflow: hidden; }
            .return { font-size: 7pt; color: #555; border-bottom: 0.2mm solid #999; padding-bottom: 0.5mm;
              margin-bottom: 3mm; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
            .recipient { font-size: 11pt; line-height: 1.35; }
            .recipient .name { font-weight: 600; }
            .info { position: absolute; left: 125mm; right: 20mm; top: 50mm; font-size: 9pt; color: #333; }
            h1 { font-size: 14pt; margin: 0 0 3mm; }
            .place { display: flex; gap: 6mm; border-top: 0.3mm solid #bbb; padding: 3.5mm 0; break-inside: avoid;
              page-break-inside: avoid; }
            .place .text { flex: 1; min-width: 0; }
            .place h2 { font-size: 12.5pt; margin: 0 0 1mm; }
            .place p, .place ul { margin: 0 0 1.5mm; }
            .place ul { padding-left: 5mm; }
            .when { font-weight: 600; }
            .anonymous { font-style: italic; }
            .rule { font-size: 9pt; color: #333; }
            .qr { flex: none; width: 34mm; text-align: center; }
            .link { font-family: "DejaVu Sans Mono", monospace; font-size: 7pt; overflow-wrap: anywhere; color: #333; }
            .typed { font-size: 8.5pt; color: #333; }
            .token { font-family: "DejaVu Sans Mono", monospace; font-size: 9pt; white-space: nowrap; color: #111; }
            .closing { border-top: 0.3mm solid #bbb; padding-top: 3mm; }
            .closing p { margin: 0 0 1.5mm; }
            </style>
            </head>
            <body>
            \(pages)</body>
            </html>

            """
    }

    /// One member's letter.
    private func letter(
        _ member: ContactBook.Member, _ places: [LetterPlace], qrCode: (String) throws -> String
    ) throws -> String {
        let words = MemberWords(member.contact.language)
        let zone = MemberWords.zone(of: member, else: timeZone)
        let greeting = member.contact.name.map { words.dear($0) } ?? words.dearMember
        var recipient = "<div class=\"name\">\(escape(member.contact.name ?? member.identity))</div>"
        if let address = member.contact.address { recipient += "<div class=\"address\">\(escape(address))</div>" }
        var body = ""
        for entry in places {
            let place = entry.place
            // As `VotingLink.link` makes it: the token after "#", so it never reaches a server's log.
            let link = "\(base)/#/booth/\(place.id)?t=\(entry.token.compact)"
            let window = words.window(place, in: zone)
            var ballot = ""
            if !entry.questions.isEmpty {
                ballot += "<p>\(escape(words.questions)):</p><ul>"
                for question in entry.questions {
                    let options = if case .yesNo = question.method { words.yesNoAbstain } else { question.options }
                    ballot +=
                        "<li><strong>\(escape(question.title))</strong>"
                        + (question.description.isEmpty ? "" : " — \(escape(question.description))")
                        + "<br>\(options.map(escape).joined(separator: " · "))"
                        + "<br><span class=\"rule\">\(escape(words.rule(question)))</span></li>"
                }
                ballot += "</ul>"
            } else if !entry.candidates.isEmpty {
                ballot +=
                    "<p>\(escape(words.candidates)): \(entry.candidates.map(escape).joined(separator: " · "))</p>"
            }
            body += """
                <div class="place">
                <div class="text">
                <h2>\(escape(place.name))</h2>
                <p class="when">\(escape(window))</p>
                \(ballot)\(place.anonymous ? "<p class=\"anonymous\">\(escape(words.anonymous))</p>" : "")
                <p class="typed">\(escape(words.typed(anonymous: place.anonymous)))<br>\
                <span class="token">\(entry.token.display)</span></p>
                </div>
                <div class="qr">\(try qrCode(link))<div class="link">\(escape(link))</div></div>
                </div>

                """
        }
        return """
            <section class="letter" lang="\(words.language)">
            <div class="head">\(escape(election))</div>
            <div class="window"><div class="return">\(escape(election))</div>\
            <div class="recipient">\(recipient)</div></div>
            <div class="info">\(escape(words.help(help)))</div>
            <h1>\(escape(words.letterTitle(election)))</h1>
            <p>\(escape(greeting))</p>
            <p>\(escape(words.letterIntro))</p>
            \(body)<div class="closing"><p>\(escape(words.keepLetter))</p><p>\(escape(words.help(help)))</p></div>
            </section>

            """
    }

}
