import ArgumentParser
import Ballots
import BlindRSA
import BlockingHTTP
import Election
import Foundation
import JSONViews
import Ledger
import LedgerCrypto
import OutputFiles
import VoteCommandLine
import VoteLedger

/// `vote ballot`: a voter's client for an anonymous place, against its `vote serve` (the voter's device, not the
/// authority's ledger): `request` turns an issuance code into a blind-signed ballot credential, `cast` votes with it.
struct BallotCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ballot", abstract: "Anonymous ballots: get a credential with an issuance code, cast it.",
        discussion: """
            For a place created with --ballot anonymous. `request` blinds a fresh random credential (RFC 9474, \
            RSABSSA-SHA384-PSS-Randomized), has the server sign it blind with the issuance code, unblinds and \
            checks the signature, and saves the credential in a new file (0600). `cast` votes with that file and \
            nothing that names the voter. Cast some time after the request, and ideally from another network: \
            the server cannot match the two by their contents, only by when and where they came from.
            """,
        subcommands: [BallotRequest.self, BallotCast.self])
}

/// `vote ballot request`.
struct BallotRequest: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "request", abstract: "Get a ballot credential for an anonymous place with an issuance code.",
        discussion: """
            The code comes from --code-file FILE or --code - (standard input); --code VALUE also works but is \
            visible to other local users while the command runs. Before the code is sent, the place's ballot key \
            is checked against the ledger: the receipt of the place's creation, audited under the authority's \
            verifier key (--key, else the server's own), and the server's current signed head extending it; a key \
            that is not the ledger's is refused and the code is not sent. The credential file is claimed before \
            the code is sent, and removed if no credential was issued. Once a credential is issued the code is \
            used for good: a lost credential (or an answer lost on the way) cannot be replaced, and the authority \
            cannot re-issue the code. Keep \
            the file safe until the vote is cast (`vote ballot cast`); the booth can cast it too. A code reported \
            as used that you did not use is worth telling the authority and observers: its issuance is on the \
            ledger, with the code's hash.
            """)

    @OptionGroup var server: ServerOption
    @OptionGroup var authority: AuthorityKeyOption
    @Option(help: "Place id.") var place: UInt32
    @Option(
        help:
            "The issuance code, or - to read it from standard input. A value given here is visible to other local users (ps); prefer --code-file or -."
    )
    var code: String?
    @Option(help: "File holding the issuance code (its first line).") var codeFile: String?
    @Option(help: "Write the credential to this new file (0600); default ballot-credential-place-P.json.") var out:
        String?
    @OptionGroup var output: JSONOption

    func validate() throws {
        guard (code != nil) != (codeFile != nil) else {
            throw ValidationError("give the issuance code once: --code-file FILE or --code -")
        }
    }

    func run() throws {
        let code = try TokenOptions.read(code, file: codeFile, what: "issuance code")
        let path = out ?? "ballot-credential-place-\(place).json"
        let placeJSON = try server.call("places/\(place)")
        guard placeJSON["ballot"] as? String == "anonymous", let keyText = placeJSON["ballot_key"] as? String,
            let served = Base64URL.decode(keyText)
        else { throw VoteError(.refused, "place \(place) does not use anonymous ballots") }
        let authorityKey = try authority.key(server)
        let spki = try server.ledgerPlace(place, authority: authorityKey).ballotKey
        guard served == spki else {
            throw VoteError(
                .integrity(block: nil, offset: nil),
                "refused: the server's ballot key for place \(place) is not the one on its ledger (a key served to you alone would let it recognise your ballot); the code was not sent"
            )
        }
        let key: BlindRSAPublicKey
        do { key = try BlindRSAPublicKey(derRepresentation: spki) } catch {
            throw VoteError(.integrity(block: nil, offset: nil), "place \(place)'s ballot key is not usable: \(error)")
        }
        // Claimed before the code is spent: a path that cannot take the credential stops here.
        let file = try OutputFile(creating: path, what: "credential file")
        var saved = false
        defer { if !saved { file.remove() } }
        let credential = try key.prepare(try SecureRandom.bytes(32))
        let blinding = try key.blind(credential)
        let answer = try server.call(
            "places/\(place)/credentials",
            body: ["code": code.display, "blinded_message": Base64URL.encode(blinding.blindedMessage)])
        guard let blindText = answer["blind_signature"] as? String, let blindSignature = Base64URL.decode(blindText)
        else { throw VoteError(.io, "the server's answer holds no blind signature") }
        let signature: [UInt8]
        do { signature = try key.finalize(blindSignature, blinding: blinding) } catch {
            throw VoteError(.integrity(block: nil, offset: nil), "the server's blind signature is not valid: \(error)")
        }
        let credentialFile = CredentialFile(
            place: place, ballotKeyHash: SHA256.hash(spki).hex, credential: Base64URL.encode(credential),
            signature: Base64URL.encode(signature))
        // Saved before the receipt is checked: the signature is good and the code is used, so the credential is
        // the voter's one chance to vote whatever the receipt says.
        try file.appendDurably(try credentialFile.text())
        saved = true
        let receipt = try Self.issuance(
            answer["receipt"], place: place, code: code.hash, blinded: blinding.blindedMessage, key: authorityKey,
            saved: path)
        if output.json {
            try Output.line(
                try JSONText.sorted([
                    "place": place, "credential_file": path, "repeated": answer["repeated"] as? Bool ?? false,
                    "receipt": answer["receipt"] as? [String: Any] ?? [:],
                ]))
        } else {
            try Output.line("credential issued for place \(place), saved to \(path) (keep it until you have voted)")
            let hash = (answer["receipt"] as? [String: Any])?["event_hash"] as? String ?? ""
            try Output.line("issuance recorded in block \(receipt.height) as event \(receipt.index) (\(hash))")
        }
    }

    /// The issuance's receipt in the answer, audited under the authority's key: the credential-issued event of
    /// this place, code and blinded message, under a head the authority signed. Without one nothing shows the
    /// issuance is on the ledger: a refusal that says the credential is saved all the same.
    private static func issuance(
        _ answer: Any?, place: UInt32, code: Digest, blinded: [UInt8], key: Ed25519PublicKey, saved path: String
    ) throws -> Auditor.ReceiptReport {
        let refusal = "the credential is saved in \(path), but nothing shows its issuance is on the ledger"
        guard let fields = answer as? [String: Any], let text = fields["receipt"] as? String,
            let proof = TlogProof(parsing: text)
        else {
            throw VoteError(.integrity(block: nil, offset: nil), "the server's answer holds no receipt: \(refusal)")
        }
        let report: Auditor.ReceiptReport
        do { report = try Auditor.audit(receipt: proof, ledger: nil, key: key, head: nil) } catch {
            throw VoteError(
                .integrity(block: nil, offset: nil),
                "the issuance's receipt does not verify (\(VoteError.describe(error))): \(refusal)")
        }
        guard case .credentialIssued(place, code, SHA256.hash(blinded))? = report.event else {
            throw VoteError(
                .integrity(block: nil, offset: nil), "the issuance's receipt is of another event: \(refusal)")
        }
        return report
    }
}

