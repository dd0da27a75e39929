// RSA blind signatures (RFC 9474) on the voter's device: Prepare, Blind and Finalize, and verification of the
// finalized signature, so the server signs a ballot credential it never sees and cannot later tie to the
// voter it signed for. Anonymous places use RSABSSA-SHA384-PSS-Randomized; the other three variants are here
// so the RFC's vectors for all four can be checked. BigInt does the modular arithmetic, WebCrypto the SHA-384
// and the RSA-PSS verification; no DOM, no network, no third-party code.
//
// The blinding arithmetic uses plain BigInt, which does not run in constant time. What it could leak through
// timing (the blinding factor) stays on the voter's device, where only the voter's own browser could measure it.

/** The RFC 9474 §5 variants: EMSA-PSS salt length and Prepare's random prefix length, in bytes. */
export const VARIANTS = Object.freeze({
    'RSABSSA-SHA384-PSS-Randomized': Object.freeze({ saltLength: 48, prefixLength: 32 }),
    'RSABSSA-SHA384-PSSZERO-Randomized': Object.freeze({ saltLength: 0, prefixLength: 32 }),
    'RSABSSA-SHA384-PSS-Deterministic': Object.freeze({ saltLength: 48, prefixLength: 0 }),
    'RSABSSA-SHA384-PSSZERO-Deterministic': Object.freeze({ saltLength: 0, prefixLength: 0 }),
});

/** The variant of anonymous places. */
export const DEFAULT_VARIANT = 'RSABSSA-SHA384-PSS-Randomized';

/** The smallest modulus accepted, as on the server (BlindRSAPrivateKey.minimumBits). */
export const MINIMUM_BITS = 3072;

const HASH_LENGTH = 48; // SHA-384

// MARK: - Integers and bytes

/** RFC 8017 OS2IP: big-endian bytes to a BigInt. */
function bytesToInt(bytes) {
    let hex = '0x0';
    for (const b of bytes) hex += b.toString(16).padStart(2, '0');
    return BigInt(hex);
}

/** RFC 8017 I2OSP: a BigInt to exactly `length` big-endian bytes. */
function intToBytes(value, length) {
    const hex = value.toString(16).padStart(length * 2, '0');
    if (hex.length > length * 2) throw new Error(`integer too large for ${length} bytes`);
    return Uint8Array.from(hex.match(/../g), (h) => parseInt(h, 16));
}

function bitLength(value) {
    return value === 0n ? 0 : value.toString(2).length;
}

function base64urlDecode(text) {
    const base64 = text.replace(/-/g, '+').replace(/_/g, '/');
    return Uint8Array.from(atob(base64 + '='.repeat((4 - (base64.length % 4)) % 4)), (c) => c.charCodeAt(0));
}

function concat(...parts) {
    const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let offset = 0;
    for (const p of parts) {
        out.set(p, offset);
        offset += p.length;
    }
    return out;
}

function randomBytes(length) {
    return crypto.getRandomValues(new Uint8Array(length));
}

function modPow(base, exponent, modulus) {
    let result = 1n;
    base %= modulus;
    while (exponent > 0n) {
        if (exponent & 1n) result = (result * base) % modulus;
        base = (base * base) % modulus;
        exponent >>= 1n;
    }
    return result;
}

/** The inverse of `a` modulo `n` (extended Euclid), or null when they share a factor. */
function modInverse(a, n) {
    let [oldR, r] = [a % n, n];
    let [oldS, s] = [1n, 0n];
    while (r !== 0n) {
        const q = oldR / r;
        [oldR, r] = [r, oldR - q * r];
        [oldS, s] = [s, oldS - q * s];
    }
    if (oldR !== 1n) return null;
    return ((oldS % n) + n) % n;
}

function gcd(a, b) {
    while (b !== 0n) [a, b] = [b, a % b];
    return a;
}

/** A uniform integer in [1, n): random bits of n's length, drawn again until one falls in range. */
function randomBelow(n) {
    const bits = bitLength(n);
    const length = Math.ceil(bits / 8);
    for (;;) {
        const bytes = randomBytes(length);
        bytes[0] &= 0xff >> (length * 8 - bits);
        const value = bytesToInt(bytes);
        if (value > 0n && value < n) return value;
    }
}

async function sha384(bytes) {
    return new Uint8Array(await crypto.subtle.digest('SHA-384', bytes));
}

// MARK: - EMSA-PSS (RFC 8017 §9.1.1), SHA-384 and MGF1-SHA-384

async function mgf1(seed, length) {
    const blocks = [];
    for (let counter = 0; counter * HASH_LENGTH < length; counter++) {
        blocks.push(await sha384(concat(seed, intToBytes(BigInt(counter), 4))));
    }
    return concat(...blocks).slice(0, length);
}

