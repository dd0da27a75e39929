import BlockingHTTP
import Foundation
public import Ledger
import VoteLedger

/// A witness a writer asks for cosignatures (`--witness NAME=URL=VKEY`): its cosigner (name and key) and
/// where its `add-checkpoint` is (an http:// or https:// URL prefix). `vote serve`, `vote cast` and `vote
/// head` ask through it.
public struct WitnessEndpoint: Sendable {
    public let cosigner: Cosigner
    /// Whether it is asked over TLS (https://), its certificate checked against the system's trusted
    /// authorities (OpenSSL's defaults: `SSL_CERT_FILE` and `SSL_CERT_DIR` name others).
    public let tls: Bool
    public let host: String
    public let port: Int
    /// The submission prefix's path ("" or "/prefix"), to which "/add-checkpoint" is appended.
    public let path: String
    /// The kept connection it is asked on: one connection (and TLS handshake) for many cosigning rounds, as
    /// public witness networks expect of a log; copies of this endpoint share it.
    let client: BlockingHTTP.Client

    /// Parses `NAME=URL=VKEY`; NAME must be the verifier key's name, URL an http:// or https:// URL (port 80
    /// or 443 unless it names one; an IPv6 host in brackets).
    public init(option text: String) throws {
        let parts = text.split(separator: "=", maxSplits: 2, omittingEmptySubsequences: false)
        let usage =
            "--witness must be NAME=https://HOST[:PORT][/PREFIX]=VKEY (or http://), VKEY the cosigner verifier key of NAME"
        guard parts.count == 3, let cosigner = Cosigner(verifierKey: String(parts[2])), cosigner.name == parts[0],
            let scheme = ["http://", "https://"].first(where: { parts[1].hasPrefix($0) })
        else { throw VoteError(.usage, usage) }
        let rest = parts[1].dropFirst(scheme.count)
        let authority = rest.prefix { $0 != "/" }
        var path = String(rest.dropFirst(authority.count))
        while path.last == "/" { path.removeLast() }
        tls = scheme == "https://"
        var host = authority
        var port = tls ? 443 : 80
        if let colon = authority.lastIndex(of: ":"), !authority[colon...].contains("]") {
            guard let named = Int(authority[authority.index(after: colon)...]), (1...65535).contains(named) else {
                throw VoteError(.usage, "--witness \(parts[0]): the URL's port must be a number from 1 to 65535")
            }
            host = authority[..<colon]
            port = named
        }
        if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        guard !host.isEmpty, !host.contains(where: { $0.isWhitespace || $0 == "@" }) else {
            throw VoteError(.usage, "--witness \(parts[0]): the URL needs a host")
        }
        self.cosigner = cosigner
        self.host = String(host)
        self.port = port
        self.path = path
        client = BlockingHTTP.Client(host: self.host, port: port, tls: tls)
    }

    /// Why a witness did not cosign.
    public struct Refusal: Error, Sendable {
        public var reason: String

        public init(reason: String) { self.reason = reason }
    }

    /// A witness's valid cosignature lines.
    public typealias Lines = [(name: String, payload: [UInt8])]

    /// Asks this witness to cosign `note` (the signed head `checkpoint` of the ledger `source` reads), from
    /// `old`, the size it last cosigned (nil: unknown, asked from 0 and learned from its 409), with a
    /// consistency proof from there; gives up after `timeout`. Blocks the calling thread; returns the
    /// witness's valid cosignature lines.
    public func cosign(
        _ note: SignedNote, checkpoint: Checkpoint, source: some BlockSource, from old: UInt64?, timeout: Duration
    ) -> Result<Lines, Refusal> {
        let deadline = ContinuousClock.now + timeout
        var old = old ?? 0
        for _ in 0..<2 {
            guard old <= checkpoint.treeSize else {
                return .failure(
                    Refusal(
                        reason:
                            "it cosigned \(old) events, more than this ledger's \(checkpoint.treeSize): it saw another history"
                    ))
            }
            do {
                let proof =
                    old == 0 || old == checkpoint.treeSize
                    ? []
                    : try source.consistencyProof(oldSize: old, newSize: checkpoint.treeSize, root: checkpoint.root)
                let body =
                    "old \(old)\n" + proof.map { Base64.encode($0.bytes) + "\n" }.joined() + "\n" + note.serialized
                // Idempotent (c2sp.org/tlog-witness): the same checkpoint sent again is cosigned again or
                // answered 409, so a kept connection the witness closed as it went is retried on a new one.
                let reply = try client.request(
                    "POST", path: path + "/add-checkpoint", body: Array(body.utf8), idempotent: true,
                    maxReply: 16 * 1024, deadline: deadline)
                let text = String(decoding: reply.body, as: UTF8.self)
                if reply.status == 409, let size = UInt64(text.dropLast()), text.hasSuffix("\n") {
                    old = size
                    continue
                }
                guard reply.status == 200, let cosigned = SignedNote(parsing: note.serialized + text),
                    cosigner.timestamp(of: cosigned) != nil
                else {
                    // Its first line, at most 200 characters, control characters shown as "?": a witness's text
                    // reaches the operator's terminal and log.
                    let said = String(
                        text.prefix { $0 != "\n" }.prefix(200).map { $0.isASCII && !$0.isPrintable ? "?" : $0 })
                    return .failure(Refusal(reason: "it answered \(reply.status): \(said)"))
                }
                return .success(
                    cosigned.signatures.filter {
                        $0.name == cosigner.name && Array($0.payload.prefix(4)) == cosigner.keyID
                    })
            } catch {
                return .failure(Refusal(reason: VoteError.describe(error)))
            }
        }
        return .failure(Refusal(reason: "it answered 409 twice"))
    }

    /// `note` with the cosignatures of every witness of `witnesses` that gives one, each asked on a thread of
    /// its own (in parallel, each from the size its 409 names, bounded by `timeout`); and why each of the
    /// others did not, by name. Blocks the calling thread for at most about `timeout`.
    public static func cosign(
        _ note: SignedNote, by witnesses: [WitnessEndpoint], source: any BlockSource, timeout: Duration
    ) -> (note: SignedNote, refusals: [(name: String, reason: String)]) {
        guard let checkpoint = Checkpoint(text: note.text) else {
            return (note, witnesses.map { ($0.cosigner.name, "the head is not a checkpoint") })
        }
        let answers = Locked([Result<Lines, Refusal>?](repeating: nil, count: witnesses.count))
        let done = DispatchGroup()
        for (index, witness) in witnesses.enumerated() {
            done.enter()
            Thread.detachNewThread {
                let answer = witness.cosign(note, checkpoint: checkpoint, source: source, from: nil, timeout: timeout)
                answers.withLock { $0[index] = answer }
                done.leave()
            }
        }
        done.wait()
        var cosigned = note
        var refusals: [(name: String, reason: String)] = []
        for (witness, answer) in zip(witnesses, answers.withLock { $0 }) {
            switch answer! {
            case .success(let lines): cosigned.signatures += lines
            case .failure(let refusal): refusals.append((witness.cosigner.name, refusal.reason))
            }
        }
        return (cosigned, refusals)
    }
}

extension Character {
    /// Whether an ASCII character prints (not a control character).
    fileprivate var isPrintable: Bool { asciiValue.map { $0 >= 0x20 && $0 != 0x7F } ?? true }
}
