import Ballots
import Foundation
import TestSupport
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
///
/// belenios-tool (`method stv`, `method schulze`; Debian's belenios-tool 2.0) is compared in
/// `countsAgreeWithBelenios`, below, where its rules must give our results.
@Suite struct RankedPeerTests {
    @Test func countsAgreeWithIndependentPeers() throws {
        let lot = testLot()
        var random = SplitMix64(seed: 0x9EE5)
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
        guard let peers = try runPeers(profiles, peers: ["python"]) else { return }
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

extension RankedPeerTests {
    /// Ours against belenios-tool 2.0 on 1,100 seeded profiles (700 of rankings complete or cut short, 400 of complete
    /// rankings), 2–5 seats: instant runoff against `method stv --nseats=1`, Scottish STV against
    /// `method stv --nseats=seats`, and on the complete rankings Schulze against `method schulze`.
    ///
    /// belenios' STV (src/lib/core/stv.ml) is not the Order's: quota ⌊valid / (seats + 1)⌋ + 1 as ours, but in
    /// floating point with no truncation; each round elects only the one option with the most votes if it reaches the
    /// quota and transfers its surplus at once (every paper × (total − quota) / total), otherwise excludes the one
    /// with the fewest; ties go by option order (first index elected, last excluded) instead of looking back and the
    /// lot; it knows only the options some ballot ranks; it counts an empty ballot in the quota, and refuses a ballot
    /// with a gap in its ranks. The elected sets must still agree, and are compared, unless our count (`beleniosMayDiffer`):
    /// 1. decided a tie: belenios takes option order where we look back or draw;
    /// 2. has an option no ballot ranks: belenios never sees it, where rule 52 may elect it with us;
    /// 3. elected two or more options at one stage (by the quota, not by rule 52), unless they filled the last
    ///    seats and every continuing option stays behind the least of them by more than the sum of their
    ///    surpluses (and `bound`, below): belenios elects one, transfers its surplus at once, and may pass papers
    ///    to the second (which we had elected: ours skip it), which changes every later transfer, or let a third
    ///    overtake it; when those were the last seats and no third can overtake, it elects the same ones in turn;
    /// 4. met a near-tie: a total within `bound` of the quota, or an excluded option within `bound` of another
    ///    continuing one, where `bound` bounds how far belenios' totals can be from ours. Both counts make the same
    ///    moves up to there, so the summed difference between our paper values and belenios' starts at 0 (whole
    ///    votes) and changes only at a surplus transfer of an option A: ours is ⌊surplus × value / total⌋ to five
    ///    decimals, belenios' value × surplus' / total' with its own total', and |c − c'| × total' ≤ the difference
    ///    already in A's papers (since quota ≤ total), so the difference at most doubles, plus what our truncation
    ///    lost at that stage (`lossFromTruncation`), plus 0.00001 for belenios' rounding (about 1e-14 votes here).
    ///    Any option's total, or two options' difference, is then off by at most `bound`.
    /// Blank rankings are left out of belenios' input (ours counts them in no quota: rule 45); weights are copies.
    /// Instant runoff is the one-seat case: it never transfers a surplus, so only ties (1) can set it apart.
    /// belenios' Schulze measures a link by (winning votes, losing votes), losing votes deciding only between equal
    /// winning votes; ours by winning votes alone. On complete rankings (no blank) winning + losing = the number of
    /// ballots for every pair, so the two orders of links coincide and the winners must be the same, ties included.
    @Test func countsAgreeWithBelenios() throws {
        let lot = testLot()
        var random = SplitMix64(seed: 0xBE1E)
        // As above, a profile whose instant runoff or STV decides a tie is drawn again, up to three times, and the
        // last draw kept either way (small profiles often leave options with no first preference, equal at 0).
        func draw(_ make: (inout SplitMix64) -> RankedProfile) -> RankedProfile {
            var profile: RankedProfile
            var draws = 0
            repeat {
                profile = make(&random)
                draws += 1
            } while draws < 4 && profile.decidesATie(lot: lot)
            return profile
        }
        var profiles = (0..<700).map { number in
            draw {
                randomProfile(&$0, options: 4...9, ballots: 30...150, seats: 2...5, maxWeight: number < 500 ? 1 : 3)
            }
        }
        profiles += (0..<400).map { _ in
            draw { completeRankings(randomProfile(&$0, options: 4...8, ballots: 20...100, seats: 2...5), &$0) }
        }
        guard let peers = try runPeers(profiles, peers: ["belenios"]) else { return }
        try #require(peers.count == profiles.count)
        var compared = (irv: 0, stv: 0, schulze: 0)
        var skippedIRV: [BeleniosDifference: Int] = [:]
        var skippedSTV: [BeleniosDifference: Int] = [:]
        for (index, (profile, peer)) in zip(profiles, peers).enumerated() {
            let label = Comment(rawValue: "profile \(index): \(profile)")
            let irv = STVCount.instantRunoff(profile.ballots, options: profile.options, lot: lot, question: 0)
            if let reason = irv.beleniosMayDiffer(profile) {
                skippedIRV[reason, default: 0] += 1
            } else {
                compared.irv += 1
                #expect(irv.elected == peer.irvBelenios, label)
            }
            let stv = STVCount.count(
                profile.ballots, options: profile.options, seats: profile.seats, lot: lot, question: 0)
            if let reason = stv.beleniosMayDiffer(profile) {
                skippedSTV[reason, default: 0] += 1
            } else {
                compared.stv += 1
                #expect(stv.elected.sorted() == peer.stvBelenios, label)
            }
            if profile.ballots.allSatisfy({ $0.ranking.count == profile.options }) {
                compared.schulze += 1
                let schulze = SchulzeCount.count(profile.ballots, options: profile.options, lot: lot, question: 0)
                #expect(schulze.winners == peer.schulzeBelenios, label)
            }
        }
        func listed(_ skipped: [BeleniosDifference: Int]) -> String {
            skipped.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key) \($0.value)" }
                .joined(separator: ", ")
        }
        let irvSkipped = listed(skippedIRV)
        print("belenios: \(profiles.count) profiles; instant runoff \(compared.irv) compared, skipped: \(irvSkipped)")
        print("belenios: Scottish STV \(compared.stv) compared, skipped: \(listed(skippedSTV))")
        print("belenios: Schulze \(compared.schulze) compared (complete rankings)")
        #expect(compared.irv * 10 >= profiles.count * 9)
        #expect(compared.stv * 10 >= profiles.count * 4)
        #expect(compared.schulze == 400)
    }
}

/// Why belenios-tool's STV may elect otherwise than ours (see `countsAgreeWithBelenios`).
enum BeleniosDifference: Int, CustomStringConvertible {
    case tie, unrankedOption, severalElectedAtOnce, nearTie

