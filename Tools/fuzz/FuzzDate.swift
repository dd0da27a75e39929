// libFuzzer target for the time parser and formatter (`Timestamp.parse`, `Timestamp.parseWindow`,
// `Timestamp.format`), which read every --registration/--voting argument and print every time a ledger holds.
//
// Must hold for every input: no trap; a parsed time in years 1...9999 formats to text that parses back to the
// same instant (and the formatted text is the canonical "YYYY-MM-DDTHH:MM:SS.mmmZ"); a relative time is
// `now` plus the amount; a window parses iff both its halves do, to the same values; `format` never traps
// for any Int64 (the input as a decimal integer: ledger times and place windows are any Int64 on disk).
import Foundation

/// First and last millisecond of years 1...9999, UTC.
private let representable: ClosedRange<Int64> = -62_135_596_800_000...253_402_300_799_999
private let now: Int64 = 1_795_000_000_000

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeRawBufferPointer(start: start, count: count), as: UTF8.self)

    if let time = Timestamp.parse(text, now: now) {
        if representable.contains(time) { checkRoundTrip(time) }
        if text.hasPrefix("+") {
            precondition(time >= now && (time - now) % 1000 == 0, "relative time is not now plus whole seconds")
        }
    }
    let window = Timestamp.parseWindow(text, now: now)
    let halves = text.split(separator: "/", omittingEmptySubsequences: false)
    if halves.count == 2, let start = Timestamp.parse(String(halves[0]), now: now),
        let end = Timestamp.parse(String(halves[1]), now: now)
    {
        precondition(window.map { $0 == (start, end) } == true, "window differs from its halves")
    } else {
        precondition(window == nil, "window parsed though a half does not")
    }

    if let value = Int64(text) {
        let formatted = Timestamp.format(value)
        if representable.contains(value) {
            checkRoundTrip(value)
        } else {
            precondition(Timestamp.parse(formatted, now: now) == nil, "a time outside years 1...9999 parses back")
        }
    }
    return 0
}

private func checkRoundTrip(_ time: Int64) {
    let formatted = Timestamp.format(time)
    precondition(
        formatted.utf8.count == 24 && formatted.hasSuffix("Z"), "format is not YYYY-MM-DDTHH:MM:SS.mmmZ: \(formatted)")
    precondition(
        Timestamp.parse(formatted, now: now) == time, "format/parse round trip failed: \(time) -> \(formatted)")
}
