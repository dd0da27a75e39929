import Foundation
import TestSupport
import Testing
import VoteCommandLine
import VoteLedger

/// The QR encoder against an independent decoder: each symbol is rendered to a PNG (`PNGImage`, written here)
/// and read back by `zbarimg` (Debian's zbar-tools), for links of several lengths and so several versions.
@Suite struct QRCodeTests {
    @Test(arguments: [1, 14, 60, 106, 180, 214, 400, 1000, 2331])
    func zbarimgReadsWhatWasEncoded(length: Int) throws {
        let link = Array("https://vote.example.org/#/booth/12?t=ABCDEFGHIJKLMNOPQRSTUVWXYZ234567B")
        let text = String((0..<length).map { link[$0 % link.count] })
        let code = try QRCode(bytes: Array(text.utf8))
        #expect(code.size == 17 + 4 * code.version)
        let directory = NSTemporaryDirectory() + "qr-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let png = directory + "/code.png"
        try Data(PNGImage.render(code, scale: 4)).write(to: URL(fileURLWithPath: png))
        let decoded = try Self.zbarimg(png)
        #expect(decoded == "QR-Code:" + text + "\n", "version \(code.version)")
    }

    /// The smallest version that holds the bytes at level M is chosen: 14 bytes fit version 1, 15 need 2; 181 need
    /// version 10 (where the count takes 16 bits), more than 2331 fit none.
    @Test func versionsFollowTheCapacity() throws {
        #expect(try QRCode(bytes: Array(repeating: 65, count: 14)).version == 1)
        #expect(try QRCode(bytes: Array(repeating: 65, count: 15)).version == 2)
        #expect(try QRCode(bytes: Array(repeating: 65, count: 180)).version == 9)
        #expect(try QRCode(bytes: Array(repeating: 65, count: 181)).version == 10)
        #expect(try QRCode(bytes: Array(repeating: 65, count: 213)).version == 10)
        #expect(try QRCode(bytes: Array(repeating: 65, count: 214)).version == 11)
        #expect(try QRCode(bytes: Array(repeating: 65, count: 2331)).version == 40)
        #expect(throws: QRCode.TooLong.self) { try QRCode(bytes: Array(repeating: 65, count: 2332)) }
    }

    static func zbarimg(_ path: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/zbarimg")
        // Only QR codes: a linear symbology may find a stray pattern in a large symbol.
        process.arguments = ["-q", "-Sdisable", "-Sqrcode.enable", path]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}

/// A minimal PNG writer (8-bit greyscale, zlib stored blocks, CRC-32 and Adler-32), so the decoder reads a file
/// no library of ours or theirs drew.
enum PNGImage {
    /// The symbol with its four-module quiet zone, `scale` pixels a module.
    static func render(_ code: QRCode, scale: Int) -> [UInt8] {
        let side = (code.size + 8) * scale
        var raw: [UInt8] = []
        for y in 0..<side {
            raw.append(0)  // filter: none
            for x in 0..<side {
                let (column, row) = (x / scale - 4, y / scale - 4)
                let inside = (0..<code.size).contains(column) && (0..<code.size).contains(row)
                raw.append(inside && code[column, row] ? 0 : 255)
            }
        }
        var header: [UInt8] = []
        header += bigEndian(UInt32(side)) + bigEndian(UInt32(side))
        header += [8, 0, 0, 0, 0]  // 8 bits, greyscale, deflate, no filter method, no interlace
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", header) + chunk("IDAT", zlib(raw))
            + chunk("IEND", [])
    }

    static func zlib(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let count = min(65535, data.count - offset)
            let final: UInt8 = offset + count == data.count ? 1 : 0
            out += [final, UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8((~count >> 8) & 0xFF)]
            out += data[offset..<offset + count]
            offset += count
        } while offset < data.count
        var (a, b): (UInt32, UInt32) = (1, 0)
        for byte in data {
            a = (a + UInt32(byte)) % 65521
            b = (b + a) % 65521
        }
        return out + bigEndian(b << 16 | a)
    }

    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let body = Array(type.utf8) + data
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in body {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return bigEndian(UInt32(data.count)) + body + bigEndian(~crc)
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }
}
