import Foundation

/// Reads a text file line by line in constant memory: a line longer than `maxLineBytes` is reported and
/// skipped without being held, so a bulk file with a 1 GB line cannot exhaust memory.
public struct LineReader {
    public enum Line: Equatable {
        case text(String)
        case tooLong
        case invalidUTF8
    }

    private let handle: FileHandle
    private let maxLineBytes: Int
    private var buffer: [UInt8] = []
    private var position = 0
    private var finished = false
    /// 1-based number of the line last returned.
    public private(set) var lineNumber = 0

    /// Opens `path`; fails with a one-line message if it is missing or a directory.
    public init(path: String, maxLineBytes: Int = 4096) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw VoteError(.notFound, "\(path): no such file")
        }
        guard !isDirectory.boolValue, let handle = FileHandle(forReadingAtPath: path) else {
            throw VoteError(.refused, "\(path): not a readable file")
        }
        self.handle = handle
        self.maxLineBytes = maxLineBytes
    }

    /// The next line without its "\n" (and "\r\n"), or `nil` at the end.
    public mutating func next() throws -> Line? {
        var line: [UInt8] = []
        var tooLong = false
        while true {
            if position == buffer.count {
                if finished { break }
                let chunk = try handle.read(upToCount: 1 << 20) ?? Data()
                if chunk.isEmpty {
                    finished = true
                    break
                }
                buffer = Array(chunk)
                position = 0
            }
            if let newline = Self.newline(in: buffer, from: position) {
                if !tooLong { line.append(contentsOf: buffer[position..<newline]) }
                position = newline + 1
                lineNumber += 1
                return finish(line, tooLong: tooLong || line.count > maxLineBytes)
            }
            if !tooLong { line.append(contentsOf: buffer[position...]) }
            position = buffer.count
            if line.count > maxLineBytes {
                tooLong = true
                line = []
            }
        }
        guard !line.isEmpty || tooLong else { return nil }
        lineNumber += 1
        return finish(line, tooLong: tooLong || line.count > maxLineBytes)
    }

    /// Index of the next "\n" at or after `from` (memchr: fast even in debug builds, on 1 GB lines).
    private static func newline(in buffer: [UInt8], from: Int) -> Int? {
        buffer.withUnsafeBytes { raw in
            guard let base = raw.baseAddress, from < raw.count,
                let found = memchr(base + from, 10, raw.count - from)
            else { return nil }
            return base.distance(to: UnsafeRawPointer(found))
        }
    }

    private func finish(_ bytes: [UInt8], tooLong: Bool) -> Line {
        if tooLong { return .tooLong }
        var bytes = bytes[...]
        if bytes.last == 13 { bytes = bytes.dropLast() }
        guard let text = String(validating: bytes, as: UTF8.self) else { return .invalidUTF8 }
        return .text(text)
    }
}
