import Election
import FileDriver
import FileStore
import Foundation
import Ledger
import LedgerCrypto
import Synchronization
import TestSupport
import Testing

@testable import VoteLedger

/// The service's one factory (`VoteLedgerService` with a `StoreConfiguration`) and its key seams: a ledger
/// written with a signer and a voter secret that are not files is the same ledger, verifiable by anyone.
@Suite struct ServiceConfigurationTests {
    static let t0 = ServiceTests.t0

    /// An authority key held outside the ledger directory (as a server's key service or a hardware module
    /// would hold it); it counts what it signs, so the test sees that blocks and heads went through it.
    final class HeldSigner: AuthoritySigner {
        let key: Ed25519PrivateKey
        let signed = Atomic<Int>(0)
        init(_ key: Ed25519PrivateKey) { self.key = key }
        var publicKey: Ed25519PublicKey { key.publicKey }
        func sign(_ message: [UInt8]) throws -> [UInt8] {
            signed.add(1, ordering: .relaxed)
            return try key.signature(for: message)
        }
    }

    /// A voter secret held outside the ledger directory; it counts the tags it computes.
    final class HeldVoterSecret: VoterSecretKey {
        let secret: any VoterSecretKey
        let tags = Atomic<Int>(0)
        init(_ secret: any VoterSecretKey) { self.secret = secret }
        func tag(_ identity: String) throws(Violation) -> Digest {
            tags.add(1, ordering: .relaxed)
            return try secret.tag(identity)
        }
        func commitment(ledgerID: LedgerID) -> Digest { secret.commitment(ledgerID: ledgerID) }
        func derivedStateKey(ledgerID: LedgerID) -> DerivedStateKey { secret.derivedStateKey(ledgerID: ledgerID) }
        func recordsKey(ledgerID: LedgerID) -> [UInt8] { secret.recordsKey(ledgerID: ledgerID) }
    }

    static func temporaryPath() -> String { NSTemporaryDirectory() + "service-config-\(UUID().uuidString)" }

