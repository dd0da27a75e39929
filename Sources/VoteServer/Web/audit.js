// Receipt verification in the browser, from Ledger/FORMAT.md §4 and §12 alone: no DOM, no network of its
// own (the caller hands in the current head and a way to fetch a consistency proof), so a voter's browser
// checks the authority's ledger without trusting any code the server runs. WebCrypto does the SHA-256 and
// the Ed25519; everything else is here. Sizes and indexes are BigInt: tree positions are u64.

const encoder = new TextEncoder();

/** A receipt, key or head that cannot be read at all (as opposed to one that reads but does not verify). */
export class FormatError extends Error {}

// MARK: - Encodings

const base64Pattern = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Strict RFC 4648 §4 base64: padded, no line breaks, canonical padding bits (one text form per value). */
export function base64Decode(text) {
    if (!base64Pattern.test(text)) throw new FormatError(`not canonical base64: ${text.slice(0, 20)}`);
    const binary = atob(text);
    const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
    if (base64Encode(bytes) !== text) throw new FormatError('non-canonical base64 padding bits');
    return bytes;
}

export function base64Encode(bytes) {
    let binary = '';
    for (const b of bytes) binary += String.fromCharCode(b);
    return btoa(binary);
}

export function hexDecode(text) {
    if (!/^(?:[0-9a-f]{2})*$/.test(text)) throw new FormatError('not lowercase hex');
    return Uint8Array.from(text.match(/../g) ?? [], (h) => parseInt(h, 16));
}