/// `vote ballot cast`.
struct BallotCast: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cast", abstract: "Cast an anonymous ballot with a saved credential; prints a receipt.",
        discussion: """
            The credential file is what `vote ballot request` or the web booth saved. Before the ballot is sent, \
            the place's ballot key on the ledger is checked (as `vote ballot request` does) to be the key the \
            credential was issued under; if it is not, nothing is sent. The ballot carries the credential and its \
            signature, nothing that names the voter. Each credential votes once.
            """)

    @OptionGroup var server: ServerOption
    @OptionGroup var authority: AuthorityKeyOption
    @Option(help: "The credential file.") var credential: String
    @Option(help: "Candidate id, in a place with candidates.") var candidate: UInt32?
    @Option(
        help: ArgumentHelp(
            "In a place that asks questions: the answers, one per question, separated by ; (as `vote cast --answers`).",
            discussion:
                "1,3 ticks options 1 and 3; yes, no or abstain answers a motion; 2>1>3 ranks; blank leaves a question blank."
        ))
    var answers: String?
    @Option(help: "Write the receipt (C2SP tlog-proof) to this new file (0600).") var receiptOut: String?
    @Flag(
        help: ArgumentHelp(
            "In a place that writes its ballots in batches: do not wait for the batch; run this again later for the receipt."
        ))
    var noWait = false
    @OptionGroup var output: JSONOption

    func validate() throws {
        guard (candidate == nil) != (answers == nil) else {
            throw ValidationError("give --candidate for a place with candidates, --answers for one with questions")
        }
    }

    func run() throws {
        let saved = try CredentialFile.read(credential)
        let (created, spki) = try server.ledgerPlace(saved.place, authority: try authority.key(server))
        guard SHA256.hash(spki).hex == saved.ballotKeyHash else {
            throw VoteError(
                .integrity(block: nil, offset: nil),
                "refused: \(credential) was issued under a ballot key that is not place \(saved.place)'s on the ledger (casting it could tell the server who you are); the ballot was not sent"
            )
        }
        let file = try receiptOut.map { try OutputFile(creating: $0, what: "receipt") }
        var kept = false
        defer { if !kept { file?.remove() } }
        var ballot: [String: Any] = ["credential": saved.credential, "signature": saved.signature]
        if let candidate { ballot["candidate"] = candidate }
        if let answers { ballot["answers"] = answers }
        let receipt = try answer(to: ballot, saved: saved, questions: created.ballot)
        if receipt["held"] as? Bool == true {
            try Output.line(
                output.json
                    ? try JSONText.sorted(receipt)
                    : "ballot held for its batch\(Self.due(receipt)); run this again later for its receipt")
            return
        }
        guard let text = receipt["receipt"] as? String else {
            throw VoteError(.io, "the server's answer holds no receipt")
        }
        if let file {
            try file.appendDurably(text)
            kept = true
        }
        if output.json {
            try Output.line(try JSONText.sorted(receipt))
        } else {
            try Output.line("ballot recorded in block \(receipt["height"] ?? "?")")
            try Output.line(
                "receipt \(receipt["event_hash"] ?? "?") (event \(receipt["index"] ?? "?"))\(receiptOut.map { ", saved to \($0)" } ?? "")"
            )
        }
    }

    /// The receipt of `ballot`, cast now or found on the ledger: a credential that already voted with this very
    /// ballot (a cast whose answer was lost, or run again) gets its receipt. In a place that writes its ballots in
    /// batches the server holds the ballot and says when the batch is due: this waits for it (asleep), then asks
    /// for the receipt until the batch is written, casting again if the server no longer holds the ballot (it
    /// restarted). With `--no-wait` it stops at the first answer instead, the held one included.
    private func answer(to ballot: [String: Any], saved: CredentialFile, questions: Ballot?) throws -> [String: Any] {
        let path = "places/\(saved.place)/ballots"
        let lookup = ["credential": saved.credential]
        var answer: [String: Any]
        do {
            answer = try server.call(path, body: ballot)
        } catch let error as VoteError where error.message == Violation.credentialAlreadyVoted.description {
            // The credential's ballot, if it is this one, is its answer. One held is another ballot: the server
            // answers the same ballot held again with 202, not this refusal.
            answer = try server.call(path + "/receipt", body: lookup)
            guard Self.same(answer, as: ballot, questions: questions) else { throw error }
        }
        var told = false
        while answer["held"] as? Bool == true {
            if noWait { return answer }
            if !told {
                told = true
                Output.note(
                    "the ballot is held with others and written together, in an order no one can predict"
                        + "\(Self.due(answer)); waiting for its receipt")
            }
            let due = (answer["batch_due"] as? String).flatMap { Timestamp.parse($0, now: Clock.now()) }
            let wait = max(Self.poll, Duration.milliseconds(max(0, (due ?? 0) - Clock.now())))
            Thread.sleep(forTimeInterval: Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18)
            do {
                answer = try server.call(path + "/receipt", body: lookup)
            } catch let error as VoteError where error.reason == .notFound {
                Output.note("the server no longer holds the ballot (it restarted): casting it again")
                answer = try server.call(path, body: ballot)
            }
        }
        return answer
    }

    /// How often a held ballot's receipt is asked for once its batch is due (or, for a rule of size alone, at all).
    private static let poll: Duration = .seconds(2)

    /// ", due at TIME" for a held answer whose batch has a due time, or ", once enough ballots are held".
    private static func due(_ held: [String: Any]) -> String {
        (held["batch_due"] as? String).map { ", due at \($0)" } ?? ", once enough ballots are held"
    }

    /// Whether a receipt found for the credential is of the very ballot sent: the event it proves names the same
    /// candidate, or holds the answers `questions` (the place's ballot, from the ledger) reads in the ones sent.
    private static func same(_ receipt: [String: Any], as ballot: [String: Any], questions: Ballot?) -> Bool {
        guard let text = receipt["receipt"] as? String, let extra = TlogProof(parsing: text)?.extra,
            let recorded = LedgerEvent(encoded: extra), let event = try? ElectionEvent(recorded)
        else { return false }
        switch event {
        case .anonymousVoteCast(_, let candidate, _, _):
            return candidate == ballot["candidate"] as? UInt32
        case .anonymousBallotCast(_, _, _, let answers):
            guard let questions, let text = ballot["answers"] as? String else { return false }
            return questions.answers(parsing: text) == .success(answers)
        default:
            return false
        }
    }
}

