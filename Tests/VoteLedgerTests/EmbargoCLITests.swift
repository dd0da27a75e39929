import Foundation
import Testing

/// `vote place create --results after-close`: the place records the results embargo, which `place show` and
/// the JSON views report; any other value is a usage error that writes nothing.
@Suite struct EmbargoCLITests {
    @Test func placeCreateRecordsTheEmbargo() throws {
        let election = try TestElection()
        let before = try election.fingerprint()
        let bad = try election.vote([
            "place", "create", "--name", "Board", "--registration", "+1m/+1h", "--voting", "+1h/+2h", "--results",
            "sometimes",
        ])
        #expect(bad.status == 2 && bad.err.contains("--results must be live or after-close"), "\(bad.err)")
        #expect(try election.fingerprint() == before)

        _ = try election.place(name: "Board", extra: ["--results", "after-close"])
        _ = try election.place(name: "Council")
        #expect(try election.ok(["place", "show", "1"]).contains("results       hidden from the public"))
        #expect(!(try election.ok(["place", "show", "2"]).contains("hidden from the public")))
        let places = try #require(try json(try election.ok(["place", "list", "--json"])) as? [[String: Any]])
        #expect(places.map { $0["results_after_close"] as? Bool } == [true, false])
        // The whole ledger still verifies, by both verifiers.
        try election.ok(["verify"])
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Tools/verify_ledger.py").standardized.path
        let python = Process()
        python.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        python.arguments = ["python3", script, election.ledger]
        python.standardOutput = Pipe()
        try python.run()
        python.waitUntilExit()
        #expect(python.terminationStatus == 0)
    }
}
