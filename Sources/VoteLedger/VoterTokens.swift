public import Election
public import Ledger
public import LedgerCrypto

/// Where a re-issue (FORMAT.md §11.17) finds the token it replaces, and a withdrawal (§11.29) the one it stops.
/// The roll can check that a token is a voter's current one but not list it (it holds only keys and small
/// entries), so the service reads it from the log: re-issuing and withdrawing are rare, not a hot path.
public enum VoterTokens {
    /// The hash of the current token of the voter with `voterTag` in `place`, as the blocks of `source` say
    /// (the last authorisation or re-issue naming the voter there); `nil` if the voter was never authorised.
    public static func current(in source: any BlockSource, place: UInt32, voterTag: Digest) throws -> Digest? {
        let authorized = ElectionEvent.Tag.voterAuthorized.rawValue
        let weighted = ElectionEvent.Tag.weightedVoterAuthorized.rawValue
        let reissued = ElectionEvent.Tag.voterTokenReissued.rawValue
        var current: Digest?
        try source.forEachBlock(from: 1) { block in
            for event in block.events where event.type == authorized || event.type == weighted || event.type == reissued
            {
                switch try? ElectionEvent(type: event.type, payload: event.payload) {
                case .voterAuthorized(place, voterTag, let token, _): current = token
                case .voterTokenReissued(place, voterTag, _, let token): current = token
                default: break
                }
            }
        }
        return current
    }

    /// The command that gives the voter with `voterTag` in `place` the token with hash `newTokenHash` in place
    /// of their current one. A voter never authorised gets a command the contract refuses with its reason.
    public static func reissue(
        in source: any BlockSource, place: UInt32, voterTag: Digest, newTokenHash: Digest
    ) throws -> Command {
        .reissueToken(
            place: place, voterTag: voterTag,
            oldTokenHash: try current(in: source, place: place, voterTag: voterTag) ?? .zero,
            newTokenHash: newTokenHash)
    }

    /// The command that withdraws the voter with `voterTag` from `place` (FORMAT.md §11.29), naming their current
    /// token. A voter never authorised gets a command the contract refuses with its reason.
    public static func withdrawal(in source: any BlockSource, place: UInt32, voterTag: Digest) throws -> Command {
        .withdrawVoter(
            place: place, voterTag: voterTag,
            tokenHash: try current(in: source, place: place, voterTag: voterTag) ?? .zero)
    }
}
