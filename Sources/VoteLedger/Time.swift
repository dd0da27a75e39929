import Foundation

/// Wall-clock time and the ISO 8601 text form of block times. Only this layer reads the clock.
public enum Clock {
    /// Now, in ms since the Unix epoch, UTC.
    public static func now() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000 + testOffset
    }

    #if DEBUG
        /// Debug (test) builds only: `VOTE_TEST_CLOCK_OFFSET_MS` moves this process's clock forward, so the
        /// tests step through voting windows instead of sleeping through them and no test depends on how
        /// fast the machine is. A release build has no such variable: its clock is the system's.
        private static let testOffset: Int64 = {
            guard let text = ProcessInfo.processInfo.environment["VOTE_TEST_CLOCK_OFFSET_MS"] else { return 0 }
            guard let offset = Int64(text), offset >= 0 else { fatalError("VOTE_TEST_CLOCK_OFFSET_MS must be ms >= 0") }
            return offset
        }()
    #else
        private static let testOffset: Int64 = 0
    #endif
}

/// Strict ISO 8601 times with an explicit offset ("2026-11-22T09:00:00+09:00", "…Z", optional seconds
/// and fraction), plus relative forms for convenience: "now", "+90s", "+15m", "+2h", "+1d".
public enum Timestamp {
    /// Parses `text` relative to `now`; `nil` if it is not one of the accepted forms.
    public static func parse(_ text: String, now: Int64) -> Int64? {
        if text == "now" { return now }
        if text.hasPrefix("+") { return relative(text.dropFirst(), now: now) }
        let s = Array(text.utf8)
        func number(_ from: Int, _ count: Int) -> Int? {
            guard from + count <= s.count else { return nil }
            var value = 0
            for c in s[from..<from + count] {
                guard c >= 48 && c <= 57 else { return nil }
                value = value * 10 + Int(c - 48)
            }
            return value
        }
        guard s.count >= 17, let year = number(0, 4), s[4] == 45, let month = number(5, 2), s[7] == 45,
            let day = number(8, 2), s[10] == 84 || s[10] == 116, let hour = number(11, 2), s[13] == 58,
            let minute = number(14, 2)
        else { return nil }
        var index = 16
        var second = 0
        var millis = 0
        if index < s.count, s[index] == 58 {
            guard let value = number(index + 1, 2) else { return nil }
            second = value
            index += 3
            if index < s.count, s[index] == 46 {
                index += 1
                var digits = 0
                while index < s.count, s[index] >= 48, s[index] <= 57 {
                    if digits < 3 { millis = millis * 10 + Int(s[index] - 48) }
                    digits += 1
                    index += 1
                }
                guard digits > 0 else { return nil }
                if digits < 3 { for _ in digits..<3 { millis *= 10 } }
            }
        }
        guard index < s.count else { return nil }  // an offset is required
        var offsetMinutes = 0
        if s[index] == 90 || s[index] == 122 {
            index += 1
        } else {
            guard s[index] == 43 || s[index] == 45, let oh = number(index + 1, 2), s.count > index + 3,
                s[index + 3] == 58,
                let om = number(index + 4, 2), oh <= 23, om <= 59
            else { return nil }
            offsetMinutes = (oh * 60 + om) * (s[index] == 45 ? -1 : 1)
            index += 6
        }
        guard index == s.count, (1...9999).contains(year), (1...12).contains(month),
            (1...daysIn(month, year)).contains(day), hour <= 23, minute <= 59, second <= 59
        else { return nil }
        let days = daysFromCivil(year, month, day)
        let seconds = Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + second) - Int64(offsetMinutes * 60)
        return seconds * 1000 + Int64(millis)
    }

    /// `time` as "2026-11-22T09:00:00.000Z"; outside years 1-9999 (only a forged ledger holds such times),
    /// as raw milliseconds.
    public static func format(_ time: Int64) -> String {
        guard time >= -62_135_596_800_000, time <= 253_402_300_799_999 else { return "\(time) ms since 1970" }
        let millis = ((time % 1000) + 1000) % 1000
        let totalSeconds = (time - millis) / 1000
        let secondsOfDay = ((totalSeconds % 86_400) + 86_400) % 86_400
        let days = (totalSeconds - secondsOfDay) / 86_400
        let (year, month, day) = civilFromDays(Int(days))
        func pad(_ value: Int, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(Int(secondsOfDay / 3600), 2)):"
            + "\(pad(Int(secondsOfDay % 3600 / 60), 2)):\(pad(Int(secondsOfDay % 60), 2)).\(pad(Int(millis), 3))Z"
    }

    /// Parses "START/END" (each in any form `parse` accepts).
    public static func parseWindow(_ text: String, now: Int64) -> (Int64, Int64)? {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let start = parse(String(parts[0]), now: now),
            let end = parse(String(parts[1]), now: now)
        else { return nil }
        return (start, end)
    }

    private static func relative(_ text: Substring, now: Int64) -> Int64? {
        guard let unit = text.last, let amount = Int64(text.dropLast()), amount >= 0, amount <= 100_000_000 else {
            return nil
        }
        let scale: Int64
        switch unit {
        case "s": scale = 1000
        case "m": scale = 60_000
        case "h": scale = 3_600_000
        case "d": scale = 86_400_000
        default: return nil
        }
        return now + amount * scale
    }

    private static func daysIn(_ month: Int, _ year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    // Howard Hinnant's civil-from-days algorithms (proleptic Gregorian calendar).
    private static func daysFromCivil(_ y: Int, _ m: Int, _ d: Int) -> Int {
        let y = m <= 2 ? y - 1 : y
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    private static func civilFromDays(_ z: Int) -> (Int, Int, Int) {
        let z = z + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let y = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (m <= 2 ? y + 1 : y, m, d)
    }
}
