import Ballots
import Election
import Ledger
import LedgerCrypto
import Testing

/// The ledger encoding of election events: every case round-trips byte for byte, the layout is the documented
/// big-endian one, and malformed payloads are refused rather than misread.
@Suite struct EventCodecTests {
    // MARK: Samples

    /// A sample event with a readable name for test output.
    struct Sample: Sendable, CustomTestStringConvertible {
        let name: String
        let tag: ElectionEvent.Tag
        let event: ElectionEvent
        var testDescription: String { name }
    }

    /// At least one sample per event case, covering unicode text, empty strings, both kinds of candidate limit,
    /// negative and extreme times, and extreme ids.
    static let samples: [Sample] = [
        Sample(
            name: "place, no limit", tag: .placeCreated,
            event: .placeCreated(
                Place(
                    id: 1, name: "Mayor", description: "", registration: Fixture.registration,
                    voting: Fixture.voting, maxCandidates: nil))),
        Sample(
            name: "place, results after close", tag: .placeCreated,
            event: .placeCreated(
                Place(
                    id: 3, name: "Board", description: "embargoed", registration: Fixture.registration,
                    voting: Fixture.voting, maxCandidates: 5, resultsAfterClose: true))),
        Sample(
            name: "place, unicode and limit", tag: .placeCreated,
            event: .placeCreated(
                Place(
                    id: 2, name: "시장 선거 🗳️ Zürich", description: "Καλημέρα\nline two — “quoted”",
                    registration: TimeWindow(start: -86_400_000, end: -1), voting: TimeWindow(start: 0, end: 1),
                    maxCandidates: 12))),
        Sample(
            name: "place, extremes", tag: .placeCreated,
            event: .placeCreated(
                Place(
                    id: .max, name: String(repeating: "n", count: 200),
                    description: String(repeating: "é", count: 2000),
                    registration: TimeWindow(start: .min, end: .min + 1),
                    voting: TimeWindow(start: .max - 1, end: .max),
                    maxCandidates: .max))),
        Sample(
            name: "candidate, NFC name, empty pledge", tag: .candidateRegistered,
            event: .candidateRegistered(place: 1, candidate: 1, name: "Jos\u{E9}", pledge: "")),
        Sample(
            name: "candidate, NFD name, emoji pledge", tag: .candidateRegistered,
            event: .candidateRegistered(place: 3, candidate: 42, name: "Jose\u{301}", pledge: "🌳 Parks\nfor all 👨‍👩‍👧")),
        Sample(
            name: "place, anonymous ballots and results after close", tag: .placeCreated,
            event: .placeCreated(
                Place(
                    id: 4, name: "Steward", description: "", registration: Fixture.registration,
                    voting: Fixture.voting, maxCandidates: nil, resultsAfterClose: true, ballotKey: [0x30, 1, 2, 3]))),
        Sample(
            name: "credential issued", tag: .credentialIssued,
            event: .credentialIssued(place: 4, tokenHash: Fixture.token(1), blindedMessageHash: Fixture.token(2))),
        Sample(
            name: "anonymous vote", tag: .anonymousVoteCast,
            event: .anonymousVoteCast(
                place: 4, candidate: 2, credential: Array(0..<64), signature: Array(repeating: 0xA5, count: 384))),
        Sample(
            name: "place with a ballot", tag: .placeCreated,
            event: .placeCreated(
                Place(
                    id: 5, name: "AGM", description: "", registration: Fixture.registration, voting: Fixture.voting,
                    maxCandidates: nil, ballot: Fixture.agenda))),
        Sample(
            name: "ballot cast", tag: .ballotCast,
            event: .ballotCast(
                place: 5, tokenHash: Fixture.token(3), answers: [.options([0, 2]), .blank, .options([1, 0])])),
        Sample(
            name: "ballot replaced", tag: .ballotReplaced,
            event: .ballotReplaced(place: 5, tokenHash: Fixture.token(3), answers: [.blank, .options([0]), .blank])),
        Sample(
            name: "re-voting place", tag: .placeCreated,
            event: .placeCreated(
                Place(
                    id: 6, name: "Strike", description: "", registration: Fixture.registration, voting: Fixture.voting,
                    maxCandidates: nil, ballot: Fixture.agenda, revoting: true))),
        Sample(
            name: "anonymous place with ballot batches", tag: .placeCreated,
            event: .placeCreated(
                Place(
                    id: 8, name: "Chair", description: "", registration: Fixture.registration, voting: Fixture.voting,
                    maxCandidates: nil, ballotKey: [1, 2, 3], ballot: Fixture.agenda,
                    batching: BallotBatching(interval: 600_000, size: 10)))),
        Sample(
            name: "anonymous place with batches of a size", tag: .placeCreated,
            event: .placeCreated(
                Place(
                    id: 9, name: "Board", description: "", registration: Fixture.registration, voting: Fixture.voting,
                    maxCandidates: nil, ballotKey: [4], batching: BallotBatching(size: 2)))),
        Sample(
            name: "withdrawal", tag: .candidateWithdrawn, event: .candidateWithdrawn(place: 7, candidate: .max)),
        Sample(
            name: "authorisation", tag: .voterAuthorized,
            event: .voterAuthorized(place: 1, voterTag: Fixture.tag(1), tokenHash: Fixture.token(1))),
        Sample(
            name: "authorisation, zero digests", tag: .voterAuthorized,
            event: .voterAuthorized(place: .max, voterTag: .zero, tokenHash: .zero)),
        Sample(
            name: "authorisation with a weight", tag: .weightedVoterAuthorized,
            event: .voterAuthorized(place: 4, voterTag: Fixture.tag(2), tokenHash: Fixture.token(2), weight: 120)),
        Sample(
            name: "anonymous ballot", tag: .anonymousBallotCast,
            event: .anonymousBallotCast(
                place: 5, credential: Array(repeating: 0xC5, count: 64), signature: Array(repeating: 0x51, count: 384),
                answers: [.options([0, 2]), .blank, .options([2, 0, 1])])),
        Sample(
            name: "place amended", tag: .placeAmended,
            event: .placeAmended(
                place: 7, name: "Board of directors", description: "Voting extended by a day",
                voting: TimeWindow(start: 30_000, end: 126_400_000))),
        Sample(
            name: "voter withdrawn", tag: .voterWithdrawn,
            event: .voterWithdrawn(
                place: 7, voterTag: Fixture.tag(3), tokenHash: Fixture.token(3), weight: 3)),
        Sample(
            name: "place cancelled", tag: .placeCancelled,
            event: .placeCancelled(place: 8, reason: "Merged with place 2 — one ballot for both")),
        Sample(
            name: "ballot results", tag: .ballotResultsCertified,
            event: .ballotResultsCertified(
                BallotResults(
                    place: 6, treeSize: 41, electorate: Weighed(members: 5, weight: 124),
                    voted: Weighed(members: 4, weight: 123),
                    questions: [
                        QuestionResult(
                            ballots: Weighed(members: 4, weight: 123), blank: Weighed(members: 1, weight: 1),
                            options: [Weighed(members: 2, weight: 121), Weighed(members: 1, weight: 1)],
                            passed: nil, elected: [0]),
                        QuestionResult(
                            ballots: Weighed(members: 4, weight: 123), blank: Weighed(),
                            options: [Weighed(members: 3, weight: 3), Weighed(members: 1, weight: 120), Weighed()],
                            passed: false, elected: []),
                    ]))),
        Sample(
            name: "vote", tag: .voteCast, event: .voteCast(place: 2, candidate: 5, tokenHash: Fixture.token(9))),
        Sample(
            name: "results", tag: .resultsCertified,
            event: .resultsCertified(
                CertifiedResults(place: 3, treeSize: 1234, authorized: 10, voted: 7, votes: [(1, 4), (2, 0), (3, 3)]))),
        Sample(
            name: "results, no candidates", tag: .resultsCertified,
            event: .resultsCertified(CertifiedResults(place: .max, treeSize: .max, authorized: 0, voted: 0, votes: []))),
        Sample(
            name: "results, extremes", tag: .resultsCertified,
            event: .resultsCertified(
                CertifiedResults(
                    place: 1, treeSize: 0, authorized: .max, voted: .max, votes: [(.max, .max), (1, 0), (0, 1)]))),
        Sample(
            name: "voter secret commitment", tag: .voterSecretCommitment, event: .voterSecretCommitment(Fixture.tag(3))),
        Sample(
            name: "voter token reissued", tag: .voterTokenReissued,
            event: .voterTokenReissued(
                place: .max, voterTag: Fixture.tag(1), oldTokenHash: Fixture.token(1), newTokenHash: Fixture.token(2))),
    ]