/// `--key VKEY`: the authority's verifier key a voter's client audits the ledger's proofs under.
struct AuthorityKeyOption: ParsableArguments {
    @Option(
        name: .customLong("key"),
        help: ArgumentHelp(
            "The authority's verifier key (name+id+key, as `vote head` prints it) or a file holding it, from the election's notice; default: the server's own (GET /api/v1/key), which proves the key is on the ledger the server signs but not that it is the authority's.",
            valueName: "VKEY"))
    var verifierKey: String?

    /// The key given, else the one `server` names.
    func key(_ server: ServerOption) throws -> Ed25519PublicKey {
        var line = try verifierKey ?? server.text("key")
        if let path = verifierKey, FileManager.default.fileExists(atPath: path),
            let data = FileManager.default.contents(atPath: path)
        {
            line = String(decoding: data, as: UTF8.self)
        }
        guard let (_, key) = SignedNote.publicKey(verifierKey: line.trimmingCharacters(in: .whitespacesAndNewlines))
        else {
            throw VoteError(
                verifierKey == nil ? .io : .usage,
                verifierKey == nil
                    ? "the server's verifier key is not one (name+id+key)"
                    : "--key must be a verifier key such as voteledger/<id>+<key id>+<base64>, or a file holding it")
        }
        return key
    }
}