export function hexEncode(bytes) {
    return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** A decimal number with no sign and no leading zero (FORMAT.md §12), as a BigInt. */
function decimal(text, what) {
    if (!/^(?:0|[1-9][0-9]*)$/.test(text)) throw new FormatError(`${what} is not a decimal number`);
    const value = BigInt(text);
    if (value >= 1n << 64n) throw new FormatError(`${what} is too large`);
    return value;
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

function equalBytes(a, b) {
    return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** Every line ends in LF; CR and other control characters are refused (FORMAT.md §12). */
function requireCleanText(text, what) {
    // eslint-disable-next-line no-control-regex
    if (/[\u0000-\u0009\u000b-\u001f\u007f]/.test(text)) throw new FormatError(`${what} holds a control character (CR?)`);
    if (!text.endsWith('\n')) throw new FormatError(`${what} does not end in a line feed`);
}

// MARK: - Hashes and the RFC 9162 tree

export async function sha256(bytes) {
    if (!globalThis.crypto?.subtle) throw new FormatError('this page needs a secure context (https or localhost) for WebCrypto');
    return new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
}

/** Leaf hash of event bytes: SHA-256(0x00 || e). */
export function leafHash(eventBytes) {
    return sha256(concat(Uint8Array.of(0), eventBytes));
}

function nodeHash(left, right) {
    return sha256(concat(Uint8Array.of(1), left, right));
}

const isOdd = (n) => (n & 1n) === 1n;

/** RFC 9162 §2.1.3.2: does `proof` take `leaf` at `index` to `root` in a tree of `size` leaves? */
export async function verifyInclusion(leaf, index, size, proof, root) {
    if (index >= size) return false;
    let fn = index;
    let sn = size - 1n;
    let r = leaf;
    for (const p of proof) {
        if (sn === 0n) return false;
        if (isOdd(fn) || fn === sn) {
            r = await nodeHash(p, r);
            if (!isOdd(fn)) {
                while (!isOdd(fn) && fn !== 0n) {
                    fn >>= 1n;
                    sn >>= 1n;
                }
            }
        } else {
            r = await nodeHash(r, p);
        }
        fn >>= 1n;
        sn >>= 1n;
    }
    return sn === 0n && equalBytes(r, root);
}

/**
 * RFC 9162 §2.1.4.2: does `proof` show the tree of `first` leaves with root `firstRoot` is a prefix of the
 * tree of `second` leaves with root `secondRoot`? As FORMAT.md §4: never from size 0, and equal sizes only
 * with an empty proof and equal roots.
 */
export async function verifyConsistency(first, second, proof, firstRoot, secondRoot) {
    if (first === 0n || first > second) return false;
    if (first === second) return proof.length === 0 && equalBytes(firstRoot, secondRoot);
    if (proof.length === 0) return false;
    let path = proof;
    if ((first & (first - 1n)) === 0n) path = [firstRoot, ...proof];
    let fn = first - 1n;
    let sn = second - 1n;
    while (isOdd(fn)) {
        fn >>= 1n;
        sn >>= 1n;
    }
    let fr = path[0];
    let sr = path[0];
    for (const c of path.slice(1)) {
        if (sn === 0n) return false;
        if (isOdd(fn) || fn === sn) {
            fr = await nodeHash(c, fr);
            sr = await nodeHash(c, sr);
            if (!isOdd(fn)) {
                while (!isOdd(fn) && fn !== 0n) {
                    fn >>= 1n;
                    sn >>= 1n;
                }
            }
        } else {
            sr = await nodeHash(sr, c);
        }
        fn >>= 1n;
        sn >>= 1n;
    }
    return sn === 0n && equalBytes(fr, firstRoot) && equalBytes(sr, secondRoot);
}

// MARK: - Keys, signed notes, checkpoints

async function keyID(name, publicKey, type = 0x01) {
    return (await sha256(concat(encoder.encode(name), Uint8Array.of(0x0a, type), publicKey))).slice(0, 4);
}

/**
 * A C2SP verifier key line `<name>+<hex key id>+<base64(type || key)>`, key id checked: type 0x01 for a log's
 * Ed25519 key (the default), 0x04 for a witness's Ed25519 cosigner key (c2sp.org/tlog-cosignature).
 */
export async function parseVerifierKey(line, type = 0x01) {
    // The name holds no '+'; the base64 key may.
    const [name, id, ...rest] = line.trim().split('+');
    if (rest.length === 0) throw new FormatError('a verifier key is NAME+KEYID+KEY');
    const encoded = rest.join('+');
    if (!name || /\s/.test(name)) throw new FormatError('the key name is empty or holds a space');
    if (!/^[0-9a-f]{8}$/.test(id)) throw new FormatError('the key id is not 8 lowercase hex digits');
    const bytes = base64Decode(encoded);
    if (bytes.length !== 33 || bytes[0] !== type) throw new FormatError('not an Ed25519 verifier key of this kind');
    const publicKey = bytes.slice(1);
    if (hexEncode(await keyID(name, publicKey, type)) !== id) throw new FormatError('the key id does not match the key');
    return { name, keyID: hexDecode(id), publicKey };
}

/** A C2SP signed note: the text (ending in LF) and its signature lines, split at the last empty line. */
export function parseNote(note) {
    requireCleanText(note, 'the signed head');
    const split = note.lastIndexOf('\n\n');
    if (split < 0) throw new FormatError('the signed head has no signature block');
    const text = note.slice(0, split + 1);
    const signatures = [];
    for (const line of note.slice(split + 2, -1).split('\n')) {
        const match = /^\u2014 (\S+) (\S+)$/.exec(line);
        if (!match || match[1].includes('+')) throw new FormatError('malformed signature line in the signed head');
        const bytes = base64Decode(match[2]);
        if (bytes.length < 5) throw new FormatError('signature line too short');
        signatures.push({ name: match[1], keyID: bytes.slice(0, 4), signature: bytes.slice(4) });
    }
    return { text, signatures };
}

/**
 * The checkpoint in a note's text: origin, tree size, root, and the `height`/`time` extension lines, each
 * exactly once (FORMAT.md §12.1).
 */
export function parseCheckpoint(text) {
    const lines = text.slice(0, -1).split('\n');
    if (lines.length < 3 || !lines[0]) throw new FormatError('a checkpoint has an origin, a size and a root');
    const root = base64Decode(lines[2]);
    if (root.length !== 32) throw new FormatError('the checkpoint root is not 32 bytes');
    const checkpoint = { origin: lines[0], size: decimal(lines[1], 'tree size'), root, height: null, time: null };
    for (const line of lines.slice(3)) {
        if (!line) throw new FormatError('empty extension line in the checkpoint');
        const key = ['height', 'time'].find((name) => line.startsWith(name + ' '));
        if (!key) continue;
        if (checkpoint[key] !== null) throw new FormatError(`more than one ${key} line in the checkpoint`);
        checkpoint[key] = decimal(line.slice(key.length + 1), key);
    }
    for (const key of ['height', 'time']) {
        if (checkpoint[key] === null) throw new FormatError(`the checkpoint has no ${key} line`);
    }
    return checkpoint;
}

/**
 * Whether the note is signed by `key` (from parseVerifierKey) under the key name: at least one line of that
 * name and key id, and every such line verifies (FORMAT.md §12.1). Other names (cosignatures) are ignored.
 */
export async function isSignedBy(note, key) {
    const mine = note.signatures.filter((s) => s.name === key.name && equalBytes(s.keyID, key.keyID));
    if (mine.length === 0) return false;
    const cryptoKey = await crypto.subtle.importKey('raw', key.publicKey, { name: 'Ed25519' }, false, ['verify']);
    for (const s of mine) {
        if (s.signature.length !== 64) return false;
        if (!(await crypto.subtle.verify({ name: 'Ed25519' }, cryptoKey, s.signature, encoder.encode(note.text)))) return false;
    }
    return true;
}

/**
 * Whether `note` carries a valid cosignature by `witness` (parseVerifierKey(line, 0x04)): a line of its name
 * and key id whose payload is a big-endian u64 time T and an Ed25519 signature of "cosignature/v1\n",
 * "time T\n" and the note's text. A line of this witness that does not verify makes it false.
 */
export async function isCosignedBy(note, witness) {
    const mine = note.signatures.filter((s) => s.name === witness.name && equalBytes(s.keyID, witness.keyID));
    if (mine.length === 0) return false;
    const cryptoKey = await crypto.subtle.importKey('raw', witness.publicKey, { name: 'Ed25519' }, false, ['verify']);
    for (const s of mine) {
        if (s.signature.length !== 8 + 64) return false;
        const time = new DataView(s.signature.buffer, s.signature.byteOffset, 8).getBigUint64(0);
        if (time === 0n || time >= (1n << 63n) - 1n) return false; // no moment a witness signed at
        const message = concat(encoder.encode(`cosignature/v1\ntime ${time}\n`), encoder.encode(note.text));
        if (!(await crypto.subtle.verify({ name: 'Ed25519' }, cryptoKey, s.signature.slice(8), message))) return false;
    }
    return true;
}

/**
 * The 'witnesses' check of a head's note: at least `quorum` of `witnesses` (lines NAME=VKEY) cosigned it.
 * Adds it with `add` (no check without witnesses) and returns whether it did not fail.
 */
async function checkWitnesses(note, witnesses, quorum, add) {
    if (witnesses.length === 0) return true;
    const cosigned = [];
    try {
        for (const line of witnesses) {
            const at = line.indexOf('=');
            const witness = await parseVerifierKey(line.slice(at + 1), 0x04);
            if (at < 1 || witness.name !== line.slice(0, at)) throw new FormatError(`${line.slice(0, at)}: not NAME=VKEY`);
            if (await isCosignedBy(note, witness)) cosigned.push(witness.name);
        }
        if (!(quorum >= 1 && quorum <= witnesses.length)) throw new FormatError(`a quorum of ${quorum} of ${witnesses.length}`);
    } catch (error) {
        add('witnesses', 'fail', error.message);
        return false;
    }
    const met = cosigned.length >= quorum;
    add('witnesses', met ? 'pass' : 'fail', `${cosigned.length}/${witnesses.length}, ${quorum}: ${cosigned.join(', ')}`);
    return met;
}

/** A signed head: the note and its checkpoint (which must be a VoteLedger one). */
export function parseHead(text) {
    const note = parseNote(text);
    const checkpoint = parseCheckpoint(note.text);
    if (!checkpoint.origin.startsWith('voteledger/')) throw new FormatError('not a VoteLedger signed head');
    return { note, checkpoint };
}

// MARK: - Receipts

/** A C2SP tlog-proof (FORMAT.md §12.2): the event, its index, the inclusion proof and the signed head. */
export function parseReceipt(text) {
    requireCleanText(text, 'the receipt');
    const lines = text.split('\n');
    if (lines[0] !== 'c2sp.org/tlog-proof@v1') throw new FormatError('not a c2sp.org/tlog-proof@v1 receipt');
    let at = 1;
    let extra = null;
    if (lines[at]?.startsWith('extra ')) extra = base64Decode(lines[at++].slice(6));
    if (!lines[at]?.startsWith('index ')) throw new FormatError('the receipt has no index line');
    const index = decimal(lines[at++].slice(6), 'index');
    const proof = [];
    while (at < lines.length && lines[at] !== '') {
        const hash = base64Decode(lines[at++]);
        if (hash.length !== 32) throw new FormatError('a proof hash is not 32 bytes');
        proof.push(hash);
    }
    if (proof.length > 64) throw new FormatError('more than 64 proof hashes');
    if (at >= lines.length) throw new FormatError('the receipt has no signed head');
    if (extra === null) throw new FormatError('the receipt carries no event (no extra line)');
    return { extra, index, proof, head: parseHead(lines.slice(at + 1).join('\n')) };
}

/** Reads an event's payload field by field (FORMAT.md §11.1); a read past the end throws a FormatError. */
class PayloadReader {
    constructor(bytes) {
        this.bytes = bytes;
        this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
        this.at = 0;
    }

    get left() {
        return this.bytes.length - this.at;
    }

    /** Skips `n` bytes and returns where they start. */
    skip(n) {
        if (n > this.left) throw new FormatError('truncated event');
        const at = this.at;
        this.at += n;
        return at;
    }

    u8() { return this.bytes[this.skip(1)]; }

    u16() { return this.view.getUint16(this.skip(2)); }

    u32() { return this.view.getUint32(this.skip(4)); }

    u64() { return this.view.getBigUint64(this.skip(8)); }

    bytesField() {
        const length = this.u32();
        const at = this.skip(length);
        return this.bytes.slice(at, at + length);
    }

    str() {
        return new TextDecoder('utf-8', { fatal: true }).decode(this.bytesField());
    }
}

const questionMethods = { 1: 'choose', 2: 'yes-no', 3: 'rank' };
const rankRules = { 1: 'scottish-stv', 2: 'schulze' };

/** A yes/no question's threshold (FORMAT.md §11.21) in the API's words ("2/3 of yes-and-no"). */
function readThreshold(reader) {
    const kind = reader.u8();
    if (kind === 1) return 'more-yes-than-no';
    if (kind === 4) return 'majority-of-electorate';
    if (kind !== 2 && kind !== 3) throw new FormatError(`unknown threshold ${kind}`);
    const fraction = `${reader.u64()}/${reader.u64()}`;
    return `${fraction} of ${kind === 2 ? 'yes-and-no' : 'ballots'}`;
}

/** One question of a ballot (FORMAT.md §11.21), in the form of the API's Question. */
function readQuestion(reader) {
    const question = { title: reader.str(), description: reader.str() };
    const flags = reader.u8();
    if (flags > 1) throw new FormatError(`unknown question flags ${flags}`);
    question.blank = flags === 1;
    question.method = questionMethods[reader.u8()];
    if (question.method === 'choose') {
        Object.assign(question, { min: reader.u16(), max: reader.u16(), seats: reader.u16() });
    } else if (question.method === 'yes-no') {
        question.threshold = readThreshold(reader);
        const hasQuorum = reader.u8();
        if (hasQuorum > 1) throw new FormatError(`unknown quorum flag ${hasQuorum}`);
        if (hasQuorum) question.quorum = `${reader.u64()}/${reader.u64()}`;
    } else if (question.method === 'rank') {
        question.seats = reader.u16();
        question.rule = rankRules[reader.u8()];
        if (!question.rule) throw new FormatError('unknown rule');
    } else {
        throw new FormatError('unknown question method');
    }
    const count = reader.u16();
    question.options = Array.from({ length: count }, () => reader.str());
    return question;
}

/** A place's ballot of questions: version 1, a count, the questions. */
function readBallot(reader) {
    if (reader.u8() !== 1) throw new FormatError('unknown ballot version');
    const count = reader.u8();
    return Array.from({ length: count }, () => readQuestion(reader));
}

/** A voter's answers (FORMAT.md §11.22): per question the options given (indexes from 0, in order), or null
 * for a blank answer. */
function readAnswers(reader) {
    const count = reader.u8();
    return Array.from({ length: count }, () => {
        const n = reader.u16();
        return n === 0xffff ? null : Array.from({ length: n }, () => reader.u16());
    });
}

/** A place created (type 0x0101): id u32, name str, description str, four i64 times, maxCandidates u32, then
 * flags u32 unless 0, then the ballot key (bytes) when flag bit 1 is set, then the ballot when flag bit 2 is, then
 * the batch rule when flag bit 4 is (§11.31: the interval in ms u64 and the size u32, 0 for a part not set; as
 * `batches`, `{ intervalSeconds, size }`, a part not set left out). */
function readPlaceCreated(reader) {
    const place = reader.u32();
    reader.str();
    reader.str();
    reader.skip(4 * 8 + 4);
    const flags = reader.left > 0 ? reader.u32() : 0;
    const ballotKey = flags & 2 ? reader.bytesField() : null;
    const questions = flags & 4 ? readBallot(reader) : null;
    let batches = null;
    if (flags & 16) {
        const interval = reader.u64();
        const size = reader.u32();
        batches = { ...(interval ? { intervalSeconds: Number(interval / 1000n) } : {}), ...(size ? { size } : {}) };
    }
    return { kind: 'place_created', place, ballotKey, questions, batches };
}

/**
 * What an event's bytes say (FORMAT.md §11.1), or null for another event or bytes that do not decode: a vote
 * (type 0x0105: place u32, candidate u32, token hash; an anonymous one, 0x010A: place u32, candidate u32, credential
 * bytes, signature bytes); a ballot's answers (type 0x010B, or 0x010C for one that replaces the voter's earlier
 * ballot: place u32, token hash, answers, each a list of option indexes from 0 or null for blank; an anonymous
 * one, 0x010F: place u32, credential bytes, signature bytes, answers); or a place's creation (type 0x0101: its
 * id, for an anonymous place its ballot key, the DER SubjectPublicKeyInfo, and for a place that asks
 * questions its ballot, each question as the API's Question; null where the place has none).
 */
export function describeEvent(extra) {
    if (extra.length < 2 || extra[0] !== 0x01) return null;
    const reader = new PayloadReader(extra);
    reader.skip(2);
    let event;
    try {
        if (extra[1] === 0x05) {
            event = { kind: 'vote_cast', place: reader.u32(), candidate: reader.u32() };
            reader.skip(32);
        } else if (extra[1] === 0x0a) {
            event = { kind: 'anonymous_vote_cast', place: reader.u32(), candidate: reader.u32() };
            reader.bytesField();
            reader.bytesField();
        } else if (extra[1] === 0x0f) {
            const place = reader.u32();
            reader.bytesField();
            reader.bytesField();
            event = { kind: 'anonymous_ballot_cast', place, answers: readAnswers(reader) };
        } else if (extra[1] === 0x0b || extra[1] === 0x0c) {
            // 0x010C: a ballot cast again in a re-voting place, replacing the token's earlier one (§11.24).
            const place = reader.u32();
            reader.skip(32);
            const kind = extra[1] === 0x0b ? 'ballot_cast' : 'ballot_replaced';
            event = { kind, place, answers: readAnswers(reader) };
        } else if (extra[1] === 0x01) {
            event = readPlaceCreated(reader);
        } else {
            return null;
        }
    } catch {
        return null; // truncated, invalid UTF-8, or an unknown code
    }
    return reader.left === 0 ? event : null;
}

/**
 * Audits a receipt. `key` is the authority's verifier key line; `head`, optional, is the current signed
 * head; `consistency(from, to)`, needed with a head of another size, resolves to the proof hashes (hex).
 * With `witnesses` (lines NAME=VKEY), `quorum` of them must have cosigned the head checked: the current head
 * if given, else the receipt's. Returns every check as {id, status: 'pass'|'fail'|'skip', detail}, the parsed
 * facts, and `ok` (every check passed, none skipped but the ones a missing head or witnesses leave out).
 * Never throws for bad input.
 */
export async function auditReceipt({ receipt, key, head = null, consistency = null, witnesses = [], quorum = 0 }) {
    const checks = [];
    const report = { ok: false, checks, event: null, index: null, receiptSize: null, height: null, headSize: null };
    const add = (id, status, detail = '') => checks.push({ id, status, detail });
    let parsed;
    try {
        parsed = parseReceipt(receipt);
        add('format', 'pass');
    } catch (error) {
        add('format', 'fail', error.message);
        return report;
    }
    const cp = parsed.head.checkpoint;
    Object.assign(report, {
        event: describeEvent(parsed.extra), index: parsed.index, receiptSize: cp.size, height: cp.height,
    });
    let authority;
    try {
        authority = await parseVerifierKey(key);
        add('key', 'pass');
    } catch (error) {
        add('key', 'fail', error.message);
    }
    let signed = false;
    if (!authority) add('signature', 'skip');
    else if (authority.name !== cp.origin) add('signature', 'fail', `the key is for ${authority.name}, the receipt for ${cp.origin}`);
    else {
        signed = await isSignedBy(parsed.head.note, authority);
        add('signature', signed ? 'pass' : 'fail');
    }
    const included = await verifyInclusion(await leafHash(parsed.extra), parsed.index, cp.size, parsed.proof, cp.root);
    add('inclusion', included ? 'pass' : 'fail');
    // A head the authority did not sign says nothing about its history: no "rewritten" verdict from it.
    if (head === null || !signed) {
        add('consistency', 'skip');
        const cosigned = head === null ? await checkWitnesses(parsed.head.note, witnesses, quorum, add) : false;
        report.ok = signed && included && head === null && cosigned;
        return report;
    }
    let current;
    try {
        current = parseHead(head);
        if (!authority) throw new FormatError('no authority key to check it with');
        if (current.checkpoint.origin !== cp.origin) throw new FormatError(`the head is for ${current.checkpoint.origin}`);
        if (!(await isSignedBy(current.note, authority))) throw new FormatError('its signature is not valid under the authority key');
        report.headSize = current.checkpoint.size;
        add('head', 'pass');
    } catch (error) {
        add('head', 'fail', error.message);
        add('consistency', 'skip');
        return report;
    }
    const to = current.checkpoint;
    let consistent;
    if (to.size < cp.size) consistent = false;
    else if (to.size === cp.size) consistent = equalBytes(to.root, cp.root);
    else {
        try {
            const proof = (await consistency(cp.size, to.size)).map(hexDecode);
            consistent = await verifyConsistency(cp.size, to.size, proof, cp.root, to.root);
        } catch (error) {
            add('consistency', 'fail', error.message);
            return report;
        }
    }
    add('consistency', consistent ? 'pass' : 'fail', consistent ? '' : 'rewritten');
    const cosigned = await checkWitnesses(current.note, witnesses, quorum, add);
    report.ok = signed && included && consistent && cosigned;
    return report;
}
