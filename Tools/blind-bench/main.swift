import BlindRSA
import Dispatch
import Foundation

/// Blind signatures per second: what issuing anonymous-ballot credentials costs the server.
///   blind-bench [SIGNATURES] [THREADS]   (defaults: 2000, the number of cores)
/// Generates a fresh 3072-bit place key, blinds SIGNATURES random credentials (not timed: the voters' devices
/// do that), then times BlindSign over all of them (each answer checked against its blinded message, as the
/// server does) on THREADS threads, and prints one JSON line. It reports the CPU time too: on a machine shared
/// with other work, signatures per CPU-second is the figure that load does not bend.
let arguments = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let count = arguments.first ?? 2000
let threads = arguments.dropFirst().first ?? ProcessInfo.processInfo.activeProcessorCount

let key = try BlindRSAPrivateKey()
let publicKey = key.publicKey
let blinded = try (0..<count).map { _ in
    try publicKey.blind(publicKey.prepare(Array("credential-\(UUID())".utf8))).blindedMessage
}

/// User and system CPU seconds this process has used so far, all threads.
func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    let total = [usage.ru_utime, usage.ru_stime].map { Double($0.tv_sec) + Double($0.tv_usec) / 1e6 }
    return total[0] + total[1]
}

let cpuStart = cpuSeconds()
let start = DispatchTime.now().uptimeNanoseconds
DispatchQueue.concurrentPerform(iterations: threads) { thread in
    for index in stride(from: thread, to: count, by: threads) {
        _ = try! key.blindSign(blinded[index])
    }
}
let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
let cpu = cpuSeconds() - cpuStart
print(
    #"{"modulus_bits":\#(publicKey.modulusBits),"signatures":\#(count),"threads":\#(threads),"#
        + #""seconds":\#(seconds),"signatures_per_second":\#((Double(count) / seconds).rounded()),"#
        + #""cpu_seconds":\#(cpu),"signatures_per_cpu_second":\#((Double(count) / cpu).rounded())}"#)
