import Ballots
import Foundation
import Testing

/// The ranked counts against independent programs: `Tools/ranked_peers.py` counts the same random profiles with
/// pref_voting and pyrankvote, and each result must agree wherever the peer's rule and ours are the same rule.
///
/// - Schulze winners (pref_voting `beat_path` with winning votes): always, ties included, since both report every
///   unbeaten option.
/// - Instant runoff: ours against pref_voting `instant_runoff`, pyrankvote `instant_runoff_voting` and pyrankvote
///   `single_transferable_vote` for one seat, on the profiles where our count decided no tie. Those peers stop at
///   a majority of the papers still in play, exclude several options at once or all the equal lowest, and break
///   ties their own way; none of that changes the winner unless our count meets a tie (an option holding half the
///   continuing papers either wins or ends equal with the last other option).
/// - Scottish STV, 2–3 seats: ours against pref_voting `stv_scottish` (the same Order, in floating point, its lot
///   a seeded `random`), on the profiles where our count decided no tie.
/// - pyrankvote's STV is not Scottish STV: its quota is votes / (seats + 1) (no floor, no + 1), a surplus moves
///   every paper at one equal share whatever the paper's value, surpluses move together, and options are
///   excluded in bulk. It must still agree where no surplus is ever transferred: when exactly `seats` options reach
///   our quota at the first count (no other option can then reach its lower quota), or when no option's total
///   reaches even its quota at any stage of our count (both are then the same exclusions at full value). Only
///   those profiles are compared with it.
@Suite struct RankedPeerTests {
    @Test func countsAgreeWithIndependentPeers() throws {
        let lot = testLot()
        var random = ProfileRandom(seed: 0x9EE5)
        // Without ties where possible: a profile whose instant runoff or STV decides a tie is drawn again, up to
        // three times, and the last draw kept either way. 240 profiles of weight 1, then 60 of weights 1–3.
        let profiles = (0..<300).map { number in
            var profile: RankedProfile
            var draws = 0
            repeat {
                profile = randomProfile(
                    &random, options: 4...7, ballots: 10...60, seats: 2...3, maxWeight: number < 240 ? 1 : 3)
                draws += 1
            } while draws < 4 && profile.decidesATie(lot: lot)
            return profile
        }
        guard let peers = try runPeers(profiles) else { return }
        try #require(peers.count == profiles.count)
        var compared = (irv: 0, scottish: 0, pyrankvote: 0)
        var pyrankvoteRaised = 0
        for (index, (profile, peer)) in zip(profiles, peers).enumerated() {
            let label = Comment(rawValue: "profile \(index): \(profile)")
            let schulze = SchulzeCount.count(profile.ballots, options: profile.options, lot: lot, question: 0)
            #expect(schulze.winners == peer.schulze, label)
            let irv = STVCount.instantRunoff(profile.ballots, options: profile.options, lot: lot, question: 0)
            if !irv.decidedATie {
                compared.irv += 1
                #expect(irv.elected == peer.irvPV, label)
                for winners in [peer.irvPRV, peer.stv1PRV] {
                    if let winners { #expect(irv.elected == winners, label) } else { pyrankvoteRaised += 1 }
                }
            }
            let stv = STVCount.count(
                profile.ballots, options: profile.options, seats: profile.seats, lot: lot, question: 0)
            if !stv.decidedATie {
                compared.scottish += 1
                #expect(stv.elected.sorted() == peer.stvScottishPV, label)
                if stv.firstCountFillsTheSeats || stv.neverReaches(fractionOfTheVote: profile.seats + 1) {
                    if let winners = peer.stvPRV {
                        compared.pyrankvote += 1
                        #expect(stv.elected.sorted() == winners, label)
                    } else {
                        pyrankvoteRaised += 1
                    }
                }
            }
        }
        print("ranked peers: \(profiles.count) profiles; Schulze \(profiles.count), instant runoff \(compared.irv)")
        print("ranked peers: Scottish STV \(compared.scottish), pyrankvote STV \(compared.pyrankvote) compared")
        print("ranked peers: pyrankvote raised an exception \(pyrankvoteRaised) times")
        #expect(compared.irv * 10 >= profiles.count * 8)
        #expect(compared.scottish * 10 >= profiles.count * 8)
        #expect(compared.pyrankvote >= 20)
    }
}

extension RankedProfile {
    /// Whether its instant runoff or its STV count decides a tie.
    func decidesATie(lot: Lot) -> Bool {
        STVCount.instantRunoff(ballots, options: options, lot: lot, question: 0).decidedATie
            || STVCount.count(ballots, options: options, seats: seats, lot: lot, question: 0).decidedATie
    }
}

extension STVResult {
    /// Whether any stage needed a tie decided (by looking back or by lot): the peers decide ties otherwise.
    var decidedATie: Bool { stages.contains { !$0.ties.isEmpty } }

