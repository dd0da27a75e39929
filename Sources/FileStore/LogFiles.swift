import Ledger
import LedgerCrypto

#if canImport(Glibc)
    import Glibc
#endif

/// The files of a ledger directory (FORMAT.md §5).
public struct LedgerDirectory: Sendable {
    /// The directory path as given.
    public let path: String

    public init(_ path: String) { self.path = path }

    public var lockPath: String { path + "/lock" }
    public var publicKeyPath: String { path + "/authority.pub" }
    public var blockIndexPath: String { path + "/blocks.idx" }
    public var leafIndexPath: String { path + "/leaves.idx" }
    public var nodesIndexPath: String { path + "/nodes.idx" }
    public var frontierPath: String { path + "/frontier.idx" }

    /// File name of segment `number`, e.g. "segment-00000003.vlseg".
    public static func segmentName(_ number: Int) -> String {
        let digits = String(number)
        return "segment-" + String(repeating: "0", count: max(0, 8 - digits.count)) + digits + ".vlseg"
    }

    public func segmentPath(_ number: Int) -> String { path + "/" + LedgerDirectory.segmentName(number) }

    /// Number of segments, checking they are numbered 0, 1, … without gaps.
    func segmentCount() throws(LedgerError) -> Int {
        switch FileSystem.kind(path) {
        case .missing: throw LedgerError.notALedger(path: path, reason: "no such directory")
        case .file, .other: throw LedgerError.notALedger(path: path, reason: "it is not a directory")
        case .directory: break
        }
        let numbers = try FileSystem.list(path).compactMap { name -> Int? in
            let digits = name.utf8.dropFirst(8).dropLast(6)
            guard name.hasPrefix("segment-"), name.hasSuffix(".vlseg"), digits.count == 8,
                digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
            else { return nil }
            return Int(name.dropFirst(8).dropLast(6))
        }.sorted()
        guard !numbers.isEmpty else {
            throw LedgerError.notALedger(path: path, reason: "no segment files (segment-00000000.vlseg missing)")
        }
        for (expected, number) in numbers.enumerated() where number != expected {
            throw LedgerError.notALedger(path: path, reason: "\(LedgerDirectory.segmentName(expected)) is missing")
        }
        return numbers.count
    }
}

/// The 32-byte header that starts every segment file.
struct SegmentHeader: Equatable {
    static let size = 32
    static let magic = Array("VOTELEDG".utf8)

    var number: UInt32
    /// Height of the first block in this segment.
    var firstHeight: UInt64

    var encoded: [UInt8] {
        var writer = ByteWriter(capacity: SegmentHeader.size)
        writer.write(bytes: SegmentHeader.magic)
        writer.write(LedgerFormat.version)
        writer.write(UInt16(0))
        writer.write(number)
        writer.write(firstHeight)
        writer.write(UInt64(0))
        return writer.bytes
    }

    init(number: UInt32, firstHeight: UInt64) {
        self.number = number
        self.firstHeight = firstHeight
    }

    init(decoding bytes: [UInt8]) throws(DecodeError) {
        self = try ByteReader.reading(bytes) { (reader) throws(DecodeError) -> SegmentHeader in
            guard try reader.readBytes(8, "segment header") == SegmentHeader.magic else {
                throw DecodeError("not a ledger segment (bad magic)")
            }
            let version = try reader.read(UInt16.self, "segment header")
            guard version == LedgerFormat.version else {
                throw DecodeError(
                    "unknown format version \(version) (this build reads version \(LedgerFormat.version))")
            }
            guard try reader.read(UInt16.self, "segment header") == 0 else {
                throw DecodeError("segment header: reserved field is not 0")
            }
            let number = try reader.read(UInt32.self, "segment header")
            let first = try reader.read(UInt64.self, "segment header")
            guard try reader.read(UInt64.self, "segment header") == 0 else {
                throw DecodeError("segment header: reserved field is not 0")
            }
            return SegmentHeader(number: number, firstHeight: first)
        }
    }
}

/// A block as stored in a segment: "VLBK", the block length and its CRC-32C (all big-endian), then the block.
enum Frame {
    static let magic = Array("VLBK".utf8)
    static let headerSize = 12
    /// The smallest possible block: header, signature, one event of just a type tag.
    static let minBlockSize = LedgerFormat.headerSize + LedgerFormat.signatureSize + 4 + 2

    static func encode(_ block: [UInt8]) -> [UInt8] {
        var writer = ByteWriter(capacity: headerSize + block.count)
        writer.write(bytes: magic)
        writer.write(UInt32(block.count))
        writer.write(CRC32C.checksum(block))
        writer.write(bytes: block)
        return writer.bytes
    }

