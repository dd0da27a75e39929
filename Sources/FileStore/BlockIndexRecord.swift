import Ledger

/// One 32-byte record of `blocks.idx` per block: where its frame is and what tree size it ends at.
struct BlockIndexRecord {
    var location: BlockLocation
    var treeSize: UInt64
    var timestamp: Int64

    init(location: BlockLocation, header: BlockHeader) {
        self.location = location
        self.treeSize = header.treeSize
        self.timestamp = header.timestamp
    }

    var encoded: [UInt8] {
        var writer = ByteWriter(capacity: 32)
        writer.write(UInt32(location.segment))
        writer.write(UInt32(location.length))
        writer.write(location.offset)
        writer.write(treeSize)
        writer.write(UInt64(bitPattern: timestamp))
        return writer.bytes
    }

    init?(decoding bytes: [UInt8]) {
        guard bytes.count == 32,
            let record = try? ByteReader.reading(
                bytes,
                { (reader) throws(DecodeError) -> BlockIndexRecord in
                    let segment = try reader.read(UInt32.self, "index")
                    let length = try reader.read(UInt32.self, "index")
                    let offset = try reader.read(UInt64.self, "index")
                    let treeSize = try reader.read(UInt64.self, "index")
                    let timestamp = Int64(bitPattern: try reader.read(UInt64.self, "index"))
                    return BlockIndexRecord(
                        location: BlockLocation(segment: Int(segment), offset: offset, length: UInt64(length)),
                        treeSize: treeSize, timestamp: timestamp)
                })
        else { return nil }
        self = record
    }

    private init(location: BlockLocation, treeSize: UInt64, timestamp: Int64) {
        self.location = location
        self.treeSize = treeSize
        self.timestamp = timestamp
    }
}
