import Election
import FileDriver
import FileStore
import Foundation
import Ledger
import TestSupport
import Testing

@testable import VoteLedger

/// The service's failures are typed (a `VoteError`, or the store's `LedgerError`): a front end maps them through
/// `VoteError(_:)` to a reason, then to its own codes, and never reads the message to decide anything.
@Suite struct ServiceErrorTests {
    static let t0 = ServiceTests.t0

    /// A rule violation carries the contract's `Violation`; a second writer sees `busy` with the holder.
    @Test func violationsAndBusyAreTyped() throws {
        let temp = NSTemporaryDirectory() + "service-errors-\(UUID().uuidString)"
        defer { removeLedger(temp) }
        let (ledger, _) = try ServiceTests.election(at: temp, voters: 2, votes: 0)
        defer { ledger.close() }
        let stranger = try VotingToken.generate()
        do {
            _ = try ledger.submit(.castVote(place: 1, candidate: 1, tokenHash: stranger.hash), now: Self.t0 + 2000)
            Issue.record("an unauthorised token voted")
        } catch let error as VoteError {
            #expect(error.reason == .violation(.tokenNotAuthorized(place: 1)))
            #expect(error.message == Violation.tokenNotAuthorized(place: 1).description)
        }
        do {
            _ = try VoteLedgerService.openLedger(StoreConfiguration(.file(path: temp), lockTimeout: 0, log: { _ in }))
            Issue.record("a second writer opened the ledger")
        } catch {
            let error = VoteError(error)
            #expect(error.reason == .busy(holder: getpid()) || error.reason == .busy(holder: nil))
        }
    }

    /// An encrypted authority key opened without a passphrase is `passphraseRequired` (what lets the CLI
    /// ask for one), and with a wrong one it is refused.
    @Test func passphraseRequiredIsTyped() throws {
        let temp = NSTemporaryDirectory() + "service-errors-\(UUID().uuidString)"
        defer { removeLedger(temp) }
        let passphrase = Array("correct horse battery".utf8)
        try VoteLedgerService.create(
            StoreConfiguration(.file(path: temp), passphrase: .given(passphrase)), name: "encrypted", now: Self.t0
        ).close()
        do {
            try VoteLedgerService.openLedger(StoreConfiguration(.file(path: temp), log: { _ in })).close()
            Issue.record("an encrypted key opened without its passphrase")
        } catch {
            #expect(VoteError(error).reason == .passphraseRequired)
        }
        do {
            try VoteLedgerService.openLedger(
                StoreConfiguration(.file(path: temp), passphrase: .given(Array("wrong horse".utf8)), log: { _ in })
            ).close()
            Issue.record("a wrong passphrase opened the key")
        } catch {
            #expect(VoteError(error).reason == .refused)
        }
        try VoteLedgerService.openLedger(
            StoreConfiguration(.file(path: temp), passphrase: .given(passphrase), log: { _ in })
        ).close()
    }

    /// A missing ledger is `notFound`; any error reaches the service's type by its own type.
    @Test func conversionsKeepTheKind() throws {
        let missing = NSTemporaryDirectory() + "no-ledger-\(UUID().uuidString)"
        do {
            _ = try ElectionView.replay(FileBlockSource(path: missing))
            Issue.record("a missing ledger replayed")
        } catch {
            #expect(VoteError(error).reason == .notFound)
        }
        let damaged = LedgerError.damaged(height: 7, file: "00000000.log", offset: 4096, reason: "CRC mismatch")
        #expect(VoteError(damaged).reason == .integrity(block: 7, offset: 4096))
        #expect(
            VoteError(damaged).message == "integrity failure: block 7: CRC mismatch (00000000.log, byte offset 4096)")
        #expect(VoteError(Violation.placeNotFound(3)).reason == .violation(.placeNotFound(3)))
        #expect(VoteError(LedgerError.busy(pid: 42)).reason == .busy(holder: 42))
    }
}
