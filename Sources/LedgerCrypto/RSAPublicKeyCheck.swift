internal import COpenSSL
import Foundation

/// Partial public-key validation of an RSA public key (n, e), after NIST SP 800-56B Rev. 2 §6.4.2.2, as FORMAT.md
/// rule 11.7.8 states it (which asks e = 65537 besides), so that `Tools/verify_ledger.py` applies the same check
/// from the text:
///
/// - n has a bit length (the position of its highest set bit) in the range asked for, and is odd;
/// - n has no prime factor below 752;
/// - n is composite: it is not a strong probable prime to base 2 (one Miller-Rabin round with base 2);
/// - n is not a perfect power (no integers b ≥ 2, c ≥ 2 with n = b^c);
/// - e is odd and 2^16 < e < 2^256.
///
/// A key made by any RSA key generator passes; a key that is not the product of two large primes (an even
/// modulus, one with a small factor, a prime, a square) fails. The check is deterministic: the same bytes give
/// the same answer on every machine.
public enum RSAPublicKeyCheck {
    /// The odd primes below 752: a modulus with one of them (or 2) as a factor is refused.
    static let smallPrimes: [UInt] = {
        var composite = [Bool](repeating: false, count: 752)
        var primes: [UInt] = []
        for candidate in 2..<752 where !composite[candidate] {
            if candidate > 2 { primes.append(UInt(candidate)) }
            for multiple in stride(from: candidate * candidate, to: 752, by: candidate) { composite[multiple] = true }
        }
        return primes
    }()

    /// Whether the big-endian `modulus` and `exponent` (leading zero bytes allowed) pass the checks above, with
    /// the modulus's bit length in `modulusBits`.
    public static func isValid(modulus: [UInt8], exponent: [UInt8], modulusBits: ClosedRange<Int>) -> Bool {
        let modulus = Array(modulus.drop { $0 == 0 })
        let exponent = Array(exponent.drop { $0 == 0 })
        // e: odd, above 2^16 and below 2^256. An odd e of 3 to 32 bytes is exactly that (2^16 itself is even).
        guard let low = exponent.last, low & 1 == 1, (3...32).contains(exponent.count) else { return false }
        guard let high = modulus.first else { return false }
        let bits = modulus.count * 8 - high.leadingZeroBitCount
        guard modulusBits.contains(bits), modulus.last! & 1 == 1, let context = BigNumberContext() else {
            return false
        }
        let n = BigNumber(modulus)
        for prime in smallPrimes where BN_mod_word(n.pointer, UInt(prime)) == 0 { return false }
        guard !isStrongProbablePrimeToBase2(n, context: context) else { return false }
        return !isPerfectPower(n, bytes: modulus, bits: bits, context: context)
    }

    /// One Miller-Rabin round with base 2: n - 1 = d·2^s with d odd; n passes if 2^d ≡ 1 or 2^(d·2^r) ≡ n - 1
    /// (mod n) for some 0 ≤ r < s. Every prime passes; a product of two large primes essentially never does.
    static func isStrongProbablePrimeToBase2(_ n: BigNumber, context: BigNumberContext) -> Bool {
        let minusOne = n.copy()
        checked(BN_sub_word(minusOne.pointer, 1))
        var s: Int32 = 0
        while BN_is_bit_set(minusOne.pointer, s) == 0 { s += 1 }
        let d = BigNumber()
        checked(BN_rshift(d.pointer, minusOne.pointer, s))
        let two = BigNumber(word: 2)
        let x = BigNumber()
        checked(BN_mod_exp(x.pointer, two.pointer, d.pointer, n.pointer, context.pointer))
        if BN_is_one(x.pointer) == 1 || BN_cmp(x.pointer, minusOne.pointer) == 0 { return true }
        for _ in 1..<max(s, 1) {
            checked(BN_mod_sqr(x.pointer, x.pointer, n.pointer, context.pointer))
            if BN_cmp(x.pointer, minusOne.pointer) == 0 { return true }
        }
        return false
    }

