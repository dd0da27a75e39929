import FileDriver
import Foundation
import TestSupport
import Testing
import VoteLedger

/// The `serve` marker under real processes: only a running `vote serve`, which holds the marker's lock, stops
/// a CLI writer. A marker left behind blocks no one, whatever process now has the pid it names.
@Suite struct ServeMarkerTests {
    @Test func onlyALiveServerBlocksWriters() throws {
        let election = try ProcessLedger("Marker")
        let ledger = election.ledger
        func createPlace(_ name: String) throws -> ProgramRun {
            try VoteBinary.run([
                "place", "create", "--name", name, "--registration", "now/+1h", "--voting", "+1h/+2h", "--ledger",
                ledger,
            ])
        }
        // Markers left behind whose pids are live processes that serve nothing: init (pid 1) and this test.
        for pid in [1, getpid()] {
            try "pid \(pid)\naddress http://127.0.0.1:9\n".write(
                toFile: ledger + "/serve", atomically: false, encoding: .utf8)
            let written = try createPlace("After \(pid)")
            #expect(written.status == 0, "\(written.err)")
        }
        // A server starts over such a marker, and while it runs a CLI writer fails at once, naming it.
        let server = try election.serve(offset: 0)
        let blocked = try createPlace("Blocked")
        #expect(blocked.status == 4)
        #expect(
            blocked.err
                == "vote: the ledger is served by vote serve (pid \(server.process.processIdentifier)) at http://127.0.0.1:\(server.port); use its HTTP API, or stop it first\n"
        )
        // Killed, it leaves its marker behind, and a CLI writer goes ahead at once.
        _ = server.stop(sending: SIGKILL)
        #expect(server.process.terminationReason == .uncaughtSignal)
        #expect(FileManager.default.fileExists(atPath: ledger + "/serve"))
        let after = try createPlace("After the kill")
        #expect(after.status == 0, "\(after.err)")
    }
}
