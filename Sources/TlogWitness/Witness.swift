import FileStore
import Foundation
public import Ledger
public import LedgerCrypto
import OutputFiles
public import VoteLedger

// MARK: - The witness's key

/// A witness's identity (`vote witness init`): its name and its Ed25519 cosigning key, in one private file
/// (0600), since the key ID commits to the name (c2sp.org/tlog-cosignature). The file holds one line,
/// "PRIVATE+KEY+<name>+<hex key ID>+base64(0x04 || 32-byte seed)": the shape of a Go note signer key, with the
/// cosignature type byte. It is not encrypted: a witness answers unattended.
public struct WitnessKey: Sendable {
    public let cosigner: Cosigner
    let key: Ed25519PrivateKey

    /// Whether `name` can name a witness: a note key name, not empty, without white space, control characters
    /// or "+", at most 255 bytes (by convention a schema-less URL such as witness.example.org/vote).
    public static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 255
            && name.unicodeScalars.allSatisfy { $0.value > 0x20 && $0 != "+" && !$0.properties.isWhitespace }
            && !name.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }

    /// Makes a new key for the witness `name` and writes it to `path`, a new file (an existing one is never
    /// overwritten), synced with its directory.
    public static func create(at path: String, name: String) throws -> WitnessKey {
        guard isValidName(name) else {
            throw VoteError(.usage, "a witness name is not empty and holds no spaces, control characters or '+'")
        }
        let key = try Ed25519PrivateKey()
        let witness = WitnessKey(cosigner: Cosigner(name: name, key: key.publicKey), key: key)
        let file = try OutputFile(creating: path, what: "witness key")
        do {
            try file.appendDurably(try witness.text + "\n")
            file.close()
            try OutputFile.syncDirectory(OutputFile.directory(of: path))
        } catch {
            file.remove()
            throw error
        }
        return witness
    }

    /// Reads the key at `path`; it must be private to this user, as the authority key is.
    public init(contentsOf path: String) throws {
        let bytes: [UInt8]
        do { bytes = try ProtectedFile.readPrivate(path, what: "witness key", limit: 4096) } catch {
            throw VoteError(ledger: error)
        }
        let line = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let fields = line.split(separator: "+", maxSplits: 2, omittingEmptySubsequences: false)
        guard fields.count == 3, fields[0] == "PRIVATE", fields[1] == "KEY",
            let (name, id, raw) = SignedNote.verifierKeyParts(String(fields[2])), Self.isValidName(name),
            raw.count == 33, raw[0] == Cosigner.signatureType, let key = try? Ed25519PrivateKey(seed: Array(raw[1...])),
            Cosigner(name: name, key: key.publicKey).keyID == id
        else { throw VoteError(.refused, "\(path) is not a witness key (as `vote witness init` writes one)") }
        self.init(cosigner: Cosigner(name: name, key: key.publicKey), key: key)
    }

    private init(cosigner: Cosigner, key: Ed25519PrivateKey) {
        self.cosigner = cosigner
        self.key = key
    }

    /// The key file's line.
    private var text: String {
        get throws {
            "PRIVATE+KEY+\(cosigner.name)+\(Hex.encode(cosigner.keyID))+"
                + Base64.encode([Cosigner.signatureType] + (try key.seed))
        }
    }
}

// MARK: - The logs a witness follows

/// A log a witness follows (`--log ORIGIN=VKEY`): its origin line and the Ed25519 keys (note type 0x01) and key
/// names its checkpoints may be signed with. For a VoteLedger ledger the origin is "voteledger/<ledger id>" and
/// the verifier key is what `vote head` and `GET /api/v1/key` print. A log that rotates its key is given once per
/// key (`--log ORIGIN=OLD --log ORIGIN=NEW`): a checkpoint signed by any of them is the log's.
public struct WitnessedLog: Sendable {
    public let origin: String
    public private(set) var keys: [(name: String, key: Ed25519PublicKey)]

