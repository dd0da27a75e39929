import Election
import Foundation

/// A list of voter identities as an officer exports it from a spreadsheet (`vote voter authorize --from`, the
/// CSV body of the voters route): one identity per line, perhaps under a header line; in a place that asks
/// questions a line may give the voter's weight after a comma (`member-7,120`: 120 shares).
public enum VoterList {
    /// The column names a header line starts with (ASCII case and spaces, "-" and "_" ignored).
    private static let headerNames: Set<String> = [
        "identity", "identities", "voter", "voters", "voterid", "member", "members", "memberid", "id", "phone",
        "phonenumber", "mobile", "name", "email",
    ]

    /// Whether the first line of a list is a header (its first field names a column, such as "identity" or
    /// "Voter ID"): it is skipped with a note, never authorised. A member whose id is one of these words is
    /// listed on another line.
    public static func isHeader(_ firstLine: some StringProtocol) -> Bool {
        let field = firstLine.prefix { $0 != "," && $0 != ";" && $0 != "\t" }
        let word = String(field.lowercased().filter { !" -_\"'\u{FEFF}\r".contains($0) })
        return headerNames.contains(word)
    }
}

extension VoterList {
    /// A line's identity (trimmed) and the weight given after its last comma (1 if none).
    static func weighed(_ line: String) throws(Violation) -> (identity: String, weight: UInt64) {
        let trimmed = line.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let comma = trimmed.lastIndex(of: ",") else { return (trimmed, 1) }
        let given = trimmed[trimmed.index(after: comma)...].trimmingCharacters(in: .whitespaces)
        guard !given.isEmpty, given.allSatisfy(\.isASCII), let weight = UInt64(given) else {
            throw .invalidWeight("the weight after the comma must be a whole number from 1 to \(Contract.maxWeight)")
        }
        return (trimmed[..<comma].trimmingCharacters(in: .whitespaces), weight)
    }

    /// `.violates(.invalidIdentity)` for an ASCII line that cannot be an identity whatever is trimmed from it:
    /// it holds a printable character that no member id allows (a comma may come before a weight) and does not start (after spaces) with the
    /// `+` of a phone number; nil for any other line, which `VoterIdentity.normalize` then reads. A megabyte of
    /// such lines is refused without a string made for each.
    static func plainlyNotAnIdentity(_ bytes: UnsafeBufferPointer<UInt8>) -> BulkRun<IssuedToken>.Parsed? {
        guard let first = bytes.first(where: { $0 > 0x20 }), first != UInt8(ascii: "+") else { return nil }
        let stray = bytes.contains { byte in
            byte > 0x20 && byte < 0x7F && !(0x41...0x5A).contains(byte) && !(0x61...0x7A).contains(byte)
                && !(0x30...0x39).contains(byte) && byte != 0x2D && byte != 0x5F && byte != 0x2C
        }
        return stray ? .violates(.invalidIdentity) : nil
    }
}

/// A voter of a list authorised by `VoterList.authorize`: the identity as listed and the voter's new token.
public struct IssuedToken: Sendable {
    /// The identity as the list gives it (trimmed); the ledger's tag keys its normalised form.
    public let identity: String
    public let token: VotingToken
}

extension VoterList {
    /// Authorises every identity of `lines` in `place` with a new token each: the one bulk authorisation,
    /// which `vote voter authorize --from` and the voters route's CSV body both run. Blank lines are
    /// skipped, and so is a header as the first line (`skippedHeader` hears its number); every other line is
    /// normalised, tagged with the writer's voter secret and sent through `writer` in batches of
    /// `batchSize`, each one block (`BulkRun`). `rejected` hears of every refused line; `beforeWriting`
    /// sees each batch's accepted voters before its block is written (if it throws, nothing of the batch is
    /// recorded), `afterWriting` once it is durable. A failing batch stops the run with a `BulkStop`.
    public static func authorize(
        _ lines: inout LineReader, place: UInt32, writer: LedgerWriter, batchSize: Int,
        skippedHeader: (_ line: Int) -> Void = { _ in },
        rejected: (BulkRejection) -> Void,
        beforeWriting: @escaping @Sendable ([IssuedToken]) throws -> Void = { _ in },
        afterWriting: ([IssuedToken]) async throws -> Void = { _ in },
        progress: (BulkTotals) -> Void = { _ in }
    ) async throws -> BulkTotals {
        let secret = writer.voterSecret
        var tokens: [VotingToken] = []  // drawn a batch at a time: one call to the random generator
        var firstLine = true
        /// The voters of `entries` whose command was accepted.
        @Sendable func accepted(
            _ entries: [BulkEntry<IssuedToken>], _ results: [Result<EventReceipt, Violation>]
        ) -> [IssuedToken] {
            zip(entries, results).compactMap { entry, result in
                if case .success = result { entry.item } else { nil }
            }
        }
        return try await BulkRun<IssuedToken>(writer: writer, batchSize: batchSize).run(
            &lines,
            parse: { text in
                defer { firstLine = false }
                if firstLine, isHeader(text) { return .skip }
                do {
                    // The tag keys the normalised identity; the answer names the voter as listed.
                    let (listed, weight) = try weighed(text)
                    let identity = try VoterIdentity.normalize(listed)
                    if tokens.isEmpty { tokens = try VotingToken.generate(count: batchSize).reversed() }
                    let token = tokens.removeLast()
                    let command = Command.authorizeVoter(
                        place: place, voterTag: try secret.tag(identity), tokenHash: token.hash, weight: weight)
                    return .entry(IssuedToken(identity: listed, token: token), command)
                } catch let violation as Violation {
                    return .violates(violation)
                }
            },
            parsePlain: { bytes in firstLine ? nil : VoterList.plainlyNotAnIdentity(bytes) },
            rejected: rejected,
            skipped: skippedHeader,
            beforeWriting: { entries, results in try beforeWriting(accepted(entries, results)) },
            afterWriting: { entries, outcome in try await afterWriting(accepted(entries, outcome.results)) },
            progress: progress)
    }
}