    var description: String {
        ["tie", "unranked option", "several elected at once", "near-tie"][rawValue]
    }
}

/// `profile` with every ranking completed by the options it left out, in random order, and no blank.
func completeRankings(_ profile: RankedProfile, _ random: inout SplitMix64) -> RankedProfile {
    var complete = profile
    complete.ballots = profile.ballots.map { ballot in
        let left = (0..<profile.options).filter { !ballot.ranking.contains($0) }.shuffled(using: &random)
        return RankedBallot(ranking: ballot.ranking + left, weight: ballot.weight)
    }
    return complete
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

    /// Why belenios-tool's STV may elect otherwise on `profile`, counted as this result was; `nil` when it must
    /// elect the same options (the cases are listed at `countsAgreeWithBelenios`).
    func beleniosMayDiffer(_ profile: RankedProfile) -> BeleniosDifference? {
        if decidedATie { return .tie }
        var ranked = Array(repeating: false, count: profile.options)
        for ballot in profile.ballots { for option in ballot.ranking { ranked[option] = true } }
        if ranked.contains(false) { return .unrankedOption }
        var bound: UInt64 = 0  // in 1/100000 votes
        var lost: UInt64 = 0
        var electedSoFar = 0
        for (number, stage) in stages.enumerated() {
            if case .surplusTransferred = stage.action {
                bound = 2 * bound + (stage.lossFromTruncation.units - lost) + 1
            }
            lost = stage.lossFromTruncation.units
            electedSoFar += stage.elected.count
            if case .electedByRemaining = stage.action { continue }
            if stage.elected.count > 1 {
                let least = stage.elected.map { stage.totals[$0].units }.min()!
                let surpluses = stage.elected.map { stage.totals[$0].units - quota.units }.reduce(0, +)
                let overtaker = stage.continuing.map { stage.totals[$0].units }.max() ?? 0
                if electedSoFar < seats || overtaker + surpluses + bound >= least { return .severalElectedAtOnce }
            }
            for option in stage.continuing + stage.elected {
                let total = stage.totals[option].units
                let clear = total >= quota.units ? total - quota.units >= bound : quota.units - total > bound
                if !clear { return .nearTie }
            }
            if number + 1 < stages.count, case .excluded(let excluded, _) = stages[number + 1].action {
                let lowest = stage.totals[excluded].units
                if stage.continuing.contains(where: { $0 != excluded && stage.totals[$0].units - lowest <= bound }) {
                    return .nearTie
                }
            }
        }
        return nil
    }

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

    var peers: [String]
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
    var irvBelenios: [Int]?
    var stvBelenios: [Int]?
    var schulzeBelenios: [Int]?

    enum CodingKeys: String, CodingKey {
        case schulze
        case irvPV = "irv_pv"
        case irvPRV = "irv_prv"
        case stv1PRV = "stv1_prv"
        case stvScottishPV = "stv_scot_pv"
        case stvPRV = "stv_prv"
        case irvBelenios = "irv_bel"
        case stvBelenios = "stv_bel"
        case schulzeBelenios = "schulze_bel"
    }
}

/// Runs `Tools/ranked_peers.py` (beside `Tests`, two directories above this file's) on `profiles` with `peers`
/// ("python": pref_voting and pyrankvote; "belenios": belenios-tool); `nil`, with the failure recorded in one line
/// (a failure, not a skip), when python3, its modules or belenios-tool are missing.
private func runPeers(_ profiles: [RankedProfile], peers: [String]) throws -> [PeerCounts]? {
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
    try JSONEncoder().encode(PeerInput(peers: peers, profiles: peerProfiles)).write(to: input)
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