    /// Parses `ORIGIN=VKEY`; the origin is everything before the first "=".
    public init(option text: String) throws {
        guard let equals = text.firstIndex(of: "="), equals > text.startIndex,
            let (name, key) = SignedNote.publicKey(verifierKey: String(text[text.index(after: equals)...]))
        else {
            throw VoteError(.usage, "--log must be ORIGIN=VKEY, VKEY a log's Ed25519 verifier key (name+id+base64)")
        }
        origin = String(text[..<equals])
        keys = [(name, key)]
    }

    /// The logs of `options` by origin, the keys of an origin given more than once gathered into one log; a key
    /// given twice for one origin is a usage error.
    public static func byOrigin(_ logs: [WitnessedLog]) throws -> [String: WitnessedLog] {
        var byOrigin: [String: WitnessedLog] = [:]
        for log in logs {
            guard var known = byOrigin[log.origin] else {
                byOrigin[log.origin] = log
                continue
            }
            for key in log.keys {
                guard !known.keys.contains(where: { $0.name == key.name && $0.key == key.key }) else {
                    throw VoteError(.usage, "--log \(log.origin) is given twice with the same key")
                }
                known.keys.append(key)
            }
            byOrigin[log.origin] = known
        }
        return byOrigin
    }

    /// Whether `note` carries a valid signature by one of the log's keys.
    func signed(_ note: SignedNote) -> Bool { keys.contains { note.isSigned(by: $0.key, name: $0.name) } }

    /// Whether `signature` is a line by one of the log's keys (its name and key ID; not checked).
    func isByTheLog(_ signature: (name: String, payload: [UInt8])) -> Bool {
        keys.contains {
            $0.name == signature.name
                && Array(signature.payload.prefix(4)) == SignedNote.keyID(name: $0.name, key: $0.key)
        }
    }

    /// The name of its state file, and the origin hash of the monitoring path (c2sp.org/tlog-witness): the
    /// SHA-256 of the origin, lowercase hex.
    public var originHash: String { SHA256.hash(Array(origin.utf8)).hex }
}

// MARK: - The witness

/// A witness (c2sp.org/tlog-witness): it cosigns a log's checkpoint only if it extends the last one it
/// cosigned for that log, proven by a consistency proof from that one's size, and remembers each log's
/// latest cosigned checkpoint durably, so that no restart lets it cosign a rollback, a fork or a second
/// history of the same size (a split view). The HTTP server (`vote witness serve`) only carries bytes in and
/// answers out; every decision is here.
public final class Witness: Sendable {
    /// What `add-checkpoint` answers: a status of c2sp.org/tlog-witness and its body.
    public enum Answer: Equatable, Sendable {
        /// 200: the cosignature line, "— <name> base64(key ID || time || signature)\n".
        case cosigned(String)
        /// 409: the old size is not the size this witness last cosigned, which is `size`.
        case conflict(size: UInt64)
        /// 400 (malformed, old size beyond the checkpoint's), 403 (no valid signature by the log's key), 404
        /// (unknown origin), 422 (inconsistent), 503 (the new state could not be stored: the disk, not the
        /// request; as `vote serve` answers a storage failure), 500 (it could not sign): nothing cosigned.
        case refused(status: Int, reason: String)
    }

    /// At most this many consistency proof lines (the protocol's bound).
    public static let maxProofLines = 63

    public let cosigner: Cosigner
    private let key: Ed25519PrivateKey
    public let logs: [String: WitnessedLog]
    /// The state directory, and the descriptor holding its lock for this process's lifetime.
    public let directory: String
    private let lockDescriptor: Int32
    /// Each log's latest cosigned checkpoint, by origin; updated only once it is on disk.
    private let latest: Locked<[String: Latest]>
    /// Now, in POSIX seconds: the cosignatures' time.
    private let clock: @Sendable () -> UInt64

    /// A log's latest cosigned checkpoint: its size and root, and the note as stored and served to monitors
    /// (the log's signatures this witness verified, and its own cosignature).
    struct Latest: Sendable {
        var size: UInt64
        var root: Digest
        var note: String
    }