/** EMSA-PSS-ENCODE(message, emBits) with the given salt. */
async function emsaPssEncode(message, emBits, salt) {
    const emLength = Math.ceil(emBits / 8);
    if (emLength < HASH_LENGTH + salt.length + 2) throw new Error('encoding error: the modulus is too small');
    const mHash = await sha384(message);
    const h = await sha384(concat(new Uint8Array(8), mHash, salt));
    const db = concat(new Uint8Array(emLength - salt.length - HASH_LENGTH - 2), Uint8Array.of(0x01), salt);
    const mask = await mgf1(h, emLength - HASH_LENGTH - 1);
    const maskedDB = db.map((b, i) => b ^ mask[i]);
    maskedDB[0] &= 0xff >> (8 * emLength - emBits);
    return concat(maskedDB, h, Uint8Array.of(0xbc));
}

// MARK: - The protocol

/**
 * A place's blind-signing public key from its DER SubjectPublicKeyInfo (as the place publishes it). WebCrypto
 * imports it for verification and hands back the modulus and exponent (as a JWK) for the blinding.
 */
export async function importPublicKey(spki, variant = DEFAULT_VARIANT) {
    const options = VARIANTS[variant];
    if (!options) throw new Error(`unknown RFC 9474 variant: ${variant}`);
    let cryptoKey;
    try {
        cryptoKey = await crypto.subtle.importKey('spki', spki, { name: 'RSA-PSS', hash: 'SHA-384' }, true, [
            'verify',
        ]);
    } catch {
        throw new Error('the blind-signing public key is not a DER RSA public key');
    }
    const jwk = await crypto.subtle.exportKey('jwk', cryptoKey);
    const n = bytesToInt(base64urlDecode(jwk.n));
    const bits = bitLength(n);
    if (bits < MINIMUM_BITS) {
        throw new Error(`a blind-signing key needs a modulus of at least ${MINIMUM_BITS} bits, not ${bits}`);
    }
    return Object.freeze({
        variant,
        ...options,
        n,
        e: bytesToInt(base64urlDecode(jwk.e)),
        bits,
        length: Math.ceil(bits / 8),
        cryptoKey,
    });
}

/**
 * RFC 9474 Prepare: a fresh random prefix (randomized variants) followed by the message. `prefix` fixes the
 * prefix, for the RFC's vectors only.
 */
export function prepare(key, message, { prefix = randomBytes(key.prefixLength) } = {}) {
    if (prefix.length !== key.prefixLength) throw new Error(`the prefix must be ${key.prefixLength} bytes`);
    return concat(prefix, message);
}

/**
 * RFC 9474 Blind: EMSA-PSS-encodes the prepared message with a fresh salt and multiplies it by r^e for a fresh
 * random r. Send `blindedMessage` to the signer; keep the whole result for `finalize`. `salt` and `inverse`
 * (r^-1 mod n, as the RFC's vectors give it) fix the randomness, for the vectors only.
 */
export async function blind(key, preparedMessage, { salt = randomBytes(key.saltLength), inverse } = {}) {
    if (salt.length !== key.saltLength) throw new Error(`the salt must be ${key.saltLength} bytes`);
    const encodedMessage = await emsaPssEncode(preparedMessage, key.bits - 1, salt);
    const m = bytesToInt(encodedMessage);
    if (gcd(m, key.n) !== 1n) throw new Error('invalid input: the message is not coprime with the modulus');
    let r;
    let inv;
    if (inverse) {
        inv = bytesToInt(inverse);
        r = modInverse(inv, key.n);
        if (r === null) throw new Error('the given inverse has no inverse modulo n');
    } else {
        do {
            r = randomBelow(key.n);
            inv = modInverse(r, key.n);
        } while (inv === null);
    }
    const z = (m * modPow(r, key.e, key.n)) % key.n;
    return Object.freeze({
        preparedMessage,
        encodedMessage,
        blindedMessage: intToBytes(z, key.length),
        inverse: intToBytes(inv, key.length),
    });
}

/**
 * RFC 9474 Finalize: s = blind_sig * inv mod n, returned only if it verifies as the key's signature of the
 * prepared message (a signer that answered anything else is caught before the voter relies on it).
 */
export async function finalize(key, blinding, blindSignature) {
    if (blindSignature.length !== key.length) throw new Error(`the blind signature must be ${key.length} bytes`);
    const s = (bytesToInt(blindSignature) * bytesToInt(blinding.inverse)) % key.n;
    const signature = intToBytes(s, key.length);
    if (!(await verify(key, blinding.preparedMessage, signature))) {
        throw new Error('the blind signature does not give a valid signature under this key');
    }
    return signature;
}

/** RFC 9474 §4.5: whether `signature` is the key's RSASSA-PSS (SHA-384) signature of the prepared message. */
export async function verify(key, preparedMessage, signature) {
    if (signature.length !== key.length) return false;
    const algorithm = { name: 'RSA-PSS', saltLength: key.saltLength };
    return crypto.subtle.verify(algorithm, key.cryptoKey, signature, preparedMessage);
}
