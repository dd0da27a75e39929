import ArgumentParser
import Election
import JSONViews
import VoteCommandLine
import VoteLedger

/// `vote candidate …`: registration, withdrawal and listing.
struct CandidateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "candidate", abstract: "Register, withdraw and list candidates.",
        subcommands: [Register.self, Withdraw.self, List.self])

    /// `vote candidate register`
    struct Register: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "register", abstract: "Register a candidate (registration window only).")

        @OptionGroup var ledger: LedgerOptions
        @Option(help: "Place id.") var place: UInt32
        @Option(help: "Candidate name, 1-200 code points, unique in the place.") var name: String
        @Option(help: "Pledge text, up to 2000 code points.") var pledge = ""
        @OptionGroup var passphrase: PassphraseOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let command = Command.registerCandidate(place: place, name: name, pledge: pledge)
            let recorded = try await ledger.withWriter(passphrase) { try await $0.submit(command) }
            guard case .candidateRegistered(_, let id, let name, _) = recorded.event else { return }
            try Output.report(recorded: "candidate \(id) was registered in place \(place)") {
                if output.json {
                    return try Output.json(
                        CandidateRecordedJSON(
                            place: place, candidate: id, name: name, recorded: RecordedJSON(recorded)))
                }
                try Output.line("registered candidate \(id) in place \(place): \(name)")
            }
        }
    }

    /// `vote candidate withdraw`
    struct Withdraw: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "withdraw", abstract: "Withdraw a candidate (before voting opens).")

        @OptionGroup var ledger: LedgerOptions
        @Option(help: "Place id.") var place: UInt32
        @Option(help: "Candidate id.") var candidate: UInt32
        @OptionGroup var passphrase: PassphraseOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let command = Command.withdrawCandidate(place: place, candidate: candidate)
            let recorded = try await ledger.withWriter(passphrase) { try await $0.submit(command) }
            try Output.report(recorded: "candidate \(candidate) of place \(place) was withdrawn") {
                if output.json {
                    return try Output.json(
                        CandidateRecordedJSON(
                            place: place, candidate: candidate, name: nil, recorded: RecordedJSON(recorded)))
                }
                try Output.line("candidate \(candidate) of place \(place) withdrawn")
            }
        }
    }

    /// `vote candidate list`
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List the candidates of a place.")

        @OptionGroup var ledger: LedgerOptions
        @Option(help: "Place id.") var place: UInt32
        @OptionGroup var output: JSONOption

        func run() throws {
            let state = try ledger.view().place(place)
            if output.json { return try Output.json(state.candidates.map(CandidateJSON.init)) }
            guard !state.candidates.isEmpty else { return try Output.line("no candidates in place \(place)") }
            try Output.table(
                ["ID", "NAME", "STATE", "PLEDGE"],
                state.candidates.map {
                    [String($0.id), $0.name, $0.withdrawn ? "withdrawn" : "registered", String($0.pledge.prefix(60))]
                })
        }
    }
}
