// count-bench: seeded random rankings counted by our Scottish STV, written for belenios-tool to count the very same.
//
//     count-bench generate FILE [--ballots N] [--options K] [--seats S] [--seed X]
//     count-bench count FILE [--seats S]
//     count-bench ledger DIR [--ballots N] [--options K] [--seats S] [--seed X]
//
// `generate` draws N rankings of K options (each ballot ranks 1...K options, uniformly many; the options are drawn
// one by one in proportion to a seeded popularity per option, 1...40, so the election has favourites as real ones
// do; no blank), writes them to FILE in belenios-tool's input (a JSON array with one array per ballot of one rank per
// option, 1 best, 0 unranked: what `belenios-tool method stv --nseats=S < FILE` reads), then counts them in memory
// with `STVCount.count` for S seats. `count` reads such a FILE back (our own parser), then counts it: the same
// work as belenios-tool, file to result. Each prints one JSON line: the times in seconds and the elected options,
// ascending (`elected`), and in order of election (`order`). `ledger` writes the same rankings as a VoteLedger
// ledger at DIR (which must not exist): one place asking one ranked question of K options for S seats (Scottish
// STV), N voters authorised and N ballots cast, 10,000 events to a block, every event as the rules decide it, so
// `vote verify` accepts it and `vote tally` recounts it (Tools/bench-ballots). Build it in release for its times:
// `swift build -c release --product count-bench` (Tools/bench-count does, unless --debug).
import Ballots
import Election
import FileStore
import Foundation
import Ledger
import LedgerCrypto

/// SplitMix64: the same ballots from the same seed on every machine.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("count-bench: \(message)\n".utf8))
    exit(2)
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

/// Seeded rankings as described above.
func generate(ballots: Int, options: Int, seed: UInt64) -> [RankedBallot] {
    var random = SplitMix64(state: seed)
    let popularity = (0..<options).map { _ in Int.random(in: 1...40, using: &random) }
    var made: [RankedBallot] = []
    made.reserveCapacity(ballots)
    var left: [Int] = []
    for _ in 0..<ballots {
        let length = Int.random(in: 1...options, using: &random)
        left.removeAll(keepingCapacity: true)
        left.append(contentsOf: 0..<options)
        var sum = popularity.reduce(0, +)
        var ranking: [Int] = []
        ranking.reserveCapacity(length)
        while ranking.count < length {
            var pick = Int.random(in: 0..<sum, using: &random)
            var index = 0
            while pick >= popularity[left[index]] {
                pick -= popularity[left[index]]
                index += 1
            }
            sum -= popularity[left[index]]
            ranking.append(left.remove(at: index))
        }
        made.append(RankedBallot(ranking: ranking))
    }
    return made
}

/// The ballots in belenios-tool's input format.
func beleniosJSON(_ ballots: [RankedBallot], options: Int) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(ballots.count * (options * 3 + 3))
    var ranks = [Int](repeating: 0, count: options)
    out.append(UInt8(ascii: "["))
    for (number, ballot) in ballots.enumerated() {
        if number > 0 { out.append(UInt8(ascii: ",")) }
        for index in ranks.indices { ranks[index] = 0 }
        for (place, option) in ballot.ranking.enumerated() { ranks[option] = place + 1 }
        out.append(UInt8(ascii: "["))
        for (index, rank) in ranks.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.append(contentsOf: Array(String(rank).utf8))
        }
        out.append(UInt8(ascii: "]"))
    }
    out.append(contentsOf: Array("]\n".utf8))
    return out
}

/// belenios-tool's input read back: each ballot's ranks as a ranking (options by rank; a rank used twice, or a gap
/// in the ranks, is refused as belenios-tool refuses it). Returns the ballots and the number of options.
func parseBelenios(_ bytes: [UInt8]) -> ([RankedBallot], Int) {
    var ballots: [RankedBallot] = []
    var options = -1
    var ranks: [Int] = []
    var depth = 0
    var number = 0
    var inNumber = false
    for byte in bytes {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"):
            number = number * 10 + Int(byte - UInt8(ascii: "0"))
            inNumber = true
        case UInt8(ascii: "["):
            depth += 1
            if depth == 2 { ranks.removeAll(keepingCapacity: true) }
        case UInt8(ascii: ","), UInt8(ascii: "]"):
            if inNumber {
                ranks.append(number)
                number = 0
                inNumber = false
            }
            if byte == UInt8(ascii: "]") {
                if depth == 2 {
                    if options < 0 { options = ranks.count }
                    guard ranks.count == options else { fail("ballot \(ballots.count) has \(ranks.count) ranks") }
                    var ranking = [Int](repeating: -1, count: options)
                    var length = 0
                    for (option, rank) in ranks.enumerated() where rank > 0 {
                        guard rank <= options, ranking[rank - 1] < 0 else { fail("ballot \(ballots.count): bad rank") }
                        ranking[rank - 1] = option
                        length = max(length, rank)
                    }
                    guard !ranking[0..<length].contains(-1) else { fail("ballot \(ballots.count): gap in ranks") }
                    ranking.removeLast(options - length)
                    ballots.append(RankedBallot(ranking: ranking))
                }
                depth -= 1
            }
        case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"):
            break
        default:
            fail("unexpected byte \(byte) in the ballots")
        }
    }
    return (ballots, max(options, 0))
}