    /// Opens the witness of `key` for `logs` with its state in `directory` (created 0700 if missing), which
    /// this process then holds locked: a second witness on the same state would break the atomic
    /// check-and-update. A state file that cannot be read back as this witness's cosigned checkpoint of its
    /// log is an error, never a reset: cosigning from size 0 again would accept any history.
    public init(
        key: WitnessKey, logs: [WitnessedLog], directory: String,
        clock: @escaping @Sendable () -> UInt64 = { UInt64(max(Clock.now(), 0) / 1000) }
    ) throws {
        cosigner = key.cosigner
        self.key = key.key
        self.clock = clock
        self.directory = directory
        self.logs = try WitnessedLog.byOrigin(logs)
        if mkdir(directory, 0o700) != 0 && errno != EEXIST {
            throw VoteError(.io, "cannot create the witness state \(directory): \(VoteError.describe(errno: errno))")
        }
        let descriptor = open(directory + "/lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else {
            throw VoteError(.io, "cannot open \(directory)/lock: \(VoteError.describe(errno: errno))")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let reason = errno == EWOULDBLOCK ? "another witness is running on it" : VoteError.describe(errno: errno)
            close(descriptor)
            throw VoteError(.busy(holder: nil), "the witness state \(directory) is in use: \(reason)")
        }
        var loaded: [String: Latest] = [:]
        do {
            for log in self.logs.values {
                loaded[log.origin] = try Self.load(directory + "/" + log.originHash, log: log, cosigner: key.cosigner)
            }
        } catch {
            close(descriptor)
            throw error
        }
        lockDescriptor = descriptor
        latest = Locked(loaded)
    }

    deinit { close(lockDescriptor) }

    /// Reads a log's state file: nil if there is none (never cosigned), else this witness's cosigned
    /// checkpoint of that log.
    private static func load(_ path: String, log: WitnessedLog, cosigner: Cosigner) throws -> Latest? {
        guard let bytes = ProtectedFile.read(path) else {
            guard access(path, F_OK) != 0 && errno == ENOENT else {
                throw VoteError(.io, "cannot read the witness state \(path) (a symbolic link is never followed)")
            }
            return nil
        }
        guard let text = String(validating: bytes, as: UTF8.self), let note = SignedNote(parsing: text),
            let checkpoint = Checkpoint(text: note.text), checkpoint.origin == log.origin,
            cosigner.timestamp(of: note) != nil
        else {
            throw VoteError(
                .integrity(block: nil, offset: nil),
                "the witness state \(path) (of \(log.origin)) is damaged or was not cosigned by this witness's key: "
                    + "restore it from a backup; starting afresh would let this witness cosign any history")
        }
        return Latest(size: checkpoint.treeSize, root: checkpoint.root, note: text)
    }

    /// The size this witness last cosigned for `origin` (0 if never).
    public func cosignedSize(_ origin: String) -> UInt64 { latest.withLock { $0[origin]?.size ?? 0 } }

    /// The latest cosigned checkpoint of the log whose origin hashes to `originHash`, with the log's signature
    /// and this witness's cosignature (the monitoring path); nil if there is none. A log no longer followed (its
    /// `--log` removed) whose state is still on disk is served from there, read-only: monitors still learn the
    /// last head this witness vouched for, and nothing is ever cosigned for that log again.
    public func checkpoint(originHash: String) -> String? {
        if let log = logs.values.first(where: { $0.originHash == originHash }) {
            return latest.withLock { $0[log.origin]?.note }
        }
        return retiredCheckpoint(originHash: originHash)
    }

