import Foundation
import Testing

/// Candidate names that a spreadsheet would run as formulas (issue 33): `vote tally --csv` and
/// `vote export --format csv`, run as the real binary, quote them with a single quote first (OWASP's advice),
/// and leave every other name as it was.
@Suite struct CSVInjectionCLITests {
    /// Each name as registered, and the CSV field both commands must write for it.
    static let names: [(name: String, field: String)] = [
        ("=HYPERLINK(\"https://example.com\",\"Ann\")", "\"'=HYPERLINK(\"\"https://example.com\"\",\"\"Ann\"\")\""),
        ("+1 Bob", "\"'+1 Bob\""),
        ("-Cy", "\"'-Cy\""),
        ("@SUM(A1)", "\"'@SUM(A1)\""),
        ("Dee = Eve", "Dee = Eve"),
        ("Fay, Gil", "\"Fay, Gil\""),
    ]

    @Test func formulaNamesAreQuotedInTallyAndExport() throws {
        let election = try TestElection()
        _ = try election.place()
        for (name, _) in Self.names {
            // `--name=VALUE`: a name starting with `-` is not read as an option.
            try election.ok(["candidate", "register", "--place", "1", "--name=\(name)"])
        }
        let tally = try election.ok(["tally", "--place", "1", "--csv"])
        let export = try election.ok(["export", "--place", "1", "--format", "csv"])
        for (output, command) in [(tally, "tally"), (export, "export")] {
            let lines = output.split(separator: "\n").map(String.init)
            for (index, (name, field)) in Self.names.enumerated() {
                let prefix = "\(index + 1),\(field),0,"
                #expect(lines.contains { $0.hasPrefix(prefix) }, "\(command): \(name) as \(field) in\n\(output)")
            }
            // No data line has a field that starts with a formula character outside quotes.
            for line in lines where !line.hasPrefix("#") {
                #expect(!line.contains(",=") && !line.contains(",+") && !line.contains(",-") && !line.contains(",@"))
            }
        }
    }
}
