// libFuzzer target: date and window parsing never crash; a parsed time formats back to text that parses
// to the same instant.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeRawBufferPointer(start: start, count: count), as: UTF8.self)
    let now: Int64 = 1_795_000_000_000
    if let time = Timestamp.parse(text, now: now), time >= -62_135_596_800_000, time <= 253_402_300_799_999 {
        let formatted = Timestamp.format(time)
        precondition(Timestamp.parse(formatted, now: now) == time, "format/parse round trip failed")
    }
    _ = Timestamp.parseWindow(text, now: now)
    return 0
}
