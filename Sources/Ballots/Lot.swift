public import LedgerCrypto

/// A draw by lot that anyone can recompute and no one can steer: its seed is a digest of the place's own cast
/// ballots (fixed once voting ends, and unknown to everyone until then), never a value the authority picks.
///
/// A draw among options `o₁ … oₖ` hashes each option with the seed and the draw's context and takes the option
/// whose key is smallest as bytes:
/// `key(o) = SHA-256("voteledger-lot-v1" ‖ 0x00 ‖ seed ‖ u32be(question) ‖ u32be(draw) ‖ u32be(o))`,
/// where `question` is the question's index on the ballot and `draw` counts the draws already made while
/// counting that question (from 0), so two ties in one count are decided independently. FORMAT.md states the
/// same.
public struct Lot: Sendable, Equatable {
    /// The digest the draws are keyed by.
    public let seed: Digest

    /// A lot keyed by `seed`.
    public init(seed: Digest) {
        self.seed = seed
    }

    private static let domain = Array("voteledger-lot-v1".utf8) + [0]

    /// The option of `options` the lot picks for draw number `draw` of question `question`.
    /// `options` must not be empty; its order does not matter.
    public func draw(among options: [Int], question: Int, draw: Int) -> Int {
        precondition(!options.isEmpty, "a draw needs at least one option")
        return order(options, question: question, draw: draw)[0]
    }

    /// Orders `options` by the lot, first drawn first: what a rule that ranks tied options uses.
    public func order(_ options: [Int], question: Int, draw: Int) -> [Int] {
        options.map { (option: $0, key: key(option: $0, question: question, draw: draw)) }
            .sorted { $0.key.lexicographicallyPrecedes($1.key) }
            .map(\.option)
    }

    private func key(option: Int, question: Int, draw: Int) -> [UInt8] {
        var hasher = SHA256Hasher()
        hasher.update(Lot.domain)
        hasher.update(seed.bytes)
        for value in [question, draw, option] {
            let word = UInt32(truncatingIfNeeded: value)
            hasher.update([
                UInt8(word >> 24), UInt8(truncatingIfNeeded: word >> 16), UInt8(truncatingIfNeeded: word >> 8),
                UInt8(truncatingIfNeeded: word),
            ])
        }
        return hasher.finalize().bytes
    }
}
