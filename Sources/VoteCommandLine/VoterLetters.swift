public import VoteLedger

/// A voter's link to the booth: the web app's address with the place and the token in the fragment
/// (`BASE/#/booth/PLACE?t=TOKEN`). A browser never sends the fragment to the server, so the token is in no request
/// line and no access log; the booth fills it in and removes it from the address bar and the history.
public enum VotingLink {
    /// Why a base URL cannot make links.
    public struct BadBase: Error, Sendable, CustomStringConvertible {
        public var description: String {
            "the base URL must start with https:// or http:// and hold no spaces, quotes, <, > or #"
        }
    }

    /// `base` as links start (no trailing "/"), checked: an http(s) URL that can go into HTML and a QR code as it is.
    public static func base(_ base: String) throws(BadBase) -> String {
        let lower = base.lowercased()
        guard lower.hasPrefix("https://") || lower.hasPrefix("http://"), base.utf8.count <= 1000,
            base.unicodeScalars.allSatisfy({
                $0.value > 0x20 && $0.value < 0x7F && !"\"'<>#`\\".unicodeScalars.contains($0)
            })
        else { throw BadBase() }
        var trimmed = Substring(base)
        while trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard trimmed.count > (lower.hasPrefix("https://") ? 8 : 7) else { throw BadBase() }
        return String(trimmed)
    }

    /// The link of `token` for `place`, from a base checked by `base(_:)`.
    public static func link(base: String, place: UInt32, token: VotingToken) -> String {
        "\(base)/#/booth/\(place)?t=\(token.compact)"
    }
}

/// Printable voter letters: one A4 page per voter of a tokens file (`vote voter letters`), for the browser's print.
public enum VoterLetters {
    /// A line of a tokens file that is not "identity,token" or "identity,token,link" with a well-formed token.
    public struct BadLine: Error, Sendable, CustomStringConvertible {
        public let line: Int
        public var description: String {
            "line \(line) of the tokens file is not \"identity,token\" with a well-formed token"
        }
    }

    /// The voters of a tokens file as `vote voter authorize --tokens-out` writes it, or the web console's download
    /// (its "voter,token" header is skipped, as are blank lines).
    public static func read(tokensFile text: String) throws(BadLine) -> [(identity: String, token: VotingToken)] {
        var voters: [(identity: String, token: VotingToken)] = []
        var first = true
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            // An identity holding a comma or a quote is quoted, as CSV quotes it (`VoterList.field`).
            guard let fields = VoterList.fields(String(line), separator: ",") else { throw BadLine(line: index + 1) }
            if fields.count == 1, fields[0].allSatisfy({ $0 == " " || $0 == "\r" }) { continue }
            defer { first = false }
            if first, VoterList.isHeader(line) { continue }
            guard (2...3).contains(fields.count), !fields[0].isEmpty,
                let token = VotingToken(typed: fields[1].filter { $0 != "\r" })
            else { throw BadLine(line: index + 1) }
            voters.append((String(fields[0]), token))
        }
        return voters
    }

    /// The HTML document: a page per voter with the election's and place's names, the voter's identity, the token
    /// grouped for typing, the link, and the link as a QR code (SVG). In an `anonymous` place the token is an
    /// issuance code, and the letter calls it so.
    public static func html(
        election: String, place: UInt32, placeName: String, base: String,
        voters: [(identity: String, token: VotingToken)], anonymous: Bool = false
    ) throws -> String {
        let what = anonymous ? "issuance code" : "token"
        let once =
            anonymous
            ? "The code buys one anonymous ballot, which no one, the organisers included, can tie to you."
            : "The token votes once."
        var pages = ""
        for voter in voters {
            let link = VotingLink.link(base: base, place: place, token: voter.token)
            let code = try QRCode(bytes: Array(link.utf8))
            pages += """
                <section class="letter">
                <p class="election">\(escape(election))</p>
                <h1>\(escape(placeName))</h1>
                <p>For <strong class="identity">\(escape(voter.identity))</strong></p>
                <p>Your \(anonymous ? "issuance code" : "voting token") (33 letters and digits; dashes, spaces and \
                case do not matter):</p>
                <p class="token">\(voter.token.display)</p>
                <p>Scan the code or open the link to vote; the \(what) is filled in for you.</p>
                <div class="qr">\(code.svg(width: "60mm"))</div>
                <p class="link">\(escape(link))</p>
                <p class="note">Keep this letter private: anyone with the \(what) can vote in your place. \
                \(once)</p>
                </section>

                """
        }
        return """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <title>\(escape(election)): voter letters</title>
            <style>
            @page { size: A4; margin: 20mm; }
            body { font-family: sans-serif; margin: 0; color: #000; }
            .letter { break-after: page; page-break-after: always; min-height: 250mm; }
            @media screen { .letter { padding: 20mm; border-bottom: 1px dashed #888; } }
            .letter:last-child { break-after: auto; page-break-after: auto; }
            .election { font-size: 11pt; color: #444; }
            h1 { font-size: 20pt; }
            .token { font-family: monospace; font-size: 18pt; letter-spacing: 0.05em; white-space: nowrap; }
            .link { font-family: monospace; font-size: 9pt; overflow-wrap: anywhere; }
            .note { font-size: 10pt; color: #444; }
            </style>
            </head>
            <body>
            \(pages)</body>
            </html>

            """
    }

    /// Text as HTML content or attribute value.
    static func escape(_ text: String) -> String {
        var out = ""
        for char in text {
            switch char {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(char)
            }
        }
        return out
    }
}
