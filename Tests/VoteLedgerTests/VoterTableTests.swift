import Election
import LedgerCrypto
import TestSupport
import Testing

@testable import VoteLedger

/// The writer's flat hash table of the voter roll: what the rules ask (authorised? voted?) answered
/// exactly through growth, and always the same as the reference roll (`VoterRoll`, a dictionary).
@Suite struct VoterTableTests {
    typealias Key = VoterRoll.Key

    private static func token(_ index: Int) -> Digest { SHA256.hash(Array("voting token \(index)".utf8)) }

    /// Thousands of random keys, as voter and as token in several places, read back exactly after the
    /// table has grown from its smallest size; absent keys (same digest, other place or kind) stay absent.
    @Test func tableAnswersExactlyThroughGrowth() throws {
        let table = VoterTable(capacity: 1)
        let initialSlots = table.slotCount
        var expected: [Key: VoterRoll.Entry] = [:]
        var random = SplitMix64(seed: 0x7E57)
        for index in 0..<5000 {
            let digest = Self.token(Int(random.next() % 1_000_000_000))
            let key = Key(digest: digest, place: UInt32(index % 3 + 1), kind: index % 2 == 0 ? .voter : .token)
            let entry: VoterRoll.Entry = key.kind == .token && index % 4 == 1 ? .voted : .authorized
            try table.reserve(1)
            table.set(key, entry)
            expected[key] = entry
        }
        #expect(table.slotCount > initialSlots)
        #expect(table.count == expected.count)
        for (key, entry) in expected {
            #expect(table.entry(key) == entry)
            #expect(table.entry(Key(digest: key.digest, place: key.place + 10, kind: key.kind)) == nil)
            let otherKind: Key.Kind = key.kind == .voter ? .token : .voter
            if expected[Key(digest: key.digest, place: key.place, kind: otherKind)] == nil {
                #expect(table.entry(Key(digest: key.digest, place: key.place, kind: otherKind)) == nil)
            }
        }
        #expect(table.entries == expected)
    }

    /// Setting an existing key changes its entry in place (a vote), without counting it twice.
    @Test func updateInPlace() throws {
        let table = VoterTable()
        let key = Key(digest: Self.token(1), place: 1, kind: .token)
        try table.reserve(1)
        table.set(key, .authorized)
        table.set(key, .voted)
        #expect(table.count == 1)
        #expect(table.entry(key) == .voted)
    }

    /// Undoing a batch's sets (its block was not written) leaves every slot as it was, byte for byte: new
    /// entries (some displaced by collisions), entries changed in place, and a key set twice in the batch.
    @Test func undoRestoresEverySlot() throws {
        let table = VoterTable(capacity: 200)
        for index in 0..<30 { table.set(Key(digest: Self.token(index), place: 1, kind: .token), .authorized) }
        let slots = Array(UnsafeRawBufferPointer(table.memory.slots))
        let count = table.count
        var sets: [VoterTable.Replaced] = []
        for index in 20..<50 { sets.append(table.set(Key(digest: Self.token(index), place: 1, kind: .token), .voted)) }
        sets.append(table.set(Key(digest: Self.token(45), place: 1, kind: .token), .authorized))
        for index in 0..<40 {
            sets.append(table.set(Key(digest: Self.token(index), place: 2, kind: .voter), .authorized))
        }
        #expect(table.count == count + 60)
        table.undo(sets)
        #expect(Array(UnsafeRawBufferPointer(table.memory.slots)) == slots)
        #expect(table.count == count)
    }

    /// Property: on random event sequences (authorisations, re-issues and votes over a small pool of tags,
    /// tokens and places, so keys repeat), a table fed batch by batch (`commit`, as the writer does), a table fed
    /// event by event (`apply`, as the verifier does) and the reference roll hold the same entries and
    /// answer every question alike, present keys and absent ones.
    @Test(arguments: 0..<20) func tableAgreesWithReferenceRoll(seed: UInt64) throws {
        var random = SplitMix64(seed: 0xB0_11 &+ seed)
        let batched = VoterTable(capacity: 1)
        let folded = VoterTable(capacity: 1)
        var reference = VoterRoll()
        var batch = VoterRoll()
        let pool = 40
        for _ in 0..<Int(random.next() % 600) {
            let place = UInt32(random.next() % 3 + 1)
            let token = Self.token(Int(random.next() % UInt64(pool)))
            let tag = Self.token(1000 + Int(random.next() % UInt64(pool)))
            let event: ElectionEvent =
                switch random.next() % 3 {
                case 0: .voterAuthorized(place: place, voterTag: tag, tokenHash: token)
                case 1:
                    .voterTokenReissued(
                        place: place, voterTag: tag, oldTokenHash: token,
                        newTokenHash: Self.token(Int(random.next() % UInt64(pool))))
                default: .voteCast(place: place, candidate: 1, tokenHash: token)
                }
            reference.apply(event)
            batch.apply(event)
            folded.apply(event)
            if random.next() % 8 == 0 {
                try batched.reserve(batch.count)
                batched.commit(batch)
                batch.removeAll()
            }
        }
        try batched.reserve(batch.count)
        batched.commit(batch)
        #expect(batched.entries == reference.entries)
        #expect(folded.entries == reference.entries)
        #expect(batched.count == reference.count)
        for place in UInt32(1)...4 {
            for index in 0..<pool {
                let tag = Self.token(1000 + index)
                let token = Self.token(index)
                #expect(
                    batched.isAuthorized(voterTag: tag, place: place)
                        == reference.isAuthorized(voterTag: tag, place: place))
                #expect(
                    batched.hasVoted(tokenHash: token, place: place)
                        == reference.hasVoted(tokenHash: token, place: place))
                #expect(
                    folded.hasVoted(tokenHash: token, place: place)
                        == reference.hasVoted(tokenHash: token, place: place))
                #expect(
                    batched.isCurrent(tokenHash: token, voterTag: tag, place: place)
                        == reference.isCurrent(tokenHash: token, voterTag: tag, place: place))
            }
        }
    }
}
