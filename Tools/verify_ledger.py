#!/usr/bin/env python3
"""Independent VoteLedger verifier, written from Ledger/FORMAT.md alone.

    python3 Tools/verify_ledger.py LEDGER_DIR [--chain-only]
    python3 Tools/verify_ledger.py --receipt RECEIPT [--ledger LEDGER_DIR | --key VERIFIER_KEY]

Checks every segment header, frame (CRC-32C), block encoding, height, ledger id, hash link, timestamp,
tree size and RFC 9162 tree root, and every Ed25519 signature under the genesis authority key (§5-§7);
decodes the election events (§11), recomputes each place's tally and turnout, and checks every certified
result against it. Prints one JSON object; exit 0 verified, 3 integrity failure, 1 not a ledger or a
malformed receipt. Needs only the standard library and `cryptography` (Ed25519).
"""
import base64, hashlib, json, os, re, struct, sys
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.exceptions import InvalidSignature

# §2 CRC-32C
_T = []
for n in range(256):
    c = n
    for _ in range(8):
        c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    _T.append(c)
def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = _T[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF
assert crc32c(b"123456789") == 0xE3069283 and crc32c(b"") == 0

sha = lambda b: hashlib.sha256(b).digest()
EMPTY = sha(b"")
leaf_hash = lambda e: sha(b"\x00" + e)
node_hash = lambda l, r: sha(b"\x01" + l + r)

def mth(leaves):
    n = len(leaves)
    if n == 0: return EMPTY
    if n == 1: return leaves[0]
    k = 1
    while k * 2 < n: k *= 2
    return node_hash(mth(leaves[:k]), mth(leaves[k:]))

class Frontier:
    def __init__(self): self.size, self.sub = 0, []   # (root, subtree size), leftmost first
    def append(self, h):
        node, sz = h, 1
        while self.sub and self.sub[-1][1] == sz:
            l, _ = self.sub.pop(); node = node_hash(l, node); sz *= 2
        self.sub.append((node, sz)); self.size += 1
    def root(self):
        if not self.sub: return EMPTY
        acc = self.sub[-1][0]
        for r, _ in reversed(self.sub[:-1]): acc = node_hash(r, acc)
        return acc

class NotALedger(Exception): pass
class Damaged(Exception):
    """§6/§7 failure at block `height`, frame at `offset` of `file`."""
    def __init__(self, h, seg, off, reason):
        self.height, self.file, self.offset = h, f"segment-{seg:08d}.vlseg", off
        super().__init__(f"block {h}: {reason} (segment-{seg:08d}.vlseg, byte offset {off})")
class DecodeError(Exception): pass

MIN_BLOCK, MAX_BLOCK, MAX_EVENT = 182, 64 << 20, 1 << 20

class Reader:
    def __init__(self, b): self.b, self.o = b, 0
    def take(self, n, what):
        if n > len(self.b) - self.o: raise DecodeError(f"{what}: truncated (needs {n} bytes, has {len(self.b)-self.o})")
        r = self.b[self.o:self.o+n]; self.o += n; return r
    def u(self, fmt, what): return struct.unpack(">" + fmt, self.take(struct.calcsize(fmt), what))[0]
    def rem(self): return len(self.b) - self.o

def decode_header(r):
    v = r.u("H", "block header version")
    if v != 1: raise DecodeError(f"unknown format version {v} (this build reads version 1)")
    res = r.u("H", "block header")
    if res != 0: raise DecodeError(f"block header: reserved field is {res}, must be 0")
    h = dict(eventCount=r.u("I", "block header"), height=r.u("Q", "block header"))
    t = r.u("Q", "block header")
    if t >= 1 << 63: raise DecodeError("block header: timestamp out of range")
    h["timestamp"] = t
    h["treeSize"] = r.u("Q", "block header")
    h["ledgerID"] = r.take(16, "block header"); h["previousHash"] = r.take(32, "block header"); h["treeRoot"] = r.take(32, "block header")
    return h

def decode_block(b):
    r = Reader(b)
    hdr = decode_header(r)
    sig = r.take(64, "block signature")
    if hdr["eventCount"] == 0: raise DecodeError("block holds no events")
    events = []
    for i in range(hdr["eventCount"]):
        L = r.u("I", f"event {i} length")
        if not (2 <= L <= MAX_EVENT): raise DecodeError(f"event {i}: length {L} outside 2...{MAX_EVENT}")
        e = r.take(L, f"event {i}")
        events.append(e)   # event bytes = type || payload
    if r.rem(): raise DecodeError(f"{r.rem()} bytes after the last event")
    return hdr, b[:112], sig, events

def decode_genesis(e):
    t = struct.unpack(">H", e[:2])[0]
    if t != 1: raise DecodeError(f"first event is type {t}, not the genesis event")
    r = Reader(e[2:])
    v = r.u("H", "genesis")
    if v != 1: raise DecodeError(f"unknown format version {v} (this build reads version 1)")
    lid = r.take(16, "genesis ledger id"); c = r.u("Q", "genesis creation time")
    if c >= 1 << 63: raise DecodeError("genesis: creation time out of range")
    key = r.take(32, "genesis authority key"); n = r.u("H", "genesis name length"); name = r.take(n, "genesis name")
    try: name = name.decode("utf-8"); ok = 1 <= n <= 200
    except UnicodeDecodeError: ok = False
    if not ok: raise DecodeError("genesis: name must be 1-200 bytes of UTF-8")
    if r.rem(): raise DecodeError(f"genesis: {r.rem()} trailing bytes")
    return dict(ledgerID=lid, createdAt=c, authorityKey=key, name=name)

def segments(path):
    if not os.path.exists(path): raise NotALedger("no such directory")
    if not os.path.isdir(path): raise NotALedger("it is not a directory")
    nums = sorted(int(m.group(1)) for n in os.listdir(path) if (m := re.fullmatch(r"segment-(\d{8})\.vlseg", n)))
    if not nums: raise NotALedger("no segment files (segment-00000000.vlseg missing)")
    for i, n in enumerate(nums):
        if n != i: raise NotALedger(f"segment-{i:08d}.vlseg is missing")
    return len(nums)

def frame_at(data, o):
    avail = len(data) - o
    if avail < 12: return None, "incomplete frame header"
    if data[o:o+4] != b"VLBK": return None, "frame marker missing"
    B, crc = struct.unpack(">II", data[o+4:o+12])
    if not (MIN_BLOCK <= B <= MAX_BLOCK): return None, f"frame length {B} out of range"
    if 12 + B > avail: return None, "frame runs past the end of the file"
    blk = data[o+12:o+12+B]
    if crc32c(blk) != crc: return None, "frame checksum mismatch"
    return blk, None

def scan(path, n):
    """Yields (block bytes, segment, offset, frame length); returns torn tail bytes via list."""
    height = 0
    torn = [0]
    def gen():
        nonlocal height
        for s in range(n):
            data = open(os.path.join(path, f"segment-{s:08d}.vlseg"), "rb").read()
            last = s == n - 1
            if len(data) < 32 and last and s > 0:
                torn[0] = len(data); return
            try:
                r = Reader(data[:32])
                if r.take(8, "segment header") != b"VOTELEDG": raise DecodeError("not a ledger segment (bad magic)")
                v = r.u("H", "segment header")
                if v != 1: raise DecodeError(f"unknown format version {v} (this build reads version 1)")
                if r.u("H", "segment header") != 0: raise DecodeError("segment header: reserved field is not 0")
                num = r.u("I", "segment header"); first = r.u("Q", "segment header")
                if r.u("Q", "segment header") != 0: raise DecodeError("segment header: reserved field is not 0")
            except DecodeError as e:
                if s == 0: raise NotALedger(str(e))
                raise Damaged(height, s, 0, f"segment header: {e}")
            if num != s: raise Damaged(height, s, 0, f"segment header names segment {num}")
            if first != height: raise Damaged(height, s, 0, f"segment header says it starts at block {first}")
            o = 32
            while o < len(data):
                blk, why = frame_at(data, o)
                if blk is None:
                    if last and not any(frame_at(data, p)[0] is not None
                                        for p in range(o + 1, len(data) - 12 + 1) if data[p:p+4] == b"VLBK"):
                        torn[0] = len(data) - o; return
                    raise Damaged(height, s, o, why)
                yield blk, s, o, 12 + len(blk)
                o += 12 + len(blk); height += 1
    return gen(), torn

# §11 election events ---------------------------------------------------------------------------------

class Integrity(Exception):
    """A failure of the checks beyond the chain: an event that does not decode or a wrong certified result."""
    def __init__(self, height, message):
        super().__init__(f"block {height}: {message}" if height is not None else message)
        self.height = height


def read_str(r, what):
    raw = r.take(r.u("I", what), what)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise DecodeError(f"{what}: invalid UTF-8")


def decode_election_event(e):
    """Decodes one event's bytes (type || payload) into a tuple, per the table of §11."""
    t = struct.unpack(">H", e[:2])[0]
    r = Reader(e[2:])
    if t == 0x0101:
        v = ("place", r.u("I", "place id"), read_str(r, "place name"), read_str(r, "place description"),
             [struct.unpack(">q", r.take(8, "place window"))[0] for _ in range(4)], r.u("I", "candidate limit"))
    elif t == 0x0102:
        v = ("candidate", r.u("I", "place id"), r.u("I", "candidate id"), read_str(r, "candidate name"), read_str(r, "pledge"))
    elif t == 0x0103:
        v = ("withdrawn", r.u("I", "place id"), r.u("I", "candidate id"))
    elif t == 0x0104:
        v = ("authorized", r.u("I", "place id"), r.take(32, "voter tag"), r.take(32, "token hash"))
    elif t == 0x0105:
        v = ("vote", r.u("I", "place id"), r.u("I", "candidate id"), r.take(32, "token hash"))
    elif t == 0x0106:
        place, tree, authorized, voted, count = (r.u("I", "place id"), r.u("Q", "tree size"), r.u("Q", "authorised count"),
                                                 r.u("Q", "vote count"), r.u("I", "candidate count"))
        if count > r.rem() // 12: raise DecodeError(f"results: candidate count {count} too large")
        v = ("results", place, tree, authorized, voted, [(r.u("I", "candidate id"), r.u("Q", "votes")) for _ in range(count)])
    else:
        raise DecodeError(f"unknown election event type {t}")
    if r.rem(): raise DecodeError(f"{t}: {r.rem()} trailing bytes")
    return v


class Places:
    """The tally of §11: per place, candidates with their votes, authorisations and votes cast."""
    def __init__(self): self.places = {}

    def apply(self, event, index, height):
        kind, place = event[0], event[1]
        if kind == "place":
            self.places[place] = dict(name=event[2], candidates={}, authorized=0, voted=0)
            return
        p = self.places.get(place)
        if p is None: raise Integrity(height, f"event {index}: place {place} does not exist")
        if kind == "candidate":
            p["candidates"][event[2]] = dict(name=event[3], votes=0, withdrawn=False)
        elif kind == "withdrawn":
            p["candidates"][event[2]]["withdrawn"] = True
        elif kind == "authorized":
            p["authorized"] += 1
        elif kind == "vote":
            p["candidates"][event[2]]["votes"] += 1
            p["voted"] += 1
        elif kind == "results":
            expected = [(c, p["candidates"][c]["votes"]) for c in sorted(p["candidates"])]
            if event[2] != index or (event[3], event[4], event[5]) != (p["authorized"], p["voted"], expected):
                raise Integrity(height, f"event {index}: the certified results of place {place} differ from the votes cast")

    def tallies(self):
        out = []
        for place in sorted(self.places):
            p = self.places[place]
            rows = [dict(candidate=c, name=v["name"], votes=v["votes"], share=(v["votes"] / p["voted"]) if p["voted"] else 0.0,
                         withdrawn=v["withdrawn"]) for c, v in sorted(p["candidates"].items())]
            out.append(dict(place=place, name=p["name"], tally=rows,
                            turnout=dict(authorized=p["authorized"], voted=p["voted"],
                                         percentage=(p["voted"] * 100 / p["authorized"]) if p["authorized"] else 0.0)))
        return out


# §5-§7 verification ----------------------------------------------------------------------------------

def verify(path, election=True):
    """Verifies the ledger at `path`; returns the summary (the fields of `vote verify --json`, plus tallies)."""
    n = segments(path)
    g, _ = scan(path, n)
    try: first = next(g)
    except StopIteration: raise NotALedger("the first segment holds no complete genesis block")
    try:
        hdr, _, _, ev = decode_block(first[0])
        if hdr["height"] != 0 or len(ev) != 1: raise DecodeError("the first block is not a genesis block")
        genesis = decode_genesis(ev[0])
    except DecodeError as e: raise NotALedger(str(e))
    key = Ed25519PublicKey.from_public_bytes(genesis["authorityKey"])
    g, torn = scan(path, n)
    fr = Frontier()
    places = Places()
    rep = dict(ok=True, ledger_id=genesis["ledgerID"].hex(), blocks=0, events=0, bytes=0, height=0,
               head_hash=bytes(32).hex(), tree_root=EMPTY.hex())
    prev_hash, prev_ts, last_seg = bytes(32), 0, -1
    for blk, seg, off, flen in g:
        h = rep["blocks"]
        fail = lambda reason: Damaged(h, seg, off, reason)
        try: hdr, hb, sig, events = decode_block(blk)
        except DecodeError as e: raise fail(str(e))
        types = [struct.unpack(">H", e[:2])[0] for e in events]
        if hdr["height"] != h: raise fail(f"height is {hdr['height']}, expected {h}")
        if hdr["ledgerID"] != genesis["ledgerID"]: raise fail(f"belongs to another ledger (id {hdr['ledgerID'].hex()})")
        if h == 0:
            if not (len(events) == 1 and types[0] == 1 and hdr["timestamp"] == genesis["createdAt"] and hdr["previousHash"] == bytes(32)):
                raise fail("malformed genesis block")
        else:
            if hdr["previousHash"] != prev_hash: raise fail("previous header hash mismatch")
            if hdr["timestamp"] < prev_ts: raise fail(f"timestamp {hdr['timestamp']} is before the previous block's {prev_ts}")
            bad = [t for t in types if t < 0x0100]
            if bad: raise fail(f"event type {bad[0]} is reserved for the ledger")
        first_index = fr.size
        if hdr["treeSize"] != fr.size + hdr["eventCount"]: raise fail(f"tree size is {hdr['treeSize']}, expected {fr.size + hdr['eventCount']}")
        for e in events: fr.append(leaf_hash(e))
        if fr.root() != hdr["treeRoot"]: raise fail("tree root mismatch")
        hh = sha(hb)
        try: key.verify(sig, hh)
        except InvalidSignature: raise fail("signature invalid")
        if election and h > 0:
            for i, e in enumerate(events):
                try: event = decode_election_event(e)
                except DecodeError as err: raise Integrity(h, f"event {i}: {err}")
                places.apply(event, first_index + i, h)
        rep["blocks"] += 1; rep["events"] = hdr["treeSize"]; rep["height"] = hdr["height"]
        rep["bytes"] += flen + (32 if seg != last_seg else 0); last_seg = seg
        rep["head_hash"] = hh.hex(); rep["tree_root"] = hdr["treeRoot"].hex()
        prev_hash, prev_ts = hh, hdr["timestamp"]
    rep["torn_tail_bytes"] = torn[0]
    rep["places"] = len(places.places)
    rep["tallies"] = places.tallies()
    return rep


def leaves_and_roots(path):
    """Every leaf hash of the ledger and the tree root of the last block (for consistency proofs)."""
    n = segments(path)
    g, _ = scan(path, n)
    leaves, root = [], EMPTY
    for blk, _, _, _ in g:
        hdr, _, _, events = decode_block(blk)
        leaves += [leaf_hash(e) for e in events]
        root = hdr["treeRoot"]
    return leaves, root


# §12 receipts ----------------------------------------------------------------------------------------

def verify_inclusion(leaf, index, size, proof, root):
    """RFC 9162 §2.1.3.2."""
    if index >= size: return False
    fn, sn, r = index, size - 1, leaf
    for p in proof:
        if sn == 0: return False
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            if not fn & 1:
                while not fn & 1 and fn != 0: fn >>= 1; sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1; sn >>= 1
    return sn == 0 and r == root


def consistency_proof(leaves, m, n):
    """RFC 9162 §2.1.4.1 PROOF(m, D[n]) over leaf hashes."""
    def sub(m, lo, hi, b):
        size = hi - lo
        if m == size: return [] if b else [mth(leaves[lo:hi])]
        k = 1
        while k * 2 < size: k *= 2
        if m <= k: return sub(m, lo, lo + k, b) + [mth(leaves[lo + k:hi])]
        return sub(m - k, lo + k, hi, False) + [mth(leaves[lo:lo + k])]
    return sub(m, 0, n, True)


def verify_consistency(m, n, proof, old, new):
    """RFC 9162 §2.1.4.2."""
    if m == 0 or m > n: return False
    if m == n: return not proof and old == new
    if not proof: return False
    path = ([old] + proof) if m & (m - 1) == 0 else list(proof)
    fn, sn = m - 1, n - 1
    while fn & 1: fn >>= 1; sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0: return False
        if fn & 1 or fn == sn:
            fr, sr = node_hash(c, fr), node_hash(c, sr)
            if not fn & 1:
                while not fn & 1 and fn != 0: fn >>= 1; sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1; sn >>= 1
    return fr == old and sr == new and sn == 0


class BadReceipt(Exception): pass


def parse_receipt(text):
    """A C2SP tlog-proof (§12): (extra, index, proof, note text, signature lines)."""
    lines = text.split("\n")
    if len(lines) < 4 or lines[0] != "c2sp.org/tlog-proof@v1": raise BadReceipt("not a c2sp.org/tlog-proof@v1 document")
    at = 1
    extra = None
    if lines[at].startswith("extra "):
        extra = base64.b64decode(lines[at][6:], validate=True); at += 1
    if not lines[at].startswith("index "): raise BadReceipt("missing index line")
    index = int(lines[at][6:]); at += 1
    proof = []
    while at < len(lines) and lines[at]:
        h = base64.b64decode(lines[at], validate=True)
        if len(h) != 32: raise BadReceipt("a proof hash is not 32 bytes")
        proof.append(h); at += 1
    note = "\n".join(lines[at + 1:])
    split = note.rfind("\n\n")
    if split < 0: raise BadReceipt("the checkpoint has no signature")
    return extra, index, proof, note[:split + 1], [l for l in note[split + 2:].split("\n") if l]


def verify_receipt(text, key_bytes, ledger=None):
    """Checks a receipt's signed head (key ID, Ed25519), the event's inclusion, and with a ledger the consistency."""
    extra, index, proof, body, signatures = parse_receipt(text)
    head = body.split("\n")
    origin, size, root = head[0], int(head[1]), base64.b64decode(head[2], validate=True)
    key_id = sha(origin.encode() + b"\n\x01" + key_bytes)[:4]
    key = Ed25519PublicKey.from_public_bytes(key_bytes)
    mine = []
    for line in signatures:
        dash, name, sig = line.split(" ")
        raw = base64.b64decode(sig, validate=True)
        if dash == "\u2014" and name == origin and raw[:4] == key_id: mine.append(raw[4:])
    if not mine: raise Integrity(None, "the receipt's head is not signed by the authority key")
    for sig in mine:
        try: key.verify(sig, body.encode())
        except InvalidSignature: raise Integrity(None, "the receipt's head signature is invalid")
    if extra is None or not verify_inclusion(leaf_hash(extra), index, size, proof, root):
        raise Integrity(None, "the event is not included under the receipt's head")
    height = next((int(l[7:]) for l in head[3:] if l.startswith("height ")), None)
    result = dict(ok=True, index=index, tree_size=size, height=height)
    if ledger:
        leaves, current = leaves_and_roots(ledger)
        if size > len(leaves) or not verify_consistency(size, len(leaves), consistency_proof(leaves, size, len(leaves)), root, current):
            raise Integrity(None, "the receipt's head is not a prefix of this ledger")
        result["current_tree_size"] = len(leaves)
    return result


def main(argv):
    import argparse
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("ledger", nargs="?")
    parser.add_argument("--chain-only", action="store_true", help="check §5-§7 only, not the election events")
    parser.add_argument("--receipt")
    parser.add_argument("--ledger", dest="receipt_ledger")
    parser.add_argument("--key", help="authority public key, 64 hex characters (offline receipts)")
    a = parser.parse_args(argv)
    try:
        if a.receipt:
            ledger = a.receipt_ledger or a.ledger
            if ledger:
                g, _ = scan(ledger, segments(ledger))
                key_bytes = decode_genesis(decode_block(next(g)[0])[3][0])["authorityKey"]
            elif a.key:
                key_bytes = bytes.fromhex(a.key)
            else:
                parser.error("a receipt needs --ledger or --key")
            print(json.dumps(verify_receipt(open(a.receipt, encoding="utf-8").read(), key_bytes, ledger), sort_keys=True))
            return 0
        if not a.ledger: parser.error("give a ledger directory")
        print(json.dumps(verify(a.ledger, election=not a.chain_only), sort_keys=True))
        return 0
    except (NotALedger, BadReceipt, ValueError, UnicodeDecodeError) as e:
        print(json.dumps(dict(ok=False, error=str(e)))); return 1
    except Damaged as e:
        print(json.dumps(dict(ok=False, error=str(e), height=e.height, file=e.file, offset=e.offset))); return 3
    except Integrity as e:
        failure = dict(ok=False, error=str(e))
        if e.height is not None: failure["height"] = e.height
        print(json.dumps(failure)); return 3


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
