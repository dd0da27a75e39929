import Foundation

/// Reads a text file line by line in constant memory: a line longer than `maxLineBytes` is reported and
/// skipped without being held, so a bulk file with a 1 GB line cannot exhaust memory. Also reads text
/// already in memory (a request's body), line by line alike.
public struct LineReader {
    /// A line as `withNextLine` hands it over.
    public enum Line {
        /// The line's bytes without its "\n" (and "\r\n"), valid only during the call: a line that lies
        /// in the read buffer is not copied, and no string is made (a bulk file has millions of lines).
        case bytes(UnsafeBufferPointer<UInt8>)
        case tooLong
    }

    /// The file; `nil` for text in memory, which is all in `buffer`.
    private let handle: FileHandle?
    private let maxLineBytes: Int
    private var buffer: [UInt8] = []
    private var position = 0
    private var finished = false
    /// The start of a line that runs past the end of `buffer`, kept while the next chunk is read.
    private var carried: [UInt8] = []
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

    /// Reads the lines of `bytes`.
    public init(bytes: [UInt8], maxLineBytes: Int = 4096) {
        handle = nil
        self.maxLineBytes = maxLineBytes
        buffer = bytes
        finished = true
    }

    /// `body` with the next line, or `nil` at the end of the file.
    public mutating func withNextLine<Result>(_ body: (Line) throws -> Result) throws -> Result? {
        var tooLong = false
        carried.removeAll(keepingCapacity: true)
        while true {
            if position == buffer.count {
                if finished { break }
                let chunk = try handle?.read(upToCount: 1 << 20) ?? Data()
                if chunk.isEmpty {
                    finished = true
                    break
                }
                buffer = Array(chunk)
                position = 0
            }
            if let newline = Self.newline(in: buffer, from: position) {
                let start = position
                position = newline + 1
                lineNumber += 1
                if carried.isEmpty && !tooLong {
                    return try buffer.withUnsafeBufferPointer {
                        try hand(UnsafeBufferPointer(rebasing: $0[start..<newline]), tooLong: false, to: body)
                    }
                }
                if !tooLong { carried.append(contentsOf: buffer[start..<newline]) }
                return try carried.withUnsafeBufferPointer { try hand($0, tooLong: tooLong, to: body) }
            }
            if !tooLong { carried.append(contentsOf: buffer[position...]) }
            position = buffer.count
            if carried.count > maxLineBytes {
                tooLong = true
                carried = []
            }
        }
        guard !carried.isEmpty || tooLong else { return nil }
        lineNumber += 1
        return try carried.withUnsafeBufferPointer { try hand($0, tooLong: tooLong, to: body) }
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

    /// `body` with `line` (its "\n" already gone) without a final "\r", or told it was too long.
    private func hand<Result>(
        _ line: UnsafeBufferPointer<UInt8>, tooLong: Bool, to body: (Line) throws -> Result
    ) rethrows -> Result {
        if tooLong || line.count > maxLineBytes { return try body(.tooLong) }
        return try body(.bytes(line.last == 13 ? UnsafeBufferPointer(rebasing: line.dropLast()) : line))
    }
}
