public import LedgerCrypto

/// Appends big-endian integers and raw bytes: the only way ledger structures are encoded, so the same
/// values always give the same bytes (invariant 7).
public struct ByteWriter {
    /// The bytes written so far.
    public private(set) var bytes: [UInt8]

    /// An empty writer with room for `capacity` bytes.
    public init(capacity: Int = 0) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Appends `value` big-endian.
    public mutating func write<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    /// Appends raw bytes.
    public mutating func write<Bytes: Sequence<UInt8>>(bytes more: Bytes) {
        bytes.append(contentsOf: more)
    }

    /// Appends a digest's 32 bytes.
    public mutating func write(_ digest: Digest) {
        digest.withUnsafeBytes { bytes.append(contentsOf: $0) }
    }
}

/// A decoding failure: what was being read and why it could not be.
public struct DecodeError: Error, Equatable, CustomStringConvertible {
    /// One line a person can read, e.g. "block header: truncated (needs 112 bytes, has 40)".
    public let message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }
}

/// Reads big-endian integers and byte runs from a buffer, refusing to read past its end.
public struct ByteReader {
    private let buffer: UnsafeRawBufferPointer
    /// Offset of the next byte to read.
    public private(set) var offset: Int

    /// A reader over `buffer`, which must outlive it.
    public init(_ buffer: UnsafeRawBufferPointer) {
        self.buffer = buffer
        self.offset = 0
    }

    /// Bytes not yet read.
    public var remaining: Int { buffer.count - offset }

    /// Reads a big-endian integer.
    public mutating func read<T: FixedWidthInteger>(
        _: T.Type, _ what: @autoclosure () -> String
    ) throws(DecodeError) -> T {
        let size = MemoryLayout<T>.size
        try need(size, what())
        var value: T = 0
        withUnsafeMutableBytes(of: &value) {
            $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + size]))
        }
        offset += size
        return T(bigEndian: value)
    }

    /// Reads `count` bytes without copying them.
    public mutating func readBuffer(
        _ count: Int, _ what: @autoclosure () -> String
    ) throws(DecodeError)
        -> UnsafeRawBufferPointer
    {
        try need(count, what())
        let slice = UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + count])
        offset += count
        return slice
    }

    /// Reads `count` bytes into an array.
    public mutating func readBytes(_ count: Int, _ what: @autoclosure () -> String) throws(DecodeError) -> [UInt8] {
        Array(try readBuffer(count, what()))
    }

    /// Reads a 32-byte digest.
    public mutating func readDigest(_ what: @autoclosure () -> String) throws(DecodeError) -> Digest {
        Digest(unsafeUninitializedReading: try readBuffer(Digest.byteCount, what()))
    }

    private func need(_ count: Int, _ what: @autoclosure () -> String) throws(DecodeError) {
        guard count >= 0, count <= remaining else {
            throw DecodeError("\(what()): truncated (needs \(count) bytes, has \(remaining))")
        }
    }
}

extension ByteReader {
    /// Runs `body` with a reader over `bytes`, keeping the typed decode error. (Inlinable, like the next, so
    /// that a decoder in another module calls it specialized: it runs once per event in a replay.)
    @inlinable
    public static func reading<T>(
        _ bytes: [UInt8], _ body: (inout ByteReader) throws(DecodeError) -> T
    )
        throws(DecodeError) -> T
    {
        try reading(bytes[...], body)
    }

    /// Runs `body` with a reader over `bytes` (an event's payload where it lies in its block, say), keeping
    /// the typed decode error.
    @inlinable
    public static func reading<T>(
        _ bytes: ArraySlice<UInt8>, _ body: (inout ByteReader) throws(DecodeError) -> T
    )
        throws(DecodeError) -> T
    {
        let result: Result<T, DecodeError> = bytes.withUnsafeBytes { raw in
            var reader = ByteReader(raw)
            do throws(DecodeError) { return .success(try body(&reader)) } catch { return .failure(error) }
        }
        return try result.get()
    }
}

extension ByteWriter {
    /// Appends a `string` field (FORMAT.md §11): a u32 byte length and its UTF-8.
    public mutating func writeString(_ text: String) {
        let utf8 = Array(text.utf8)
        write(UInt32(utf8.count))
        write(bytes: utf8)
    }

    /// Appends a `bytes` field: a u32 byte length and the bytes.
    public mutating func writeBytes(_ bytes: [UInt8]) {
        write(UInt32(bytes.count))
        write(bytes: bytes)
    }
}

extension ByteReader {
    /// Reads a u32-length-prefixed UTF-8 string, refusing invalid UTF-8.
    public mutating func readString(_ what: @autoclosure () -> String) throws(DecodeError) -> String {
        let length = try read(UInt32.self, what())
        let bytes = try readBytes(Int(length), what())
        guard let text = String(validating: bytes, as: UTF8.self) else { throw DecodeError("\(what()): invalid UTF-8") }
        return text
    }

    /// Reads a `bytes` field: a u32 byte length and that many bytes.
    public mutating func readBytes(_ what: @autoclosure () -> String) throws(DecodeError) -> [UInt8] {
        let length = try read(UInt32.self, what())
        return try readBytes(Int(length), what())
    }
}