// MARK: - The credential file

/// A ballot credential as saved (by `vote ballot request` and by the web booth, in the same shape): the place,
/// the SHA-256 of its ballot key (so a credential is not tried in another place or election), the credential
/// (the RFC 9474 prepared message) and its signature, both base64url.
struct CredentialFile {
    var place: UInt32
    var ballotKeyHash: String
    var credential: String
    var signature: String

    func text() throws -> String {
        try JSONText.sorted([
            "place": place, "ballot_key_hash": ballotKeyHash, "credential": credential, "signature": signature,
        ]) + "\n"
    }

    /// The file at `path`, or one line saying why it is not a credential file.
    static func read(_ path: String) throws -> CredentialFile {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw VoteError(.refused, "cannot read credential file \(path)")
        }
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
            let place = (object["place"] as? NSNumber).flatMap({ UInt32(exactly: $0.doubleValue) }),
            let hash = object["ballot_key_hash"] as? String, let credential = object["credential"] as? String,
            let signature = object["signature"] as? String
        else {
            throw VoteError(.refused, "\(path) is not a ballot credential file (place, credential, signature)")
        }
        return CredentialFile(place: place, ballotKeyHash: hash, credential: credential, signature: signature)
    }
}

/// JSON with sorted keys and unescaped slashes, as every `--json` of vote prints.
enum JSONText {
    static func sorted(_ object: [String: Any]) throws -> String {
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }
}

// MARK: - The server

/// `--server URL` and `--cacert FILE`: the `vote serve` a voter's client talks to, over HTTP or HTTPS, a connection
/// a request (`BlockingHTTP`: the command sleeps in `poll` while the server answers).
struct ServerOption: ParsableArguments {
    @Option(help: "The election server's URL (http://host:port or https://host).") var server: String
    @Option(
        help: ArgumentHelp(
            "Trust the server's TLS certificate when one of this PEM file's certificates signed it (a self-signed server's own certificate); default: the system's authorities ($SSL_CERT_FILE, $SSL_CERT_DIR).",
            valueName: "FILE"))
    var cacert: String?

    /// The server at `url`, trusting the system's authorities (`vote receipt --server`).
    static func at(_ url: String) -> ServerOption {
        var option = ServerOption()
        option.server = url
        option.cacert = nil
        return option
    }

    /// An answer is a place, a receipt or a head: far below this.
    private static let maxReply = 1 << 20
    /// How long a request may take, connecting included: as long as a loaded server may need.
    private static let timeout: Duration = .seconds(300)

    /// The server's scheme, host, port and path prefix.
    private struct Endpoint {
        var tls: Bool
        var host: String
        var port: Int
        var prefix: String
    }