    /// The state file of a log not followed, if `originHash` is an origin hash (64 lowercase hex digits: never
    /// another file of the directory) and the file holds a checkpoint of that origin this witness cosigned.
    private func retiredCheckpoint(originHash: String) -> String? {
        guard originHash.utf8.count == 64,
            originHash.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }),
            let bytes = ProtectedFile.read(directory + "/" + originHash), bytes.count <= 1 << 20,
            let text = String(validating: bytes, as: UTF8.self), let note = SignedNote(parsing: text),
            let checkpoint = Checkpoint(text: note.text), SHA256.hash(Array(checkpoint.origin.utf8)).hex == originHash,
            cosigner.timestamp(of: note) != nil
        else { return nil }
        return text
    }

    /// `add-checkpoint`: checks the request `body` ("old N", at most 63 base64 hashes, an empty line, the
    /// signed checkpoint) in the protocol's order, and cosigns only if every check passes; the new state is on
    /// disk before the answer is returned.
    public func addCheckpoint(_ body: [UInt8]) -> Answer {
        let request: (old: UInt64, proof: [Digest], note: SignedNote, checkpoint: Checkpoint)
        switch Self.parse(body) {
        case .success(let parsed): request = parsed
        case .failure(let malformed): return .refused(status: 400, reason: malformed.reason)
        }
        let checkpoint = request.checkpoint
        guard let log = logs[checkpoint.origin] else {
            return .refused(status: 404, reason: "unknown log origin")
        }
        guard log.signed(request.note) else {
            return .refused(status: 403, reason: "no valid signature by the log's key")
        }
        guard request.old <= checkpoint.treeSize else {
            return .refused(
                status: 400, reason: "old size \(request.old) is beyond the checkpoint's \(checkpoint.treeSize)")
        }
        return latest.withLock { latest in
            let previous = latest[log.origin]
            guard request.old == previous?.size ?? 0 else { return .conflict(size: previous?.size ?? 0) }
            if checkpoint.treeSize == 0 && checkpoint.root != Merkle.emptyRoot {
                return .refused(status: 422, reason: "a checkpoint of size 0 must have the empty tree's root")
            }
            if let previous, request.old > 0 {
                guard
                    Merkle.verifyConsistency(
                        oldSize: previous.size, newSize: checkpoint.treeSize, proof: request.proof,
                        oldRoot: previous.root, newRoot: checkpoint.root)
                else {
                    let reason =
                        previous.size == checkpoint.treeSize
                        ? "another root at the size already cosigned (a split view)"
                        : "the consistency proof from size \(previous.size) does not verify (a fork or rewrite)"
                    return .refused(status: 422, reason: reason)
                }
            } else if !request.proof.isEmpty {
                return .refused(status: 422, reason: "a proof from size 0 must be empty")
            }
            var cosigned = request.note
            cosigned.signatures = cosigned.signatures.filter(log.isByTheLog)
            let payload: [UInt8]
            do {
                payload = try Cosignature.sign(
                    request.note.text, name: cosigner.name, key: key, timestamp: max(clock(), 1))
            } catch { return .refused(status: 500, reason: "cannot cosign: \(error)") }
            cosigned.signatures.append((cosigner.name, payload))
            let stored = Latest(size: checkpoint.treeSize, root: checkpoint.root, note: cosigned.serialized)
            let path = directory + "/" + log.originHash
            do {
                try ProtectedFile.replace(path, contents: Array(stored.note.utf8))
                try OutputFile.syncDirectory(directory)
            } catch {
                return .refused(status: 503, reason: "cannot store the new state in \(path): \(VoteError(error))")
            }
            latest[log.origin] = stored
            return .cosigned("\u{2014} \(cosigner.name) \(Base64.encode(payload))\n")
        }
    }

    /// Why a request body is malformed (400).
    struct Malformed: Error {
        var reason: String
    }

    /// Splits an `add-checkpoint` body into its old size, proof and signed checkpoint.
    static func parse(
        _ body: [UInt8]
    ) -> Result<(old: UInt64, proof: [Digest], note: SignedNote, checkpoint: Checkpoint), Malformed> {
        guard let text = String(validating: body, as: UTF8.self) else {
            return .failure(Malformed(reason: "the body is not UTF-8"))
        }
        var rest = text[...]
        func line() -> Substring? {
            guard let newline = rest.firstIndex(of: "\n") else { return nil }
            defer { rest = rest[rest.index(after: newline)...] }
            return rest[..<newline]
        }
        guard let first = line(), first.hasPrefix("old "), let old = UInt64(first.dropFirst(4)),
            String(old) == first.dropFirst(4)
        else { return .failure(Malformed(reason: "the body does not start with an old size line (old N)")) }
        var proof: [Digest] = []
        while true {
            guard let hash = line() else { return .failure(Malformed(reason: "no empty line before the checkpoint")) }
            if hash.isEmpty { break }
            guard proof.count < maxProofLines else {
                return .failure(Malformed(reason: "more than \(maxProofLines) consistency proof lines"))
            }
            guard let bytes = Base64.decode(hash), let digest = Digest(bytes: bytes) else {
                return .failure(Malformed(reason: "a consistency proof line is not a base64 SHA-256 hash"))
            }
            proof.append(digest)
        }
        guard let note = SignedNote(parsing: String(rest)), let checkpoint = Checkpoint(text: note.text) else {
            return .failure(Malformed(reason: "the checkpoint is not a signed note of a checkpoint"))
        }
        return .success((old, proof, note, checkpoint))
    }

    /// What `GET /` tells a person: the witness's name and verifier key, and each log it follows with the size
    /// it last cosigned.
    public var summary: String {
        let sizes = latest.withLock { $0.mapValues(\.size) }
        return "c2sp.org/tlog-witness witness \(cosigner.name)\nverifier key: \(cosigner.verifierKey)\n"
            + logs.keys.sorted().map { "log \($0): cosigned up to size \(sizes[$0] ?? 0)\n" }.joined()
    }
}