    /// Whether `frame` is one whole frame as `encode` makes it: marker, length and CRC-32C of the block.
    /// Checked in place (a block is up to megabytes, and a header lookup checks the frame it reads).
    static func isIntact(_ frame: [UInt8]) -> Bool {
        guard frame.count >= headerSize, frame[0..<4].elementsEqual(magic) else { return false }
        func field(_ offset: Int) -> UInt32 { frame[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) } }
        return Int(field(4)) == frame.count - headerSize
            && frame.withUnsafeBytes {
                field(8) == CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[headerSize...]))
            }
    }
}

/// Where a block is stored.
public struct BlockLocation: Equatable, Sendable {
    public var segment: Int
    /// Byte offset of the frame in the segment file.
    public var offset: UInt64
    /// Frame length (frame header plus block).
    public var length: UInt64
}

/// Streams the frames of a ledger directory in order from a starting point, checking frame checksums and
/// segment headers. A bad frame in the last segment with no evidence of damage after it (see
/// `ChainAuthority`) is a torn tail: the scan ends there and reports it. Any other bad frame is damage and
/// throws.
struct LogScanner {
    /// Bytes read ahead at once, so that small frames do not cost a read each. Larger blocks are read
    /// straight into their own storage.
    private static let readAhead = 64 << 10

    let directory: LedgerDirectory
    let segmentCount: Int
    /// The ledger's authority, once the genesis block has been read; without it (a scan reading the
    /// genesis block) any later valid frame is evidence of damage, as a genesis block is never torn (§8.1).
    let authority: ChainAuthority?
    private(set) var segment: Int
    private(set) var offset: UInt64
    /// Height of the next block the scan yields.
    private(set) var height: UInt64
    /// Set once the scan has ended at a torn tail.
    private(set) var tail: TornTail?

    private var file: File?
    private var fileSize: UInt64 = 0
    /// Read-ahead storage, kept from read to read: `buffer[0..<buffered]` are the bytes from `bufferStart`.
    private var buffer: [UInt8] = []
    private var buffered = 0
    private var bufferStart: UInt64 = 0

    /// A scan from the start of the ledger.
    init(directory: LedgerDirectory, segmentCount: Int, authority: ChainAuthority?) {
        self.init(
            directory: directory, segmentCount: segmentCount, authority: authority, segment: 0, offset: 0, height: 0)
    }

    /// A scan resuming at frame `offset` of `segment` (0 means "at the segment header"), whose next block is `height`.
    init(
        directory: LedgerDirectory, segmentCount: Int, authority: ChainAuthority?, segment: Int, offset: UInt64,
        height: UInt64
    ) {
        self.directory = directory
        self.segmentCount = segmentCount
        self.authority = authority
        self.segment = segment
        self.offset = offset
        self.height = height
    }

    /// The next block's bytes and location, or `nil` at the end of the log (or at a torn tail).
    mutating func next() throws(LedgerError) -> (block: [UInt8], location: BlockLocation)? {
        while segment < segmentCount {
            if file == nil { guard try openSegment() else { return nil } }
            if offset == fileSize {
                if segment + 1 == segmentCount { return nil }
                segment += 1
                offset = 0
                file = nil
                continue
            }
            let frameOffset = offset
            switch try frame(at: frameOffset) {
            case .valid(let block):
                let length = UInt64(Frame.headerSize + block.count)
                offset += length
                height += 1
                return (block, BlockLocation(segment: segment, offset: frameOffset, length: length))
            case .invalid(let reason):
                if segment + 1 == segmentCount, try !damageEvidence(after: frameOffset) {
                    tail = TornTail(
                        segment: segment, offset: frameOffset, bytes: fileSize - frameOffset, wholeSegment: false)
                    return nil
                }
                throw damage(reason, at: frameOffset)
            }
        }
        return nil
    }

    /// The damage error for the block about to be read (or, with `height`, a block already read).
    func damage(_ reason: String, at offset: UInt64, height: UInt64? = nil) -> LedgerError {
        .damaged(
            height: height ?? self.height, file: LedgerDirectory.segmentName(segment), offset: offset, reason: reason)
    }

