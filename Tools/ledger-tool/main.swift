import FileStore
import Ledger
import LedgerCrypto

// ledger-tool: a developer tool over the `Ledger` library, used by the crash and concurrency tests (as a
// real child process) and by Tools/bench-verify. Not the product CLI; that is `vote`.
//
//   ledger-tool create DIR [NAME]                 new ledger with a fresh authority key
//   ledger-tool append DIR BLOCKS EVENTS BYTES    append BLOCKS blocks of EVENTS events of BYTES bytes each,
//                                                 printing each block's height once it is durable
//   ledger-tool verify DIR                        verify the chain; print the report as JSON
#if canImport(Glibc)
    import Glibc
#endif

func fail(_ message: String, code: Int32 = 1) -> Never {
    standardErrorLog("ledger-tool: \(message)")
    exit(code)
}

func now() -> Int64 {
    var spec = timespec()
    clock_gettime(CLOCK_REALTIME, &spec)
    return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
}

func number(_ text: String) -> Int {
    guard let value = Int(text), value >= 0 else { fail("not a number: \(text)", code: 2) }
    return value
}

let arguments = Array(CommandLine.arguments.dropFirst())
do {
    switch arguments.first {
    case "create" where arguments.count >= 2:
        let ledger = try FileBlockStore.create(
            at: arguments[1], name: arguments.count > 2 ? arguments[2] : "ledger-tool", authority: Ed25519PrivateKey(),
            ledgerID: LedgerID.random(), timestamp: now())
        print("created \(arguments[1]) (ledger \(ledger.genesis.ledgerID))")
    case "append" where arguments.count == 5:
        let ledger = try FileBlockStore.open(at: arguments[1], lockTimeout: 0.2)
        let blocks = number(arguments[2])
        let perBlock = number(arguments[3])
        let size = number(arguments[4])
        var counter = ledger.frontier.size
        for _ in 0..<blocks {
            var events: [LedgerEvent] = []
            events.reserveCapacity(perBlock)
            for _ in 0..<perBlock {
                var payload = [UInt8](repeating: 0, count: size)
                withUnsafeBytes(of: counter.bigEndian) { raw in
                    for (index, byte) in raw.enumerated() where index < size { payload[index] = byte }
                }
                counter += 1
                events.append(LedgerEvent(type: 0x0100, payload: payload))
            }
            let header = try ledger.append(events, timestamp: now())
            print(header.height)
            fflush(nil)
        }
    case "verify" where arguments.count == 2:
        let report = try ChainVerifier.verify(FileBlockSource(path: arguments[1]))
        let megabytes = Double(report.bytes) / 1_000_000
        print(
            """
            {"blocks": \(report.blocks), "events": \(report.events), "bytes": \(report.bytes), \
            "height": \(report.height), "head_hash": "\(report.headHash)", "tree_root": "\(report.treeRoot)", \
            "seconds": \(report.seconds), "events_per_second": \(Int(Double(report.events) / report.seconds)), \
            "mb_per_second": \(Int(megabytes / report.seconds)), "torn_tail_bytes": \(report.tornTail?.bytes ?? 0)}
            """)
    default:
        fail("usage: ledger-tool create DIR [NAME] | append DIR BLOCKS EVENTS BYTES | verify DIR", code: 2)
    }
} catch let error as LedgerError {
    if case .busy = error { fail("\(error)", code: 4) }
    if case .damaged = error { fail("\(error)", code: 3) }
    fail("\(error)")
} catch {
    fail("\(error)")
}
