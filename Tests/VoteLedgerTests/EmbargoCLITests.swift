import FileStore
import Foundation
import Ledger
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

    /// `vote publish` during voting of an embargoed place withholds its authorisation and vote: the copy's bytes
    /// hold neither the vote's payload (place, candidate, token hash) nor its token hash, yet both verifiers accept
    /// the copy and say how many events they could not re-decide, the voter's receipt audits against it, and
    /// its tally is refused for that place only. The open place's vote is in it whole. After voting ends a copy
    /// is the ledger's bytes, and the copy taken during voting is checked against it by both verifiers.
    @Test func publishedCopyWithholdsVotesUntilVotingEnds() throws {
        let election = try TestElection()
        let opens = try election.place(name: "Board", extra: ["--results", "after-close"])
        let opensOpen = try election.place(name: "Council")
        for place in ["1", "2"] {
            for name in ["Ada Park", "Min-jun Lee"] {
                try election.ok(["candidate", "register", "--place", place, "--name", name])
            }
        }
        let tokens = [try election.authorize("m-1", place: 1), try election.authorize("m-2", place: 2)]
        election.advance(to: max(opens, opensOpen))
        var payloads: [[UInt8]] = []
        for (offset, token) in tokens.enumerated() {
            let receipt = election.root + "/receipt-\(offset + 1).tlog-proof"
            try election.ok([
                "cast", "--place", String(offset + 1), "--candidate", "2", "--token", token, "--receipt-out", receipt,
            ])
            let text = try String(contentsOfFile: receipt, encoding: .utf8)
            let extra = text.split(separator: "\n").first { $0.hasPrefix("extra ") }?.dropFirst(6) ?? ""
            let event = try #require(Data(base64Encoded: String(extra)).map { [UInt8]($0) })
            payloads.append(Array(event.dropFirst(2)))  // place, candidate, token hash
        }
        #expect(payloads.allSatisfy { $0.count == 40 && $0[7] == 2 })

        let during = election.root + "/during"
        let published = try election.ok(["publish", "--to", during])
        #expect(published.contains("withheld       2 events"), "\(published)")
        let duringBytes = try segmentBytes(during)
        // (Bools, so that a failure names what leaked rather than printing the bytes.)
        let (leaksVote, leaksToken) = (duringBytes.holds(payloads[0]), duringBytes.holds(Array(payloads[0].suffix(32))))
        #expect(!leaksVote, "the copy holds the embargoed vote's payload (place, candidate, token hash)")
        #expect(!leaksToken, "the copy holds the embargoed vote's token hash")
        let showsOpenVote = duringBytes.holds(payloads[1])
        #expect(showsOpenVote, "the copy lacks the open place's vote")

        let verified = try onCopy(election, ["verify", "--ledger", during]).out
        #expect(verified.contains("withheld: 2 events of embargoed places (place 1: 2)"), "\(verified)")
        let report = try #require(
            try json(try onCopy(election, ["verify", "--ledger", during, "--json"]).out) as? [String: Any])
        #expect(report["withheld_events"] as? Int == 2)
        let python = try pythonVerifier([during])
        #expect(python.status == 0, "\(python.out)")
        #expect(python.out.contains("\"withheld_events\": 2"), "\(python.out)")
        #expect(
            try onCopy(election, ["audit", election.root + "/receipt-1.tlog-proof", "--ledger", during]).status == 0)
        let tally = try VoteCLI.run(["tally", "--place", "1", "--ledger", during], environment: election.environment)
        #expect(tally.status == 1 && tally.err.contains("withholds 2 events of place 1"), "\(tally.err)")
        #expect(try onCopy(election, ["tally", "--place", "2", "--ledger", during]).out.contains("turnout: 1 of 1"))

        // After the close: everything is public, and the copy taken during voting is checked against the new one.
        election.advance(to: max(opens, opensOpen).addingTimeInterval(3601))
        let after = election.root + "/after"
        #expect(!(try election.ok(["publish", "--to", after])).contains("withheld"))
        let afterBytes = try segmentBytes(after)
        let (sameAsLedger, showsVote) = (
            afterBytes == (try segmentBytes(election.ledger)), afterBytes.holds(payloads[0])
        )
        #expect(sameAsLedger, "a copy made after the close differs from the ledger's segments")
        #expect(showsVote, "a copy made after the close lacks the vote")
        let checked = try onCopy(election, ["verify", "--ledger", after, "--earlier-copy", during]).out
        #expect(checked.contains("2 events it withheld are this ledger's"), "\(checked)")
        let pythonChecked = try pythonVerifier([after, "--earlier-copy", during])
        #expect(pythonChecked.status == 0, "\(pythonChecked.out)")
        #expect(pythonChecked.out.contains("\"earlier_copy_disclosed\": 2"), "\(pythonChecked.out)")
        // A copy that misstates what it withheld is caught: a withheld vote said to be of the open place fails
        // on its own; said to be an authorisation, it passes on its own but not against the full events.
        let elsewhere = try forge(during, as: election.root + "/elsewhere") { $0.disclosed = [0, 0, 0, 2] }
        let refusedAlone = try VoteCLI.run(["verify", "--ledger", elsewhere], environment: election.environment)
        #expect(
            refusedAlone.status == 3 && refusedAlone.err.contains("the embargo of place 2 does not withhold"),
            "\(refusedAlone.err)")
        #expect(try pythonVerifier([elsewhere]).status == 3)
        let misnamed = try forge(during, as: election.root + "/misnamed") { $0.type = 0x0104 }
        _ = try onCopy(election, ["verify", "--ledger", misnamed])
        let caught = try VoteCLI.run(
            ["verify", "--ledger", after, "--earlier-copy", misnamed], environment: election.environment)
        #expect(
            caught.status == 3 && caught.err.contains("of the earlier copy is not this ledger's event"), "\(caught.err)"
        )
        #expect(try pythonVerifier([after, "--earlier-copy", misnamed]).status == 3)
        // A copy is not some other ledger's: the copy during voting checked against a ledger without its blocks.
        let other = try TestElection()
        let refused = try other.vote(["verify", "--earlier-copy", during])
        #expect(refused.status == 3, "\(refused.err)")
    }

    /// Runs `vote` on `election`'s clock against the ledger its `arguments` name, requiring success.
    private func onCopy(
        _ election: TestElection, _ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> VoteCLI.Result {
        let result = try VoteCLI.run(arguments, environment: election.environment)
        #expect(
            result.status == 0, "vote \(arguments.joined(separator: " ")): \(result.err)",
            sourceLocation: sourceLocation)
        return result
    }

    /// A copy of the copy at `copy`, written to `path`, whose withheld vote (type 0x0105) `change` alters.
    private func forge(
        _ copy: String, as path: String, _ change: @escaping (inout WithheldEvent) -> Void
    ) throws -> String {
        _ = try FileBlockSource(path: copy).writePublicCopy(
            to: path,
            shown: { block in
                let events = block.events.map { event -> LedgerEvent in
                    guard var withheld = WithheldEvent(event.ledgerEvent), withheld.type == 0x0105 else {
                        return event.ledgerEvent
                    }
                    change(&withheld)
                    return withheld.event
                }
                return try EncodedBlock(
                    decoding: Block(header: block.header, signature: block.signature, events: events).encoded)
            })
        return path
    }

    /// The bytes of every segment file of the ledger directory at `path`, in order.
    private func segmentBytes(_ path: String) throws -> [UInt8] {
        let names = try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasSuffix(".vlseg") }.sorted()
        return try names.flatMap { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path + "/" + $0))) }
    }

    /// Runs `Tools/verify_ledger.py` with `arguments`; its exit status and stdout.
    private func pythonVerifier(_ arguments: [String]) throws -> (status: Int32, out: String) {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Tools/verify_ledger.py").standardized.path
        let python = Process()
        python.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        python.arguments = ["python3", script] + arguments
        let out = Pipe()
        python.standardOutput = out
        try python.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        python.waitUntilExit()
        return (python.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}

extension [UInt8] {
    /// Whether `needle` occurs in these bytes.
    fileprivate func holds(_ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, needle.count <= count else { return needle.isEmpty }
        return (0...(count - needle.count)).contains { self[$0..<$0 + needle.count].elementsEqual(needle) }
    }
}