// MARK: - The verifier's policy

/// What a verifier of a head asks of witnesses (`vote audit --witness NAME=VKEY … --quorum K`): the witnesses
/// it trusts, and how many of them must have cosigned a head for it to be taken.
public struct WitnessPolicy: Sendable {
    public let witnesses: [Cosigner]
    public let quorum: Int

    /// `witnesses` as `NAME=VKEY` texts, NAME the verifier key's own name, each once; `quorum` from 1 to their
    /// number, by default all of them.
    public init(witnesses options: [String], quorum: Int?) throws {
        var witnesses: [Cosigner] = []
        for option in options {
            guard let equals = option.firstIndex(of: "="),
                let cosigner = Cosigner(verifierKey: String(option[option.index(after: equals)...])),
                cosigner.name == option[..<equals]
            else {
                throw VoteError(
                    .usage, "--witness must be NAME=VKEY, VKEY the Ed25519 cosigner verifier key of witness NAME")
            }
            guard !witnesses.contains(where: { $0.name == cosigner.name }) else {
                throw VoteError(.usage, "--witness \(cosigner.name) is given twice")
            }
            witnesses.append(cosigner)
        }
        let quorum = quorum ?? witnesses.count
        guard !witnesses.isEmpty, (1...witnesses.count).contains(quorum) else {
            throw VoteError(.usage, "--quorum K needs at least K witnesses (--witness NAME=VKEY) and K of at least 1")
        }
        self.witnesses = witnesses
        self.quorum = quorum
    }

    /// The names of the witnesses that validly cosigned `note`, if at least `quorum` did; else an integrity
    /// error saying how many did (`what` names the note: "the receipt's head").
    public func require(_ note: SignedNote, what: String) throws -> [String] {
        let cosigned = witnesses.filter { $0.timestamp(of: note) != nil }.map(\.name)
        guard cosigned.count >= quorum else {
            let found = cosigned.isEmpty ? "" : " (\(cosigned.joined(separator: ", ")))"
            throw VoteError(
                .integrity(block: nil, offset: nil),
                "integrity failure: \(what) has \(cosigned.count) valid cosignature\(cosigned.count == 1 ? "" : "s") "
                    + "of the \(witnesses.count) witnesses named\(found), fewer than the quorum of \(quorum)")
        }
        return cosigned
    }
}