    /// Whether n = b^c for some b ≥ 2, c ≥ 2. It is enough to try prime c; as n has no factor below 752,
    /// b > 2^9 and so c < bits / 9.
    static func isPerfectPower(_ n: BigNumber, bytes: [UInt8], bits: Int, context: BigNumberContext) -> Bool {
        // log2(n) from its leading 64 bits, for a first estimate of each root (Newton's method below does not
        // depend on its accuracy, only its speed does).
        var leading: UInt64 = 0
        for byte in bytes.prefix(8) { leading = leading << 8 | UInt64(byte) }
        let log2n = log2(Double(leading)) + Double(8 * max(bytes.count - 8, 0))
        let power = BigNumber()
        for c in [UInt(2)] + smallPrimes where c < UInt(bits / 9 + 1) {
            let root = integerRoot(n, c, log2n: log2n, context: context)
            let exponent = BigNumber(word: c)
            checked(BN_exp(power.pointer, root.pointer, exponent.pointer, context.pointer))
            if BN_cmp(power.pointer, n.pointer) == 0 { return true }
        }
        return false
    }

    /// ⌊n^(1/c)⌋ by Newton's method on integers: x ← ((c - 1)·x + ⌊n / x^(c-1)⌋) / c. One step from any
    /// positive x lands at or above the root; from there the steps decrease until they stop decreasing.
    static func integerRoot(_ n: BigNumber, _ c: UInt, log2n: Double, context: BigNumberContext) -> BigNumber {
        let f = log2n / Double(c)
        let whole = Int(f.rounded(.down))
        let fraction = pow(2, f - Double(whole)) * (1 + 1e-9)
        var x = BigNumber(word: UInt(fraction * 1_099_511_627_776) + 1)  // · 2^40
        if whole >= 40 {
            checked(BN_lshift(x.pointer, x.pointer, Int32(whole - 40)))
        } else {
            checked(BN_rshift(x.pointer, x.pointer, Int32(40 - whole)))
            checked(BN_add_word(x.pointer, 1))
        }
        let cMinusOne = BigNumber(word: c - 1)
        let power = BigNumber()
        let quotient = BigNumber()
        func step(_ x: BigNumber) -> BigNumber {
            checked(BN_exp(power.pointer, x.pointer, cMinusOne.pointer, context.pointer))
            checked(BN_div(quotient.pointer, nil, n.pointer, power.pointer, context.pointer))
            let next = x.copy()
            checked(BN_mul_word(next.pointer, UInt(c - 1)))
            checked(BN_add(next.pointer, next.pointer, quotient.pointer))
            precondition(BN_div_word(next.pointer, UInt(c)) != UInt.max, "OpenSSL could not divide")
            return next
        }
        x = step(x)
        while true {
            let next = step(x)
            if BN_cmp(next.pointer, x.pointer) >= 0 { return x }
            x = next
        }
    }
}

// MARK: - Owners of OpenSSL's big numbers

/// Stops on a failed big-number operation: with valid inputs only allocation can fail.
private func checked(_ code: Int32) {
    precondition(code == 1, "OpenSSL failed a big-number operation")
}

/// Owns one OpenSSL BIGNUM and frees it with the Swift value that holds it.
final class BigNumber {
    let pointer: OpaquePointer

    /// Zero.
    init() {
        guard let pointer = BN_new() else { fatalError("OpenSSL could not allocate a big number") }
        self.pointer = pointer
    }

    /// The big-endian unsigned integer `bytes`.
    convenience init(_ bytes: [UInt8]) {
        self.init()
        let done = bytes.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32($0.count), pointer) }
        precondition(done != nil, "OpenSSL could not read a big number")
    }

    /// `word`.
    convenience init(word: UInt) {
        self.init()
        precondition(BN_set_word(pointer, UInt(word)) == 1, "OpenSSL could not set a big number")
    }

    /// A new big number with the same value.
    func copy() -> BigNumber {
        let copy = BigNumber()
        precondition(BN_copy(copy.pointer, pointer) != nil, "OpenSSL could not copy a big number")
        return copy
    }

    deinit { BN_free(pointer) }
}

/// Owns OpenSSL's scratch space for big-number arithmetic.
final class BigNumberContext {
    let pointer: OpaquePointer

    init?() {
        guard let pointer = BN_CTX_new() else { return nil }
        self.pointer = pointer
    }

    deinit { BN_CTX_free(pointer) }
}