/// Counts `ballots` and prints the result line with `times`.
func count(_ ballots: [RankedBallot], options: Int, seats: Int, times: [(String, Double)]) {
    let lot = Lot(seed: SHA256.hash(Array("count-bench".utf8)))
    let clock = ContinuousClock()
    let start = clock.now
    let result = STVCount.count(ballots, options: options, seats: seats, lot: lot, question: 0)
    let counted = seconds(clock.now - start)
    let ties = result.stages.reduce(0) { $0 + $1.ties.count }
    let fields =
        [("ballots", "\(ballots.count)"), ("options", "\(options)"), ("seats", "\(seats)")]
        + (times + [("count_seconds", counted)]).map { ($0.0, String(format: "%.3f", $0.1)) }
        + [
            ("stages", "\(result.stages.count)"), ("ties", "\(ties)"),
            ("elected", "\(result.elected.sorted())"), ("order", "\(result.elected)"),
        ]
    print("{" + fields.map { "\"\($0.0)\": \($0.1)" }.joined(separator: ", ") + "}")
}

/// Writes `ballots` as a ledger at `path`, as `ledger` above says; returns the number of events.
func writeLedger(_ ballots: [RankedBallot], options: Int, seats: Int, at path: String) throws -> UInt64 {
    let t: Int64 = 1_800_000_000_000
    let ledger = try FileBlockStore.create(
        at: path, name: "ranked \(ballots.count)", authority: Ed25519PrivateKey(), ledgerID: LedgerID.random(),
        timestamp: t - 1, log: { _ in })
    defer { ledger.close() }
    let question = Question(
        title: "Delegates", options: (1...options).map { "Option \($0)" },
        method: .rank(seats: seats, rule: .scottishSTV), blankAllowed: false)
    let place = Place(
        id: 1, name: "Ranked", description: "", registration: TimeWindow(start: t + 1000, end: t + 2000),
        voting: TimeWindow(start: t + 3000, end: t + 4000), maxCandidates: nil, ballot: Ballot(questions: [question]))
    _ = try ledger.append([ElectionEvent.placeCreated(place).ledgerEvent], timestamp: t)
    func hash(_ text: String) -> Digest { SHA256.hash(Array(text.utf8)) }
    let perBlock = 10_000
    for start in stride(from: 0, to: ballots.count, by: perBlock) {
        let range = start..<min(start + perBlock, ballots.count)
        _ = try ledger.append(
            range.map {
                ElectionEvent.voterAuthorized(place: 1, voterTag: hash("tag \($0)"), tokenHash: hash("token \($0)"))
                    .ledgerEvent
            }, timestamp: t + 1500)
    }
    for start in stride(from: 0, to: ballots.count, by: perBlock) {
        let range = start..<min(start + perBlock, ballots.count)
        _ = try ledger.append(
            range.map {
                ElectionEvent.ballotCast(
                    place: 1, tokenHash: hash("token \($0)"), answers: [.options(ballots[$0].ranking)]
                ).ledgerEvent
            }, timestamp: t + 3500)
    }
    return ledger.frontier.size
}

var arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count >= 2, ["generate", "count", "ledger"].contains(arguments[0]) else {
    fail(
        "usage: count-bench generate FILE [--ballots N] [--options K] [--seats S] [--seed X] | count FILE [--seats S] | ledger DIR [--ballots N] [--options K] [--seats S] [--seed X]"
    )
}
let mode = arguments.removeFirst()
let path = arguments.removeFirst()
var settings = ["--ballots": 1_000_000, "--options": 20, "--seats": 5, "--seed": 2026]
while !arguments.isEmpty {
    let name = arguments.removeFirst()
    guard settings[name] != nil, let value = arguments.first.flatMap({ Int($0) }), value >= 1 else {
        fail("\(name) needs a positive number (or is unknown)")
    }
    settings[name] = value
    arguments.removeFirst()
}
let clock = ContinuousClock()
if mode == "generate" {
    let options = settings["--options"]!
    var start = clock.now
    let ballots = generate(ballots: settings["--ballots"]!, options: options, seed: UInt64(settings["--seed"]!))
    let generated = seconds(clock.now - start)
    start = clock.now
    let bytes = beleniosJSON(ballots, options: options)
    guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else { fail("cannot write \(path)") }
    let written = seconds(clock.now - start)
    count(
        ballots, options: options, seats: settings["--seats"]!,
        times: [("generate_seconds", generated), ("write_seconds", written)])
} else if mode == "ledger" {
    let (options, seats) = (settings["--options"]!, settings["--seats"]!)
    var start = clock.now
    let ballots = generate(ballots: settings["--ballots"]!, options: options, seed: UInt64(settings["--seed"]!))
    let generated = seconds(clock.now - start)
    start = clock.now
    let events = try writeLedger(ballots, options: options, seats: seats, at: path)
    FileHandle.standardError.write(Data("count-bench: wrote \(events) events to \(path)\n".utf8))
    count(
        ballots, options: options, seats: seats,
        times: [("generate_seconds", generated), ("ledger_seconds", seconds(clock.now - start))])
} else {
    let start = clock.now
    guard let data = FileManager.default.contents(atPath: path) else { fail("cannot read \(path)") }
    let (ballots, options) = parseBelenios(Array(data))
    count(ballots, options: options, seats: settings["--seats"]!, times: [("read_seconds", seconds(clock.now - start))])
}