    private var endpoint: Endpoint? {
        guard let url = URL(string: server), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
            var host = url.host, !host.isEmpty
        else { return nil }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        var prefix = url.path
        while prefix.hasSuffix("/") { prefix.removeLast() }
        return Endpoint(
            tls: scheme == "https", host: host, port: url.port ?? (scheme == "https" ? 443 : 80), prefix: prefix)
    }

    func validate() throws {
        guard endpoint != nil else { throw ValidationError("--server must be an http:// or https:// URL") }
        if let cacert, !FileManager.default.isReadableFile(atPath: cacert) {
            throw ValidationError("--cacert \(cacert): cannot read the file")
        }
    }

    /// GET (or with `body`, POST as JSON) `/api/v1/<path>` and the JSON object answered; a refusal becomes one line
    /// with the server's own message and the exit code of its kind (1 refused or not found, 4 busy).
    func call(_ path: String, body: [String: Any]? = nil) throws -> [String: Any] {
        let (status, data) = try send(path, body: try body.map { try JSONSerialization.data(withJSONObject: $0) })
        let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        try Self.require(status, object)
        guard let object else { throw VoteError(.io, "the server's answer is not a JSON object") }
        return object
    }

    /// Anonymous place `place` and its ballot key on the server's ledger (`Auditor.anonymousPlace`): the receipt of
    /// the place's creation audited under `authority`, and the server's current signed head proven to extend it.
    func ledgerPlace(_ place: UInt32, authority: Ed25519PublicKey) throws -> (place: Place, ballotKey: [UInt8]) {
        let created = try call("places/\(place)/created")
        guard let text = created["receipt"] as? String, let receipt = TlogProof(parsing: text) else {
            throw VoteError(.io, "the server's answer holds no receipt of place \(place)'s creation")
        }
        guard let head = SignedNote(parsing: try self.text("head")) else {
            throw VoteError(.io, "the server's head is not a signed note")
        }
        return try Auditor.anonymousPlace(place: place, receipt: receipt, key: authority, head: head) { from, to in
            let answer = try call("proofs/consistency?from=\(from)&to=\(to)")
            guard let hexes = answer["proof"] as? [String] else {
                throw VoteError(.io, "the server's consistency proof is not a list of hashes")
            }
            return try hexes.map {
                guard let digest = Digest(hex: $0) else {
                    throw VoteError(.io, "the server's consistency proof is not a list of hashes")
                }
                return digest
            }
        }
    }

    /// GET `/api/v1/<path>` as text (the signed head, the authority's verifier key).
    func text(_ path: String) throws -> String {
        let (status, data) = try send(path, body: nil)
        try Self.require(status, (try? JSONSerialization.jsonObject(with: data)) as? [String: Any])
        guard let text = String(data: data, encoding: .utf8) else {
            throw VoteError(.io, "the server's answer to \(path) is not text")
        }
        return text
    }

    /// A status other than 2xx as one line with the server's own message and the exit code of its kind.
    private static func require(_ status: Int, _ object: [String: Any]?) throws {
        guard !(200..<300).contains(status) else { return }
        let message = (object?["error"] as? [String: Any])?["message"] as? String ?? "HTTP status \(status)"
        switch status {
        case 404: throw VoteError(.notFound, message)
        case 429, 503: throw VoteError(.overloaded, "the server is busy: \(message)")
        case 400..<500: throw VoteError(.refused, message)
        default: throw VoteError(.io, "the server failed: \(message)")
        }
    }

    /// Sends the request and waits, asleep, for its status and body.
    private func send(_ path: String, body: Data?) throws -> (Int, Data) {
        guard let endpoint else { throw VoteError(.usage, "--server must be an http:// or https:// URL") }
        do {
            let reply = try BlockingHTTP.request(
                body == nil ? "GET" : "POST", host: endpoint.host, port: endpoint.port, tls: endpoint.tls,
                trusting: cacert, path: "\(endpoint.prefix)/api/v1/\(path)",
                contentType: body == nil ? nil : "application/json", body: body.map { [UInt8]($0) } ?? [],
                maxReply: Self.maxReply, deadline: .now + Self.timeout)
            return (reply.status, Data(reply.body))
        } catch {
            throw VoteError(.io, "cannot reach \(endpoint.host): \(VoteError.describe(error))")
        }
    }
}
