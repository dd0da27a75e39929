import Foundation
import Testing

/// `vote voter letters` from the contact book: one letter per member listing every place they may vote in, with
/// the windows in the organisation's time zone, what is on each ballot, the member's name and postal address for
/// a window envelope, in the member's language; QR codes a decoder (`zbarimg`) reads back as the links; and the
/// PDF headless Chromium prints.
@Suite struct LettersCLITests {
    static let chromium = ProcessInfo.processInfo.environment["CHROMIUM"] ?? "/usr/bin/chromium"

    @Test func aMemberWithTwoPlacesGetsOneLetterInTheirLanguage() throws {
        let election = try TestElection()
        let boardOpens = try election.place(name: "Board 2027", registration: 60, voting: 86_400)
        try election.ok(["candidate", "register", "--place", "1", "--name", "Ada Park"])
        let motion = #"""
            {"questions": [{"title": "Merge with the east wing?", "method": "yes-no", "threshold": "2/3 of yes-and-no",
                            "quorum": "1/4"}]}
            """#
        _ = try election.place(
            name: "AGM & motions", registration: 60, voting: 86_400,
            extra: ["--questions", election.write("m.json", motion)])
        let list = election.write(
            "members.csv",
            """
            Name,Unit,Lang,Address,Zone
            "Núñez, José",2G-001,en,"12 Harbour Road, Flat 3, Busan 48058",
            김민수,2G-002,ko,부산광역시 해운대구 센텀중앙로 79,
            Only Board,2G-003,,,America/New_York
            Wrong Zone,2G-009,,,Mars/Olympus

            """)
        for place in ["1", "2"] {
            let from = place == "1" ? list : election.write("agm.csv", "Unit,Name\n2G-001,\n2G-002,\n")
            let authorized = try election.vote(
                [
                    "voter", "authorize", "--place", place, "--from", from, "--identity-column", "Unit",
                    "--name-column", "Name", "--tokens-out", election.root + "/tokens-\(place).csv",
                ]
                    + (place == "1"
                        ? ["--language-column", "Lang", "--address-column", "Address", "--time-zone-column", "Zone"]
                        : []))
            // A time zone that is none refuses its line only (the run says so and ends with status 1).
            #expect(
                place == "1"
                    ? authorized.status == 1
                        && authorized.err.contains("line 5: \"Mars/Olympus\" is not a time zone name")
                    : authorized.status == 0,
                "\(authorized.err)")
        }
        func link(_ place: Int, _ unit: String) throws -> String {
            let lines = try String(contentsOfFile: election.root + "/tokens-\(place).csv", encoding: .utf8)
                .split(separator: "\n")
            let line = try #require(lines.first { $0.hasPrefix(unit + ",") })
            SecretsLog.record(String(line.split(separator: ",")[1]))
            return "https://vote.example.org/#/booth/\(place)?t="
                + line.split(separator: ",")[1].replacingOccurrences(of: "-", with: "")
        }

        let (jose1, jose2) = (try link(1, "2G-001"), try link(2, "2G-001"))
        let (minsu1, minsu2) = (try link(1, "2G-002"), try link(2, "2G-002"))
        let letters = election.root + "/letters.html"
        let pdf = election.root + "/letters.pdf"
        let hasChromium = FileManager.default.isExecutableFile(atPath: Self.chromium)
        let wrote = try election.vote(
            [
                "voter", "letters", "--base-url", "https://vote.example.org/", "--help-contact",
                "secretary@example.org", "--time-zone", "Asia/Seoul", "--out", letters,
            ] + (hasChromium ? ["--pdf", pdf] : []))
        #expect(wrote.status == 0, "\(wrote.err)")
        #expect(wrote.out == "wrote 3 letters to \(letters)\(hasChromium ? " and \(pdf)" : "")\n", "\(wrote.out)")
        #expect(wrote.err.contains("1 member has no postal address"), "\(wrote.err)")
        let attributes = try FileManager.default.attributesOfItem(atPath: letters)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let html = try String(contentsOfFile: letters, encoding: .utf8)
        let sections = Array(html.components(separatedBy: "<section class=\"letter\"")[1...])
        try #require(sections.count == 3)

        // José: one letter, both places, the window in Seoul's time, the candidate and the question, the envelope.
        let jose = sections[0]
        let seoul = DateFormatter()
        seoul.locale = Locale(identifier: "en_GB")
        seoul.timeZone = TimeZone(identifier: "Asia/Seoul")
        seoul.dateStyle = .full
        seoul.timeStyle = .short
        #expect(jose.hasPrefix(" lang=\"en\""))
        #expect(jose.contains("Voting opens \(seoul.string(from: boardOpens)) and closes"), "\(jose)")
        #expect(jose.contains("(Asia/Seoul time)") && jose.contains("Questions? Ask secretary@example.org."))
        #expect(jose.contains("<h2>Board 2027</h2>") && jose.contains("<h2>AGM &amp; motions</h2>"))
        #expect(jose.contains("Candidates: Ada Park") && jose.contains("Merge with the east wing?"))
        #expect(jose.contains("yes · no · abstain") && jose.contains("Dear Núñez, José,"))
        #expect(
            jose.contains(
                "Answer yes, no or abstain. It passes if at least 2/3 of those answering yes or no answer yes. Quorum: at least 1/4 of the authorised voters must cast a ballot."
            ), "\(jose)")
        #expect(
            jose.contains(
                "<div class=\"name\">Núñez, José</div><div class=\"address\">12 Harbour Road, Flat 3, Busan 48058</div>"
            ))
        #expect(jose.contains(jose1) && jose.contains(jose2))
        #expect(!jose.contains(minsu1))

        // 김민수: the same in Korean.
        let minsu = sections[1]
        #expect(minsu.hasPrefix(" lang=\"ko\"") && minsu.contains("김민수 님께,") && minsu.contains("투표 기간:"))
        #expect(
            minsu.contains("찬성 · 반대 · 기권") && minsu.contains("찬성과 반대 중 찬성이 2/3 이상이면 가결됩니다.")
                && minsu.contains("정족수: 등록된 유권자의 1/4 이상이 투표해야 합니다.") && minsu.contains("후보: Ada Park")
                && minsu.contains("문의: secretary@example.org"))
        #expect(minsu.contains("<div class=\"address\">부산광역시 해운대구 센텀중앙로 79</div>"))
        #expect(minsu.contains(minsu1) && minsu.contains(minsu2))
        // Only Board has one place and no address: the window shows the name.
        #expect(sections[2].contains("<div class=\"name\">Only Board</div></div>"))
        #expect(sections[2].contains("<h2>Board 2027</h2>") && !sections[2].contains("AGM"))
        // ... and gave a time zone of their own, which their letter's window is in.
        #expect(sections[2].contains("(America/New_York time)") && !sections[2].contains("Asia/Seoul"))

        // Refused with nothing written: the file exists; no help contact; a zone that is not one.
        let again = try election.vote([
            "voter", "letters", "--base-url", "https://vote.example.org", "--help-contact", "x", "--out", letters,
        ])
        #expect(again.status != 0 && again.err.split(separator: "\n").count == 1, "\(again.err)")
        let noHelp = try election.vote([
            "voter", "letters", "--base-url", "https://vote.example.org", "--out", election.root + "/o.html",
        ])
        #expect(noHelp.status != 0 && noHelp.err.contains("--help-contact"))
        let badZone = try election.vote([
            "voter", "letters", "--base-url", "https://vote.example.org", "--help-contact", "x", "--time-zone",
            "Mars/Olympus", "--out", election.root + "/o.html",
        ])
        #expect(badZone.status != 0 && badZone.err.contains("is not a time zone name"))
        #expect(!FileManager.default.fileExists(atPath: election.root + "/o.html"))

        guard hasChromium else {
            Issue.record("skipped the QR code and PDF checks: no Chromium at \(Self.chromium)")
            return
        }
        // The PDF, new and 0600.
        let bytes = try #require(FileManager.default.contents(atPath: pdf))
        #expect(bytes.starts(with: Array("%PDF".utf8)))
        #expect((try FileManager.default.attributesOfItem(atPath: pdf)[.posixPermissions] as? Int) == 0o600)

        // José's letter as a browser shows it: both QR codes read back as his two links.
        let shot = election.root + "/letter.png"
        let chromium = Process()
        chromium.executableURL = URL(fileURLWithPath: Self.chromium)
        chromium.arguments = [
            "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=794,1123",
            "--screenshot=\(shot)", "file://\(letters)",
        ]
        chromium.standardOutput = FileHandle.nullDevice
        chromium.standardError = FileHandle.nullDevice
        try chromium.run()
        chromium.waitUntilExit()
        let decoded = try QRCodeTests.zbarimg(shot).split(separator: "\n").map(String.init).sorted()
        #expect(decoded == ["QR-Code:" + jose1, "QR-Code:" + jose2].sorted())
        if let keep = ProcessInfo.processInfo.environment["LETTERS_SCREENSHOT"] {
            try? FileManager.default.removeItem(atPath: keep)
            try FileManager.default.copyItem(atPath: shot, toPath: keep)
            try? FileManager.default.removeItem(atPath: keep + ".html")
            try FileManager.default.copyItem(atPath: letters, toPath: keep + ".html")
        }
    }
}