    /// The typed decode error for `event`, or `nil` if it decodes.
    static func decodeError(_ event: LedgerEvent) -> DecodeError? {
        do {
            _ = try ElectionEvent(event)
            return nil
        } catch {
            return error
        }
    }

    // MARK: Round trip

    /// Each sample decodes to an equal event whose encoding is byte-identical, under its own type tag.
    @Test(arguments: samples)
    func roundTrips(sample: Sample) throws {
        let encoded = sample.event.ledgerEvent
        #expect(encoded.type == sample.tag.rawValue)
        let decoded = try ElectionEvent(encoded)
        #expect(decoded == sample.event)
        #expect(decoded.ledgerEvent == encoded, "strings must come back byte for byte, not just canonically equal")
    }

    /// The samples cover every event type, and the type tags are the documented values.
    @Test func samplesCoverEveryTag() {
        #expect(Set(Self.samples.map(\.tag.rawValue)) == Set(ElectionEvent.Tag.allCases.map(\.rawValue)))
        #expect(
            ElectionEvent.Tag.allCases.map(\.rawValue) == [
                0x0101, 0x0102, 0x0103, 0x0104, 0x0105, 0x0106, 0x0107, 0x0108, 0x0109, 0x010A, 0x010B, 0x010C,
                0x010D, 0x010E, 0x010F, 0x0110, 0x0111, 0x0112,
            ])
    }

    // MARK: Layout

    /// Integers are big-endian and strings are a u32 byte length then UTF-8.
    @Test func encodesDocumentedLayout() {
        let withdrawn = ElectionEvent.candidateWithdrawn(place: 1, candidate: 0x0203).ledgerEvent
        #expect(withdrawn == LedgerEvent(type: 0x0103, payload: [0, 0, 0, 1, 0, 0, 2, 3]))

        let registered = ElectionEvent.candidateRegistered(place: 1, candidate: 2, name: "Jé", pledge: "").ledgerEvent
        #expect(registered.type == 0x0102)
        #expect(registered.payload == [0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0x4A, 0xC3, 0xA9, 0, 0, 0, 0])

        let vote = ElectionEvent.voteCast(place: 4, candidate: 5, tokenHash: Fixture.token(1)).ledgerEvent
        #expect(vote.payload == [0, 0, 0, 4, 0, 0, 0, 5] + Fixture.token(1).bytes)

        let authorised = ElectionEvent.voterAuthorized(place: 4, voterTag: Fixture.tag(1), tokenHash: Fixture.token(2))
        #expect(authorised.ledgerEvent.payload == [0, 0, 0, 4] + Fixture.tag(1).bytes + Fixture.token(2).bytes)

        let reissued = ElectionEvent.voterTokenReissued(
            place: 4, voterTag: Fixture.tag(1), oldTokenHash: Fixture.token(2), newTokenHash: Fixture.token(3)
        ).ledgerEvent
        #expect(reissued.type == 0x0108)
        #expect(
            reissued.payload == [0, 0, 0, 4] + Fixture.tag(1).bytes + Fixture.token(2).bytes + Fixture.token(3).bytes)

        let place = ElectionEvent.placeCreated(
            Place(
                id: 1, name: "P", description: "", registration: TimeWindow(start: -1, end: 2),
                voting: TimeWindow(start: 3, end: 4), maxCandidates: nil)
        ).ledgerEvent
        let minusOne = [UInt8](repeating: 0xFF, count: 8)
        let expected: [UInt8] =
            [0, 0, 0, 1] + [0, 0, 0, 1, 0x50] + [0, 0, 0, 0] + minusOne + [0, 0, 0, 0, 0, 0, 0, 2]
            + [0, 0, 0, 0, 0, 0, 0, 3] + [0, 0, 0, 0, 0, 0, 0, 4] + [0, 0, 0, 0]
        #expect(place.payload == expected)

        // Flags follow maxCandidates only when not 0: bit 0 is the results embargo.
        let embargoed = ElectionEvent.placeCreated(
            Place(
                id: 1, name: "P", description: "", registration: TimeWindow(start: -1, end: 2),
                voting: TimeWindow(start: 3, end: 4), maxCandidates: nil, resultsAfterClose: true)
        ).ledgerEvent
        #expect(embargoed.payload == expected + [0, 0, 0, 1])
    }

    /// A place's flags are refused when recorded as 0 (they are left out then, so one place has one encoding),
    /// when they set a bit no version defines, or when cut short.
    @Test func refusesBadPlaceFlags() {
        let place = ElectionEvent.placeCreated(
            Place(
                id: 1, name: "P", description: "", registration: Fixture.registration, voting: Fixture.voting,
                maxCandidates: nil)
        ).ledgerEvent
        func error(_ extra: [UInt8]) -> String? {
            Self.decodeError(LedgerEvent(type: place.type, payload: place.payload + extra))?.message
        }
        #expect(error([0, 0, 0, 0]) == "place created: flags must be left out when 0")
        #expect(error([0, 0, 0, 32]) == "place created: unknown flags 32")
        #expect(error([0, 0, 0, 16])?.contains("truncated") == true, "flag bit 4 needs the batch rule after it")
        #expect(error([0, 0, 0, 4])?.contains("truncated") == true, "flag bit 2 needs the ballot after it")
        #expect(error([0, 0, 0, 2])?.contains("truncated") == true, "flag bit 1 needs the ballot key after it")
        #expect(error([0x80, 0, 0, 1]) == "place created: unknown flags 2147483649")
        #expect(error([0, 0, 1])?.contains("truncated") == true)
        #expect(error([0, 0, 0, 1]) == nil)
        #expect(error([0, 0, 0, 1, 0]) == "place created: 1 trailing bytes")
    }

    /// Certified results are place, tree size, authorised, voted, a u32 candidate count, then candidate id and
    /// votes per candidate, in the order given.
    @Test func encodesResultsLayout() {
        let results = ElectionEvent.resultsCertified(
            CertifiedResults(place: 2, treeSize: 0x0102, authorized: 5, voted: 3, votes: [(1, 2), (3, 0x0A0B)])
        ).ledgerEvent
        #expect(results.type == 0x0106)
        let expected: [UInt8] =
            [0, 0, 0, 2] + [0, 0, 0, 0, 0, 0, 1, 2] + [0, 0, 0, 0, 0, 0, 0, 5] + [0, 0, 0, 0, 0, 0, 0, 3] + [
                0, 0, 0, 2,
            ]
            + [0, 0, 0, 1] + [0, 0, 0, 0, 0, 0, 0, 2] + [0, 0, 0, 3] + [0, 0, 0, 0, 0, 0, 0x0A, 0x0B]
        #expect(results.payload == expected)
        let empty = ElectionEvent.resultsCertified(
            CertifiedResults(place: 1, treeSize: 1, authorized: 0, voted: 0, votes: [])
        ).ledgerEvent
        #expect(empty.payload.count == 4 + 8 + 8 + 8 + 4)
        #expect(empty.payload.suffix(4) == [0, 0, 0, 0])
    }

    // MARK: Refused

    /// Type tags outside the election's range are refused, even with a well-formed payload.
    @Test(arguments: [0x0000, 0x0001, 0x0100, 0x0113, 0x01FF, 0x0201, 0xFFFF] as [UInt16])
    func refusesUnknownType(type: UInt16) {
        let payload = ElectionEvent.candidateWithdrawn(place: 1, candidate: 1).ledgerEvent.payload
        let error = Self.decodeError(LedgerEvent(type: type, payload: payload))
        #expect(error != nil)
        #expect(error?.message.contains("unknown") == true)
    }

    /// A results event claiming more candidates than its bytes can hold is refused up front, as truncated (§11).
    @Test func refusesImpossibleCandidateCount() {
        var writer = ByteWriter()
        writer.write(UInt32(1))
        writer.write(UInt64(5))
        writer.write(UInt64(1))
        writer.write(UInt64(1))
        writer.write(UInt32.max)
        writer.write(UInt32(1))
        writer.write(UInt64(1))
        let error = Self.decodeError(LedgerEvent(type: 0x0106, payload: writer.bytes))
        #expect(error?.message == "results certified: truncated (needs \(12 * UInt64(UInt32.max)) bytes, has 12)")
    }

    /// A results payload with `entries` (candidate, votes) pairs after a candidate count of `count`.
    static func resultsPayload(count: UInt32, entries: Int) -> LedgerEvent {
        var writer = ByteWriter()
        writer.write(UInt32(1))
        writer.write(UInt64(20))
        writer.write(UInt64(3))
        writer.write(UInt64(2))
        writer.write(count)
        for entry in 0..<entries {
            writer.write(UInt32(entry + 1))
            writer.write(UInt64(entry))
        }
        return LedgerEvent(type: ElectionEvent.Tag.resultsCertified.rawValue, payload: writer.bytes)
    }

    /// A candidate count larger than the bytes left can hold, by one entry or by far, is refused up front.
    @Test(
        arguments: [(3, 4), (3, 5), (0, 1), (3, 1_000), (3, UInt32.max / 12 + 1), (0, UInt32.max)] as [(Int, UInt32)])
    func refusesCandidateCountBeyondBytes(entries: Int, count: UInt32) throws {
        let error = Self.decodeError(Self.resultsPayload(count: count, entries: entries))
        #expect(
            error?.message == "results certified: truncated (needs \(12 * UInt64(count)) bytes, has \(12 * entries))")
        let honest = try ElectionEvent(Self.resultsPayload(count: UInt32(entries), entries: entries))
        guard case .resultsCertified(let results) = honest else {
            Issue.record("decoded \(honest)")
            return
        }
        #expect(results.votes.map(\.candidate) == (0..<entries).map { UInt32($0 + 1) })
    }

    /// A candidate count smaller than the entries present leaves trailing bytes, which are refused.
    @Test(arguments: [0, 2] as [UInt32])
    func refusesCandidateCountBelowEntries(count: UInt32) {
        #expect(Self.decodeError(Self.resultsPayload(count: count, entries: 3))?.message.contains("trailing") == true)
    }

    /// Every proper prefix of every sample's payload is refused.
    @Test(arguments: samples)
    func refusesEveryTruncation(sample: Sample) {
        let encoded = sample.event.ledgerEvent
        for length in 0..<encoded.payload.count {
            // A place without its flags (and the ballot key and ballot after them) is the same place unflagged: a
            // whole event of its own.
            if case .placeCreated(let place) = sample.event, place.flags != 0,
                length == encoded.payload.count - 4 - (place.ballotKey.map { 4 + $0.count } ?? 0)
                    - (place.ballot.map { ballot in
                        var writer = ByteWriter()
                        ballot.write(to: &writer)
                        return writer.bytes.count
                    } ?? 0) - (place.batching == nil ? 0 : 12)
            {
                continue
            }
            let error = Self.decodeError(
                LedgerEvent(type: encoded.type, payload: Array(encoded.payload.prefix(length))))
            #expect(error != nil, "\(length) of \(encoded.payload.count) bytes decoded")
        }
    }

    /// Any bytes after a complete payload are refused.
    @Test(arguments: samples)
    func refusesTrailingBytes(sample: Sample) {
        // After an unflagged place's last field come its optional flags (`refusesBadPlaceFlags`).
        if case .placeCreated(let place) = sample.event, place.flags == 0 { return }
        let encoded = sample.event.ledgerEvent
        for extra in [[0], [0xFF], [0, 0, 0, 0], Fixture.token(1).bytes] as [[UInt8]] {
            let error = Self.decodeError(LedgerEvent(type: encoded.type, payload: encoded.payload + extra))
            let name = ElectionEvent.Tag(rawValue: encoded.type)!.name
            #expect(error?.message == "\(name): \(extra.count) trailing bytes")
        }
    }

    /// A string whose length prefix runs past the payload is refused, not read out of bounds.
    @Test func refusesOversizedStringLength() {
        var writer = ByteWriter()
        writer.write(UInt32(1))
        writer.write(UInt32(1))
        writer.write(UInt32.max)
        writer.write(bytes: Array("Alice".utf8))
        #expect(
            Self.decodeError(LedgerEvent(type: ElectionEvent.Tag.candidateRegistered.rawValue, payload: writer.bytes))?
                .message == "candidate registered: truncated (needs 4294967295 bytes, has 5)")
    }

    /// Invalid UTF-8 in any string field is refused: a stray continuation byte, a truncated sequence, an overlong
    /// encoding, a UTF-16 surrogate, a code point past U+10FFFF, and 0xFF.
    @Test(
        arguments: [[0x80], [0x41, 0xC3], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xFF]]
            as [[UInt8]])
    func refusesInvalidUTF8(bad: [UInt8]) {
        for field in 0..<4 {
            let event = Self.withRawString(bad, inField: field)
            let error = Self.decodeError(event)
            #expect(error?.message.contains("invalid UTF-8") == true, "field \(field)")
        }
    }

    /// The same payloads with valid UTF-8 in place of `bad` decode (so the refusals above are about UTF-8 only).
    @Test func rawStringBuilderIsSound() throws {
        for field in 0..<4 {
            _ = try ElectionEvent(Self.withRawString(Array("ok".utf8), inField: field))
        }
    }

    /// A ledger event whose string field `field` (0 place name, 1 place description, 2 candidate name, 3 pledge)
    /// holds the raw bytes `raw`, every other field valid.
    static func withRawString(_ raw: [UInt8], inField field: Int) -> LedgerEvent {
        var writer = ByteWriter()
        func string(_ index: Int, _ text: String) {
            let bytes = index == field ? raw : Array(text.utf8)
            writer.write(UInt32(bytes.count))
            writer.write(bytes: bytes)
        }
        if field < 2 {
            writer.write(UInt32(1))
            string(0, "Place")
            string(1, "About")
            for time in [1, 2, 3, 4] as [Int64] { writer.write(UInt64(bitPattern: time)) }
            writer.write(UInt32(0))
            return LedgerEvent(type: ElectionEvent.Tag.placeCreated.rawValue, payload: writer.bytes)
        }
        writer.write(UInt32(1))
        writer.write(UInt32(1))
        string(2, "Alice")
        string(3, "Pledge")
        return LedgerEvent(type: ElectionEvent.Tag.candidateRegistered.rawValue, payload: writer.bytes)
    }
}
