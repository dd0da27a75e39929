import LedgerCrypto
import VoteLedger

/// An append-only file of records sealed with AES-256-GCM, kept with the keys (`KeyStore.records`): how the
/// officer's contact book and mail log are kept at rest. Each record is its length (4 bytes, big-endian), the length's complement (4 bytes)
/// and a sealed box of its JSON under the key directory's records key (`VoterSecretKey.recordsKey`), bound to the
/// file's `context` so a record cannot be moved from one file to another. Appends are synced before they return; a
/// record cut short by a crash (the file ends inside it) is dropped before the next append, and a whole record that
/// does not open makes the file damaged: nothing is read past it. The complement tells the two apart: a damaged
/// length that points past the end of the file would otherwise read as a torn tail, and the next append would cut
/// off every record after it.
struct SealedRecords: Sendable {
    private let file: any RecordFile
    private let key: [UInt8]
    private let context: [UInt8]
    /// What the file is, in errors ("contact book").
    private let what: String

    /// The records file `name` in `keys`, sealed under `key` and bound to `context`.
    init(_ name: String, in keys: any KeyStore, key: [UInt8], context: String, what: String) {
        file = keys.records(name, what: what)
        self.key = key
        self.context = Array(context.utf8)
        self.what = what
    }

    /// The largest record written or read (a batch of 100,000 long contacts is under 100 MB).
    static let maxRecord = 256 << 20
    /// A record's length and its complement.
    static let header = 8

    /// Every record's bytes in order, and the length of the file's whole records (a torn tail after it).
    func read() throws(VoteError) -> (records: [[UInt8]], intact: Int) {
        guard let bytes = try file.read() else { return ([], 0) }
        var records: [[UInt8]] = []
        var at = 0
        let damaged = { (at: Int) in
            VoteError(
                .refused, "\(self.what) \(self.file.location) is damaged at byte \(at) (or sealed under another key)")
        }
        while at < bytes.count {
            // A record the file ends inside of is one a crash cut short: it was never reported written.
            guard bytes.count - at >= SealedRecords.header else { break }
            let length = bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) }
            let complement = bytes[at + 4..<at + 8].reduce(0) { $0 << 8 | Int($1) }
            guard length ^ complement == 0xFFFF_FFFF, length <= SealedRecords.maxRecord else { throw damaged(at) }
            let start = at + SealedRecords.header
            if bytes.count - start < length { break }
            guard let record = AESGCM.open(Array(bytes[start..<start + length]), key: key, context: context) else {
                throw damaged(at)
            }
            records.append(record)
            at = start + length
        }
        return (records, at)
    }

    /// Appends `record`, synced to disk before it returns; a torn tail is cut off first.
    func append(_ record: [UInt8]) throws(VoteError) {
        try append([record])
    }

    /// Appends `records` in one write, synced before it returns.
    func append(_ records: [[UInt8]]) throws(VoteError) {
        let intact = try read().intact
        var bytes: [UInt8] = []
        for record in records {
            let box: [UInt8]
            do { box = try AESGCM.seal(record, key: key, context: context) } catch {
                throw VoteError(.io, "cannot seal a record of \(what): \(error)")
            }
            guard box.count <= SealedRecords.maxRecord else {
                throw VoteError(
                    .refused,
                    "a record of \(what) would be over \(SealedRecords.maxRecord >> 20) MB: use a smaller --batch")
            }
            bytes += withUnsafeBytes(of: UInt32(box.count).bigEndian, Array.init)
            bytes += withUnsafeBytes(of: (~UInt32(box.count)).bigEndian, Array.init) + box
        }
        try file.write(bytes, after: intact)
    }

    /// Held for a run until the returned closure is called; a one-line refusal if another run holds it.
    func lock(_ doing: String) throws(VoteError) -> @Sendable () -> Void { try file.lock(doing) }

    /// Cuts the file back to `length` bytes (the records of a batch that was not recorded).
    func truncate(to length: Int) throws(VoteError) { try file.truncate(to: length) }
}