    /// With the key and the secret taken out of the directory, a writer configured with a signer and a voter
    /// secret of its own writes blocks that verify, tags voters as the file secret would, and signs heads
    /// for receipts; a signer with another key is refused before anything is written.
    @Test func nonFileSignerAndSecretWriteARealLedger() throws {
        let path = Self.temporaryPath()
        let keys = KeyDirectory(defaultFor: path)
        defer { for directory in [path, keys.path] { try? FileManager.default.removeItem(atPath: directory) } }
        let created = try VoteLedgerService.create(
            StoreConfiguration(.file(path: path)), name: "held keys", now: Self.t0)
        let genesis = created.genesis
        let fileTag = try created.voterTag("member-1")
        created.close()
        let signer = HeldSigner(try FileBlockStore.loadAuthorityKey(from: keys, passphrase: nil, genesis: genesis))
        let secret = HeldVoterSecret(try FileVoterSecret(keys: keys))
        try FileManager.default.removeItem(atPath: keys.path)

        let configuration = StoreConfiguration(.file(path: path), signer: signer, voterSecret: secret, log: { _ in })
        let ledger = try VoteLedgerService.openLedger(configuration)
        #expect(try ledger.voterTag("member-1") == fileTag)
        let token = try VotingToken.generate()
        _ = try ledger.submit(
            .createPlace(
                name: "Board", description: "", registration: TimeWindow(start: Self.t0, end: Self.t0 + 1000),
                voting: TimeWindow(start: Self.t0 + 1000, end: Self.t0 + 100_000), maxCandidates: nil), now: Self.t0)
        _ = try ledger.submit(.registerCandidate(place: 1, name: "Alice", pledge: ""), now: Self.t0 + 1)
        _ = try ledger.submit(
            .authorizeVoter(place: 1, voterTag: try ledger.voterTag("member-1"), tokenHash: token.hash),
            now: Self.t0 + 2)
        let vote = try ledger.submit(.castVote(place: 1, candidate: 1, tokenHash: token.hash), now: Self.t0 + 1000)
        let proof = try ledger.tlogProofs(for: [vote])[0]
        ledger.close()
        #expect(signer.signed.load(ordering: .relaxed) == 5, "4 blocks and 1 signed head")
        #expect(secret.tags.load(ordering: .relaxed) == 2)
        #expect(proof.checkpoint.isSigned(by: signer.publicKey, name: SignedHead.origin(genesis.ledgerID)))

        let report = try ElectionVerifier.verify(FileBlockSource(path: path))
        #expect(report.chain.blocks == 6)
        #expect(report.state.place(1).map(Projections.turnout)?.voted == 1)

        let note = try HeadSigner(FileBlockSource(path: path), key: signer).signNote("a note\n", name: "test")
        #expect(note.isSigned(by: signer.publicKey, name: "test"))

        let stranger = HeldSigner(try Ed25519PrivateKey())
        let refused = #expect(throws: (any Error).self) {
            try VoteLedgerService.openLedger(
                StoreConfiguration(.file(path: path), signer: stranger, voterSecret: secret, log: { _ in }))
        }
        #expect(refused.map { VoteError($0).reason } == .refused)
        #expect(throws: LedgerError.self) { try HeadSigner(FileBlockSource(path: path), key: stranger) }
        #expect(stranger.signed.load(ordering: .relaxed) == 0)
        #expect(try ElectionVerifier.verify(FileBlockSource(path: path)).chain.blocks == 6)
    }

    /// A ledger in memory takes the configured signer as its authority and commits to the configured voter
    /// secret: its blocks and heads are the signer's and verify, and voters are tagged with the secret.
    @Test func memoryLedgerTakesTheConfiguredSignerAndSecret() throws {
        let first = try VoteLedgerService.create(StoreConfiguration(.memory), name: "first", now: Self.t0)
        let signer = HeldSigner(try Ed25519PrivateKey())
        let secret = HeldVoterSecret(first.voterSecret)
        let ledger = try VoteLedgerService.create(
            StoreConfiguration(.memory, signer: signer, voterSecret: secret), name: "held keys", now: Self.t0)
        #expect(ledger.genesis.authorityKey == signer.publicKey.rawRepresentation)
        #expect(try ledger.voterTag("member-1") == first.voterTag("member-1"))
        _ = try ledger.submit(
            .createPlace(
                name: "Board", description: "", registration: TimeWindow(start: Self.t0, end: Self.t0 + 1000),
                voting: TimeWindow(start: Self.t0 + 1000, end: Self.t0 + 100_000), maxCandidates: nil), now: Self.t0)
        let head = try ledger.signedHead()
        ledger.close()
        #expect(signer.signed.load(ordering: .relaxed) == 4, "the genesis block, block 1, one more and one head")
        #expect(secret.tags.load(ordering: .relaxed) == 1)
        #expect(head.isSigned(by: signer.publicKey, name: SignedHead.origin(ledger.genesis.ledgerID)))
        let report = try ElectionVerifier.verify(ledger.source())
        #expect(report.chain.blocks == 3)
        #expect(report.state.place(1) != nil)
    }

    /// The passphrase sources of the file store: none fails as `passphraseRequired` on an encrypted key,
    /// given bytes unlock it, and a source that asks is asked only when the key needs it; the lock timeout is
    /// the configuration's.
    @Test func factoryOpensFromTheConfiguration() throws {
        let path = Self.temporaryPath()
        defer { removeLedger(path) }
        let passphrase = Array("correct horse battery".utf8)
        try VoteLedgerService.create(
            StoreConfiguration(.file(path: path), passphrase: .given(passphrase)), name: "factory", now: Self.t0
        ).close()

        let locked = #expect(throws: (any Error).self) {
            try VoteLedgerService.openLedger(StoreConfiguration(.file(path: path), log: { _ in }))
        }
        #expect(locked.map { VoteError($0).reason } == .passphraseRequired)
        let asked = Atomic<Int>(0)
        let asking = StoreConfiguration(
            .file(path: path),
            passphrase: .ask {
                asked.add(1, ordering: .relaxed); return passphrase
            }, lockTimeout: 0, log: { _ in })
        let writer = try VoteLedgerService.openLedger(asking)
        #expect(asked.load(ordering: .relaxed) == 1)
        let busy = #expect(throws: (any Error).self) { try VoteLedgerService.openLedger(asking) }.map { VoteError($0) }
        #expect(busy?.reason == .busy(holder: getpid()) || busy?.reason == .busy(holder: nil))
        writer.close()
        try VoteLedgerService.openLedger(
            StoreConfiguration(.file(path: path), passphrase: .given(passphrase), log: { _ in })
        ).close()
    }

    /// The factory opens the writer actor on every store: the file store's ledger created before, or a new
    /// ledger in memory. Its first command goes into block 2, after the genesis block and the block that
    /// commits to the voter secret.
    @Test(arguments: ServiceStore.allCases) func factoryOpensTheWriterActor(_ store: ServiceStore) async throws {
        var configuration = store.configuration()
        configuration.log = { _ in }
        defer { configuration.removeLedger() }
        if configuration.store is FileDriver {
            try VoteLedgerService.create(configuration, name: "factory", now: Self.t0).close()
        }
        let actor = try VoteLedgerService.openWriter(configuration)
        let receipt = try await actor.submit(
            .createPlace(
                name: "Board", description: "", registration: TimeWindow(start: Self.t0, end: Self.t0 + 1000),
                voting: TimeWindow(start: Self.t0 + 1000, end: Self.t0 + 100_000), maxCandidates: nil))
        await actor.close()
        #expect(receipt.height == 2)
    }
}