    /// Whether the first count alone filled every seat, so no surplus was transferred.
    var firstCountFillsTheSeats: Bool { stages.count == 1 && stages[0].elected.count == seats }

    /// Whether no surplus was transferred and no option ever held `1 / parts` of the valid vote or more.
    func neverReaches(fractionOfTheVote parts: Int) -> Bool {
        stages.allSatisfy { stage in
            if case .surplusTransferred = stage.action { return false }
            return stage.totals.allSatisfy { $0.units * UInt64(parts) < validVote.units }
        }
    }
}

/// What `Tools/ranked_peers.py` reads.
private struct PeerInput: Encodable {
    struct Profile: Encodable {
        var options: Int
        var seats: Int
        var ballots: [Ballot]
    }

    struct Ballot: Encodable {
        var ranking: [Int]
        var weight: UInt64
    }

    var profiles: [Profile]
}

/// What `Tools/ranked_peers.py` finds for one profile: each peer's winners, ascending; `nil` where the peer raised
/// an exception (pyrankvote stops with "Illegal state" on a few profiles: those comparisons are skipped and counted;
/// a pref_voting failure fails the comparison).
private struct PeerCounts: Decodable {
    var schulze: [Int]?
    var irvPV: [Int]?
    var irvPRV: [Int]?
    var stv1PRV: [Int]?
    var stvScottishPV: [Int]?
    var stvPRV: [Int]?

    enum CodingKeys: String, CodingKey {
        case schulze
        case irvPV = "irv_pv"
        case irvPRV = "irv_prv"
        case stv1PRV = "stv1_prv"
        case stvScottishPV = "stv_scot_pv"
        case stvPRV = "stv_prv"
    }
}

/// Runs `Tools/ranked_peers.py` (beside `Tests`, two directories above this file's) on `profiles`; `nil`, with
/// the failure recorded in one line, when python3 or its modules are missing.
private func runPeers(_ profiles: [RankedProfile]) throws -> [PeerCounts]? {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    let script = root.appendingPathComponent("Tools/ranked_peers.py")
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ranked-peers-\(UUID())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let input = directory.appendingPathComponent("profiles.json")
    let errors = directory.appendingPathComponent("stderr.txt")
    let peerProfiles = profiles.map { profile in
        PeerInput.Profile(
            options: profile.options, seats: profile.seats,
            ballots: profile.ballots.map { PeerInput.Ballot(ranking: $0.ranking, weight: $0.weight) })
    }
    try JSONEncoder().encode(PeerInput(profiles: peerProfiles)).write(to: input)
    try Data().write(to: errors)
    let errorHandle = try FileHandle(forWritingTo: errors)
    defer { try? errorHandle.close() }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", script.path, input.path]
    let output = Pipe()
    process.standardOutput = output
    process.standardError = errorHandle
    do {
        try process.run()
    } catch {
        Issue.record("cannot run python3 (\(error)): install python3, then pip install pyrankvote pref_voting")
        return nil
    }
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let stderr = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
    let lastLine = stderr.split(separator: "\n").last.map(String.init) ?? ""
    switch process.terminationStatus {
    case 0:
        return try JSONDecoder().decode([PeerCounts].self, from: data)
    case 127:
        Issue.record("python3 not found: install python3, then pip install pyrankvote pref_voting")
    case 3:
        Issue.record(Comment(rawValue: lastLine))
    default:
        Issue.record("Tools/ranked_peers.py exited with \(process.terminationStatus): \(lastLine)")
    }
    return nil
}
