import ArgumentParser
import BlindRSA
import Dispatch
import Foundation
import FoundationNetworking
import LedgerCrypto
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
            visible to other local users while the command runs. The credential file is claimed before the code \
            is sent, and removed if no credential was issued. A credential lost after this is lost: keep the file \
            until the vote is cast. If the answer is lost, run the command again with the same code: the server \
            refuses a second credential, so ask the authority to re-issue the code.
            """)

    @OptionGroup var server: ServerOption
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
            let spki = Base64URL.decode(keyText)
        else { throw VoteError(.refused, "place \(place) does not use anonymous ballots") }
        let key: BlindRSAPublicKey
        do { key = try BlindRSAPublicKey(derRepresentation: spki) } catch {
            throw VoteError(.integrity(block: nil, offset: nil), "place \(place)'s ballot key is not usable: \(error)")
        }
        // Claimed before the code is spent: a path that cannot take the credential stops here.
        let file = try PrivateFile(creating: path, what: "credential file")
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
        try file.appendDurably(try credentialFile.text())
        saved = true
        let receipt = answer["receipt"] as? [String: Any] ?? [:]
        if output.json {
            try Output.line(
                try JSONText.sorted([
                    "place": place, "credential_file": path, "repeated": answer["repeated"] as? Bool ?? false,
                    "receipt": receipt,
                ]))
        } else {
            try Output.line("credential issued for place \(place), saved to \(path) (keep it until you have voted)")
            try Output.line(
                "issuance recorded in block \(receipt["height"] ?? "?") as event \(receipt["index"] ?? "?") (\(receipt["event_hash"] ?? "?"))"
            )
        }
    }
}

/// `vote ballot cast`.
struct BallotCast: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cast", abstract: "Cast an anonymous ballot with a saved credential; prints a receipt.",
        discussion: """
            The credential file is what `vote ballot request` or the web booth saved. The ballot carries the \
            credential and its signature, nothing that names the voter. Each credential votes once.
            """)

    @OptionGroup var server: ServerOption
    @Option(help: "The credential file.") var credential: String
    @Option(help: "Candidate id.") var candidate: UInt32
    @Option(help: "Write the receipt (C2SP tlog-proof) to this new file (0600).") var receiptOut: String?
    @OptionGroup var output: JSONOption

    func run() throws {
        let saved = try CredentialFile.read(credential)
        let file = try receiptOut.map { try PrivateFile(creating: $0, what: "receipt") }
        var kept = false
        defer { if !kept { file?.remove() } }
        let receipt = try server.call(
            "places/\(saved.place)/ballots",
            body: ["credential": saved.credential, "signature": saved.signature, "candidate": candidate])
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

/// `--server URL`: the `vote serve` a voter's client talks to (HTTP or HTTPS, through FoundationNetworking).
struct ServerOption: ParsableArguments {
    @Option(help: "The election server's URL (http://host:port or https://host).") var server: String

    func validate() throws {
        guard let url = URL(string: server), ["http", "https"].contains(url.scheme?.lowercased() ?? ""),
            url.host != nil
        else { throw ValidationError("--server must be an http:// or https:// URL") }
    }

    /// GET (or with `body`, POST as JSON) `/api/v1/<path>` and the JSON object answered; a refusal becomes one line
    /// with the server's own message and the exit code of its kind (1 refused or not found, 4 busy).
    func call(_ path: String, body: [String: Any]? = nil) throws -> [String: Any] {
        var base = server
        while base.hasSuffix("/") { base.removeLast() }
        var request = URLRequest(url: URL(string: "\(base)/api/v1/\(path)")!, timeoutInterval: 300)
        if let body {
            request.httpMethod = "POST"
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = try JSONSerialization.data(withJSONObject: body)
        }
        let (status, data) = try ServerOption.send(request)
        let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        guard (200..<300).contains(status) else {
            let message = (object?["error"] as? [String: Any])?["message"] as? String ?? "HTTP status \(status)"
            switch status {
            case 404: throw VoteError(.notFound, message)
            case 429, 503: throw VoteError(.overloaded, "the server is busy: \(message)")
            case 400..<500: throw VoteError(.refused, message)
            default: throw VoteError(.io, "the server failed: \(message)")
            }
        }
        guard let object else { throw VoteError(.io, "the server's answer is not a JSON object") }
        return object
    }

    /// Sends `request` and waits for its status and body.
    private static func send(_ request: URLRequest) throws -> (Int, Data) {
        final class Outcome: @unchecked Sendable {
            var value: Result<(Int, Data), any Error> = .failure(URLError(.unknown))
        }
        let outcome = Outcome()
        let done = DispatchSemaphore(value: 0)
        URLSession.shared.dataTask(with: request) { data, response, error in
            if let response = response as? HTTPURLResponse {
                outcome.value = .success((response.statusCode, data ?? Data()))
            } else {
                outcome.value = .failure(error ?? URLError(.badServerResponse))
            }
            done.signal()
        }.resume()
        done.wait()
        do { return try outcome.value.get() } catch {
            throw VoteError(
                .io, "cannot reach \(request.url?.host ?? "the server"): \(error.localizedDescription)")
        }
    }
}
