import BlindRSA
import Crypto
import CryptoExtras
import Dispatch
import FileStore
import Foundation
import Ledger
import LedgerCrypto

/// Writes a ledger of VOTES votes for `Tools/bench-anonymous`, the fastest honest way: one place, two candidates,
/// VOTES voters authorised, and then either VOTES token votes (`token`, the baseline) or VOTES credentials issued
/// and VOTES anonymous votes (`anonymous`). Every event obeys the rules (FORMAT.md §11), so `vote verify`
/// accepts the ledger and has to check every one of them, signatures included.
///
///   anonymous-ledger DIR VOTES token|anonymous [THREADS]   (THREADS: default every core)
///
/// An anonymous vote's signature is made by signing its 64-byte credential (the RFC 9474 prepared message)
/// with the place key directly (RSASSA-PSS, SHA-384, MGF1-SHA-384, 48-byte salt), on THREADS threads: the
/// signature a voter's Finalize yields from a blind signature, without the blinding and unblinding around it,
/// which cost the voters' devices, not the server, and change nothing verify does. Each issuance event names
/// 32 random bytes as its blinded message's hash, which no rule reads. Events go 10,000 to a block.
/// Prints one JSON line: the events written, the signing time (wall and CPU), and the CPU time one signature check takes.
let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count >= 3, let votes = Int(arguments[1]), votes > 0, ["token", "anonymous"].contains(arguments[2])
else {
    standardErrorLog("usage: anonymous-ledger DIR VOTES token|anonymous [THREADS]")
    exit(2)
}
let anonymous = arguments[2] == "anonymous"
let threads = arguments.count > 3 ? Int(arguments[3]) ?? 1 : ProcessInfo.processInfo.activeProcessorCount
let perBlock = 10_000

// MARK: - Events (FORMAT.md §11.1)

func be<T: FixedWidthInteger>(_ value: T) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }
func str(_ text: String) -> [UInt8] { be(UInt32(text.utf8.count)) + Array(text.utf8) }
func bytes(_ value: [UInt8]) -> [UInt8] { be(UInt32(value.count)) + value }
func digest(_ text: String) -> [UInt8] { Array(Crypto.SHA256.hash(data: Array(text.utf8))) }
func randomBytes(_ count: Int) -> [UInt8] { try! SecureRandom.bytes(count) }
func event(_ type: UInt16, _ parts: [UInt8]...) -> LedgerEvent {
    LedgerEvent(type: type, payload: parts.flatMap { $0 })
}

/// User and system CPU seconds this process has used so far, all threads.
func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    let total = [usage.ru_utime, usage.ru_stime].map { Double($0.tv_sec) + Double($0.tv_usec) / 1e6 }
    return total[0] + total[1]
}

let t: Int64 = 1_800_000_000_000
let voting = (start: t + 3000, end: t + 4000)
let placeKey = anonymous ? try BlindRSAPrivateKey() : nil
let signingKey = try placeKey.map { try _RSA.Signing.PrivateKey(derRepresentation: $0.derRepresentation) }

let ledger = try FileBlockStore.create(
    at: arguments[0], name: "bench \(arguments[2]) \(votes)", authority: Ed25519PrivateKey(),
    ledgerID: LedgerID.random(), timestamp: t - 1, log: { _ in })

var place =
    be(UInt32(1)) + str("Bench") + str("") + be(t + 1000) + be(t + 2000) + be(voting.start) + be(voting.end)
    + be(UInt32(0))
if let placeKey { place += be(UInt32(2)) + bytes(placeKey.publicKey.derRepresentation) }
_ = try ledger.append([event(0x0101, place)], timestamp: t)
_ = try ledger.append(
    [
        event(0x0102, be(UInt32(1)), be(UInt32(1)), str("Ann"), str("")),
        event(0x0102, be(UInt32(1)), be(UInt32(2)), str("Bob"), str("")),
    ], timestamp: t + 1500)

/// Appends `count` events, made by `make` for each range of `perBlock` indices, one block each at time `time`.
@MainActor func appendAll(_ count: Int, at time: Int64, _ make: (Range<Int>) throws -> [LedgerEvent]) throws {
    for start in stride(from: 0, to: count, by: perBlock) {
        _ = try ledger.append(make(start..<min(start + perBlock, count)), timestamp: time)
    }
}

try appendAll(votes, at: t + 1600) { range in
    range.map { event(0x0104, be(UInt32(1)), digest("tag \($0)"), digest("code \($0)")) }
}
var signingSeconds = 0.0
var signingCPU = 0.0
if let signingKey {
    try appendAll(votes, at: t + 2500) { range in
        range.map { event(0x0109, be(UInt32(1)), digest("code \($0)"), randomBytes(32)) }
    }
    try appendAll(votes, at: t + 3500) { range in
        let credentials = range.map { _ in randomBytes(64) }
        let signatures = Locked([Int: [UInt8]]())
        let start = DispatchTime.now().uptimeNanoseconds
        let cpu = cpuSeconds()
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            var mine: [Int: [UInt8]] = [:]
            for index in stride(from: thread, to: credentials.count, by: threads) {
                mine[index] = Array(
                    try! signingKey.signature(for: SHA384.hash(data: credentials[index]), padding: .PSS)
                        .rawRepresentation)
            }
            signatures.withLock { $0.merge(mine) { a, _ in a } }
        }
        signingSeconds += Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        signingCPU += cpuSeconds() - cpu
        let signed = signatures.withLock { $0 }
        // The signature a voter's Finalize gives, as the place's public key checks it (RFC 9474 §4.5).
        precondition(placeKey!.publicKey.isValidSignature(signed[0]!, for: credentials[0]))
        return credentials.indices.map {
            event(
                0x010A, be(UInt32(1)), be(UInt32(1 + $0 % 2)), bytes(credentials[$0]), bytes(signed[$0]!))
        }
    }
} else {
    try appendAll(votes, at: t + 3500) { range in
        range.map { event(0x0105, be(UInt32(1)), be(UInt32(1 + $0 % 2)), digest("code \($0)")) }
    }
}

let events = ledger.frontier.size
ledger.close()

/// The cost of one signature check on one core, what `vote verify` cannot avoid per anonymous vote: 2,000
/// signatures made here checked with the place's public key, as replay checks them, on this one thread. In CPU
/// seconds, so that other work on the machine does not bend it.
var checkCPUSeconds = 0.0
if let signingKey, let publicKey = placeKey?.publicKey {
    let credentials = (0..<2000).map { _ in randomBytes(64) }
    let signatures = try credentials.map {
        Array(try signingKey.signature(for: SHA384.hash(data: $0), padding: .PSS).rawRepresentation)
    }
    let cpu = cpuSeconds()
    for (credential, signature) in zip(credentials, signatures) {
        precondition(publicKey.isValidSignature(signature, for: credential))
    }
    checkCPUSeconds = (cpuSeconds() - cpu) / Double(credentials.count)
}
print(
    #"{"ballot":"\#(arguments[2])","votes":\#(votes),"events":\#(events),"threads":\#(threads),"#
        + #""signing_seconds":\#(signingSeconds),"signing_cpu_seconds":\#(signingCPU),"#
        + #""signature_check_cpu_seconds":\#(checkCPUSeconds)}"#)