    /// Opens the current segment and checks its header; `false` if it is a torn (incomplete) new segment.
    private mutating func openSegment() throws(LedgerError) -> Bool {
        let path = directory.segmentPath(segment)
        let opened = try File.openForReading(path)
        file = opened
        fileSize = try opened.size()
        buffered = 0
        bufferStart = 0
        let headerBytes = try opened.read(at: 0, count: SegmentHeader.size)
        if headerBytes.count < SegmentHeader.size, segment + 1 == segmentCount, segment > 0 {
            tail = TornTail(segment: segment, offset: 0, bytes: fileSize, wholeSegment: true)
            return false
        }
        let header: SegmentHeader
        do { header = try SegmentHeader(decoding: headerBytes) } catch {
            if segment == 0 { throw LedgerError.notALedger(path: path, reason: error.message) }
            throw damage(
                error.message.hasPrefix("segment header") ? error.message : "segment header: \(error.message)", at: 0)
        }
        guard header.number == UInt32(segment) else {
            throw damage("segment header names segment \(header.number)", at: 0)
        }
        if offset == 0 {
            guard header.firstHeight == height else {
                throw damage("segment header says it starts at block \(header.firstHeight)", at: 0)
            }
            offset = UInt64(SegmentHeader.size)
        }
        return true
    }

    private enum FrameCheck {
        case valid([UInt8])
        case invalid(String)
    }

    private mutating func frame(at frameOffset: UInt64) throws(LedgerError) -> FrameCheck {
        let available = fileSize - frameOffset
        guard available >= UInt64(Frame.headerSize) else { return .invalid("incomplete frame header") }
        let head = try bufferRange(at: frameOffset, count: Frame.headerSize)
        /// The big-endian u32 at `offset` of the frame header.
        func field(_ offset: Int) -> UInt32 {
            buffer[head.lowerBound + offset..<head.lowerBound + offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
        }
        guard buffer[head.prefix(4)].elementsEqual(Frame.magic) else { return .invalid("frame marker missing") }
        let length = Int(field(4))
        let checksum = field(8)
        guard length >= Frame.minBlockSize, length <= LedgerFormat.maxBlockSize else {
            return .invalid("frame length \(length) out of range")
        }
        guard UInt64(Frame.headerSize + length) <= available else {
            return .invalid("frame runs past the end of the file")
        }
        let block = try bytes(at: frameOffset + UInt64(Frame.headerSize), count: length)
        guard CRC32C.checksum(block) == checksum else { return .invalid("frame checksum mismatch") }
        return .valid(block)
    }

    /// Whether a valid frame starts after the invalid one at `start` in the current segment and, once the
    /// authority is known, holds a block it signed above the expected height (FORMAT.md §6).
    private mutating func damageEvidence(after start: UInt64) throws(LedgerError) -> Bool {
        let rest = try bytes(at: start, count: Int(fileSize - start))
        var index = 1
        while index + Frame.headerSize <= rest.count {
            if rest[index] == Frame.magic[0], rest[index + 1] == Frame.magic[1], rest[index + 2] == Frame.magic[2],
                rest[index + 3] == Frame.magic[3], case .valid(let block) = try frame(at: start + UInt64(index)),
                authority?.signs(block, above: height) ?? true
            {
                return true
            }
            index += 1
        }
        return false
    }

    /// `count` bytes at `position` of the current segment: through the read-ahead buffer if they fit in it,
    /// else read straight into their own array.
    private mutating func bytes(at position: UInt64, count: Int) throws(LedgerError) -> [UInt8] {
        if count <= LogScanner.readAhead { return Array(buffer[try bufferRange(at: position, count: count)]) }
        let file = file!
        var outcome: Result<Void, LedgerError> = .success(())
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { storage, initialized in
            outcome = Result { () throws(LedgerError) in
                try file.read(into: UnsafeMutableRawBufferPointer(storage), at: position)
            }
            initialized = count
        }
        try outcome.get()
        return bytes
    }

    /// Where `count` (at most `readAhead`) bytes at `position` of the current segment are in the read-ahead
    /// buffer, reading ahead from `position` if they are not all there.
    private mutating func bufferRange(at position: UInt64, count: Int) throws(LedgerError) -> Range<Int> {
        if position < bufferStart || position + UInt64(count) > bufferStart + UInt64(buffered) {
            if buffer.isEmpty { buffer = [UInt8](repeating: 0, count: LogScanner.readAhead) }
            let want = Int(min(UInt64(LogScanner.readAhead), fileSize - position))
            let file = file!
            buffered = 0
            bufferStart = position
            try buffer.withUnsafeMutableBytes { raw in
                Result { () throws(LedgerError) in
                    try file.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[0..<want]), at: position)
                }
            }.get()
            buffered = want
        }
        let from = Int(position - bufferStart)
        return from..<from + count
    }
}

extension File {
    /// Fills `target` with the bytes at `offset`, which must all be in the file: a scan reads segments
    /// straight into the storage it keeps, with no array of its own per read.
    fileprivate func read(into target: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(LedgerError) {
        var done = 0
        while done < target.count {
            let n = pread(descriptor, target.baseAddress! + done, target.count - done, off_t(offset) + off_t(done))
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                throw LedgerError.io("reading \(path): \(n == 0 ? "it shrank while being read" : errnoText())")
            }
            done += n
        }
    }
}
