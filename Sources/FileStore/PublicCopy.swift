public import Ledger

#if canImport(Glibc)
    import Glibc
#endif

extension FileBlockSource {
    /// The files of a public copy besides the segments: what a reader uses (the indexes it may start from,
    /// FORMAT.md §5.9) and the convenience copy of the public key. Never a key file, the lock, or anything an
    /// application keeps beside the ledger.
    static let publicFiles: [(name: String, recordsOf: @Sendable (BlockHeader) -> UInt64)] = [
        ("blocks.idx", { $0.height + 1 }), ("leaves.idx", { $0.treeSize }),
        ("nodes.idx", { $0.treeSize / NodeIndex.groupSize }),
    ]

    /// Writes a public copy of this ledger at `path`, which must not exist (or be an empty directory): the log
    /// up to its last complete block (a torn tail, such as an append in progress, is left out), `blocks.idx`,
    /// `leaves.idx` and `nodes.idx` cut to that block, `authority.pub`, and the files `extra` makes for the
    /// copy (given a reader of it: a signed head). Nothing secret is copied, because nothing is copied by
    /// kind: only the files named here. The directory (0755, files 0644: anyone may read it) appears complete
    /// or not at all. Takes no lock and changes nothing in this ledger. Returns the copy's head.
    ///
    /// `shown`, given each block in order, answers the block as the copy holds it: the same header and
    /// signature, with events withheld (`WithheldEvent`) where the application holds them back for now. The
    /// copy's frames and `blocks.idx` are then written anew; its tree, and so `leaves.idx` and `nodes.idx`, are
    /// the ledger's.
    public func writePublicCopy(
        to path: String, shown: ((EncodedBlock) throws -> EncodedBlock)? = nil,
        extra: (FileBlockSource) throws -> [(name: String, contents: [UInt8])] = { _ in [] }
    ) throws -> BlockHeader {
        var path = path
        while path.count > 1, path.hasSuffix("/") { path.removeLast() }
        try FileBlockStore.requireFreeTarget(path, what: "already exists")
        let staging = LedgerDirectory(path + ".publishing-\(getpid())")
        try FileSystem.makeDirectory(staging.path, mode: 0o755)
        do {
            if let shown {
                try writeShownSegments(to: staging, shown)
            } else {
                try copySegments(to: staging)
            }
            let head = try FileBlockSource(path: staging.path).lastBlock()
            for (name, records) in Self.publicFiles where FileSystem.kind(directory.path + "/" + name) == .file {
                // The frames were written anew: `writeShownSegments` wrote their `blocks.idx`.
                if shown != nil, name == "blocks.idx" { continue }
                try Self.copy(directory.path + "/" + name, to: staging.path + "/" + name, length: records(head) * 32)
            }
            try Self.copy(directory.publicKeyPath, to: staging.publicKeyPath, length: nil)
            for file in try extra(try FileBlockSource(path: staging.path)) {
                try FileSystem.createFile(
                    staging.path + "/" + file.name, contents: file.contents, mode: 0o644, io: PosixIO.shared)
            }
            try PosixIO.shared.syncDirectory(staging.path)
            do { try PosixIO.shared.rename(staging.path, path) } catch {
                try FileBlockStore.requireFreeTarget(path, what: "appeared while the copy was being written")
                throw error
            }
            try PosixIO.shared.syncDirectory(FileBlockStore.parentDirectory(of: path))
            return head
        } catch {
            FileBlockStore.removeStaging(staging)
            throw error
        }
    }

    /// Copies the segments into `staging` up to the last complete block, byte for byte.
    private func copySegments(to staging: LedgerDirectory) throws {
        // Where each segment's complete blocks end.
        var ends: [String: UInt64] = [:]
        var lastSegment = ""
        _ = try scanBlocks(from: 0) { _, place in
            ends[place.file] = place.offset + place.length
            lastSegment = place.file
            return true
        }
        for number in 0..<segmentCount {
            let name = LedgerDirectory.segmentName(number)
            try Self.copy(
                directory.path + "/" + name, to: staging.path + "/" + name,
                length: ends[name] ?? UInt64(SegmentHeader.size))
            if name == lastSegment { break }
        }
    }

    /// Writes into `staging` every complete block as `shown` answers it, each in a new frame in the segment of
    /// the same number that holds it here (behind that segment's header, copied), and `blocks.idx` for them.
    private func writeShownSegments(
        to staging: LedgerDirectory, _ shown: (EncodedBlock) throws -> EncodedBlock
    ) throws {
        var output: (number: Int, file: File, end: UInt64)?
        var records: [UInt8] = []
        /// Closes the open segment and starts every segment after it up to `number`, each with its header.
        func start(_ number: Int) throws {
            try output?.file.sync()
            for next in (output.map { $0.number + 1 } ?? 0)...number {
                let name = LedgerDirectory.segmentName(next)
                let header = try File.openForReading(directory.path + "/" + name).read(at: 0, count: SegmentHeader.size)
                let file = try File.openForWriting(
                    staging.path + "/" + name, create: true, exclusive: true, mode: 0o644, io: PosixIO.shared)
                try file.write(header, at: 0)
                output = (next, file, UInt64(header.count))
                if next < number { try file.sync() }
            }
        }
        _ = try scanBlocks(from: 0) { bytes, place in
            guard let number = (0..<segmentCount).first(where: { LedgerDirectory.segmentName($0) == place.file })
            else { return false }
            if output?.number != number { try start(number) }
            let block = try shown(try EncodedBlock(decoding: bytes))
            let frame = Frame.encode(block.bytes)
            try output!.file.write(frame, at: output!.end)
            records +=
                BlockIndexRecord(
                    location: BlockLocation(segment: number, offset: output!.end, length: UInt64(frame.count)),
                    header: block.header
                ).encoded
            output!.end += UInt64(frame.count)
            return true
        }
        try output?.file.sync()
        try FileSystem.createFile(staging.path + "/blocks.idx", contents: records, mode: 0o644, io: PosixIO.shared)
    }

    /// Copies the first `length` bytes of `source` (all of it if nil, or if it is shorter) into the new file
    /// `target` (0644), a MiB at a time, and syncs it.
    private static func copy(_ source: String, to target: String, length: UInt64?) throws(LedgerError) {
        let input = try File.openForReading(source)
        let total = min(length ?? .max, try input.size())
        let output = try File.openForWriting(target, create: true, exclusive: true, mode: 0o644, io: PosixIO.shared)
        var offset: UInt64 = 0
        while offset < total {
            let chunk = try input.read(at: offset, count: Int(min(total - offset, 1 << 20)))
            guard !chunk.isEmpty else { break }
            try output.write(chunk, at: offset)
            offset += UInt64(chunk.count)
        }
        try output.sync()
    }
}
