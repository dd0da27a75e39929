#!/usr/bin/env python3
"""Independent VoteLedger verifier, written from Ledger/FORMAT.md alone.

    python3 Tools/verify_ledger.py LEDGER_DIR [--ledger-only] [--earlier-copy COPY_DIR]
    python3 Tools/verify_ledger.py --receipt RECEIPT_FILE [--ledger LEDGER_DIR] [--key PUBKEY_HEX]
    python3 Tools/verify_ledger.py --head HEAD_FILE --ledger LEDGER_DIR [--receipt RECEIPT_FILE]
    ... --receipt or --head ... --witness NAME=VKEY [--witness NAME=VKEY ...] [--quorum K]

The first form checks every segment header, frame, block, hash link, tree head and signature (§5-§7),
then decodes the election events and re-decides every rule of §11 for each at its block's time (§11.6):
windows, names, ids, limits, authorisations, votes, credentials issued and anonymous votes (every ballot's
signature under its place's key), places with a ballot of questions and their ballot casts (§11.21-§11.22), and
certified results against the recomputed tally; it reports every place's tally and turnout, and for a place with a
ballot each question's count instead of candidate rows (`questions`: ballots, blank, per-option totals, the elected,
passed and quorum_met, the Scottish STV quota and stages, the Schulze order; §11.23, in exact integer arithmetic)
(`--ledger-only` stops after §7). A public copy made during a results embargo
holds withheld events (§3.8, §11.20): their recorded leaf hashes go into the tree, §11.20's rules are
checked instead of re-deciding them, and the report says how many there are (`withheld_events`, and
`withheld` in a place's tally, which then has no rows). With --earlier-copy, COPY_DIR (such a copy, taken
earlier) is verified too and checked against the ledger (§3.8): the same header at every height of the copy,
and each withheld event matching the ledger's event in its place. The second checks a vote
receipt (§12), the third a published signed head against the ledger (§12.1); with --witness, the head must
also carry valid cosignatures (C2SP tlog-cosignature/v1, Ed25519) from K of the witnesses named (--quorum,
default all of them). Each prints one JSON object on stdout. Exit status: 0 verified, 3 integrity failure
(or too few cosignatures), 1 not a ledger or a malformed receipt or head, 2 usage. Needs Python 3.11 (its
`unicodedata` is Unicode 14.0.0, the version §11.4 pins for candidate names), the standard library and
`cryptography` (for Ed25519, and RSA-PSS for anonymous ballots, §11.19).
"""
import argparse
import base64
import bisect
import hashlib
import itertools
import math
import json
import mmap
import os
import re
import sys
import unicodedata

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

HEADER_SIZE, SIGNATURE_SIZE, SEGMENT_HEADER_SIZE, FRAME_HEADER_SIZE = 112, 64, 32, 12
MIN_BLOCK, MAX_BLOCK, MAX_EVENT = 182, 64 << 20, 1 << 20
GENESIS_TYPE, FIRST_APPLICATION_TYPE = 0x0001, 0x0100
WITHHELD_TYPE = 0x0002  # §3.8: a withheld event, in a public copy only


class NotALedger(Exception):
    """§7 "Opening": `PATH: not a ledger: REASON`, PATH the directory or segment 0's file (exit 1)."""

    def __init__(self, reason, path=None):
        super().__init__(reason)
        self.path = path


class Damage(Exception):
    """§6-§7, §11: a failure at block `height`, whose frame is at `offset` in segment `segment` (exit 3).
    `where` is how the message names the place: `block H` (§7) or `block H, event I` (§11.14)."""

    def __init__(self, height, segment, offset, reason, where=None):
        super().__init__(f"{where or f'block {height}'}: {reason}")
        self.height, self.file, self.offset = height, segment_name(segment), offset


class DecodeError(Exception):
    """A structure or event that does not decode (§7, §11.2); the caller adds the location."""


class Violation(Exception):
    """An election event that breaks a rule of §11.7-§11.22, with the rule's reason."""


class MalformedReceipt(Exception):
    """A receipt that does not parse as §12 describes (exit 1)."""


class ReceiptFailure(Exception):
    """A receipt that parses but does not verify (exit 3)."""


# ------------------------------------------------------------------------------------ §1-§2 primitives

def _crc32c_table():
    """The byte-wise table of reflected CRC-32C, polynomial 0x82F63B78 (§2)."""
    table = []
    for n in range(256):
        for _ in range(8):
            n = (n >> 1) ^ 0x82F63B78 if n & 1 else n >> 1
        table.append(n)
    return table


CRC_TABLE = _crc32c_table()


def crc32c(data):
    """CRC-32C of `data`: init and xorout 0xFFFFFFFF, reflected in and out (§2)."""
    crc, table = 0xFFFFFFFF, CRC_TABLE
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def sha256(data):
    """SHA-256 (FIPS 180-4, §2)."""
    return hashlib.sha256(data).digest()


def leaf_hash(event_bytes):
    """RFC 9162 leaf hash `SHA-256(0x00 || e)` of an event's bytes, type || payload (§4)."""
    return sha256(b"\x00" + event_bytes)


def node_hash(left, right):
    """RFC 9162 interior node hash `SHA-256(0x01 || left || right)` (§4)."""
    return sha256(b"\x01" + left + right)


class Frontier:
    """The tree head of §4 kept in constant memory: one perfect-subtree root per set bit of the size."""

    def __init__(self):
        self.size, self.roots = 0, []  # (digest, leaf count), leftmost (largest) first

    def append(self, leaf):
        """Adds one leaf hash, merging equal-sized subtrees (§4)."""
        node, count = leaf, 1
        while self.roots and self.roots[-1][1] == count:
            node, count = node_hash(self.roots.pop()[0], node), count * 2
        self.roots.append((node, count))
        self.size += 1

    def root(self):
        """MTH of the leaves so far, folded from the right (§4); SHA-256("") when empty."""
        if not self.roots:
            return sha256(b"")
        acc = self.roots[-1][0]
        for digest, _ in reversed(self.roots[:-1]):
            acc = node_hash(digest, acc)
        return acc


class Reader:
    """Big-endian fields read one at a time from a byte string, with bounds checks (§1, §7)."""

    def __init__(self, data):
        self.data, self.at = data, 0

    def take(self, count, what):
        """The next `count` bytes; a short read fails as `WHAT: truncated (needs N bytes, has M)` (§7)."""
        if count > self.left():
            raise DecodeError(f"{what}: truncated (needs {count} bytes, has {self.left()})")
        self.at += count
        return self.data[self.at - count:self.at]

    def uint(self, size, what):
        """An unsigned big-endian integer of `size` bytes (§1)."""
        return int.from_bytes(self.take(size, what), "big")

    def left(self):
        """The number of bytes not yet read."""
        return len(self.data) - self.at


def segment_name(number):
    """`segment-NNNNNNNN.vlseg` (§5.2)."""
    return f"segment-{number:08d}.vlseg"


def check_version(version):
    """Refuses any format version but 1 (§9)."""
    if version != 1:
        raise DecodeError(f"unknown format version {version} (this build reads version 1)")


# ------------------------------------------------------------------------------------------ §3 blocks

def decode_block(block):
    """Decodes a block (§3.1, §3.3) into (header fields, the 112 header bytes, signature, [event bytes])."""
    r = Reader(block)
    check_version(r.uint(2, "block header"))
    reserved = r.uint(2, "block header")
    if reserved:
        raise DecodeError(f"block header: reserved field is {reserved}, must be 0")
    header = dict(eventCount=r.uint(4, "block header"), height=r.uint(8, "block header"),
                  timestamp=r.uint(8, "block header"), treeSize=r.uint(8, "block header"),
                  ledgerID=r.take(16, "block header"), previousHash=r.take(32, "block header"),
                  treeRoot=r.take(32, "block header"))
    if header["timestamp"] >> 63:
        raise DecodeError("block header: timestamp out of range")
    signature = r.take(SIGNATURE_SIZE, "block signature")
    if header["eventCount"] == 0:
        raise DecodeError("block holds no events")
    events = []
    for i in range(header["eventCount"]):
        length = r.uint(4, f"event {i} length")
        if not 2 <= length <= MAX_EVENT:
            raise DecodeError(f"event {i}: length {length} outside 2...{MAX_EVENT}")
        events.append(r.take(length, f"event {i}"))
    if r.left():
        raise DecodeError(f"{r.left()} bytes after the last event")
    return header, block[:HEADER_SIZE], signature, events


def event_type(event_bytes):
    """The u16 type that starts an event's bytes (§3.3)."""
    return int.from_bytes(event_bytes[:2], "big")


def withheld_event(event_bytes):
    """A well-formed withheld event (§3.8) as (type, leaf, disclosed); None for any other event."""
    if event_type(event_bytes) != WITHHELD_TYPE or len(event_bytes) < 2 + 34:
        return None
    kind = int.from_bytes(event_bytes[2:4], "big")
    if kind < FIRST_APPLICATION_TYPE:
        return None
    return kind, bytes(event_bytes[4:36]), bytes(event_bytes[36:])


def event_leaf(event_bytes):
    """An event's leaf in the tree (§4): a withheld event's recorded leaf hash (§3.8), else its leaf hash."""
    withheld = withheld_event(event_bytes)
    return withheld[1] if withheld else leaf_hash(event_bytes)


def decode_genesis(event_bytes):
    """Decodes the genesis event (§3.5) into {ledgerID, createdAt, authorityKey, name}."""
    if event_type(event_bytes) != GENESIS_TYPE:
        raise DecodeError(f"first event is type {event_type(event_bytes)}, not the genesis event")
    r = Reader(event_bytes[2:])
    check_version(r.uint(2, "genesis format version"))
    genesis = dict(ledgerID=r.take(16, "genesis ledger id"), createdAt=r.uint(8, "genesis creation time"))
    if genesis["createdAt"] >> 63:
        raise DecodeError("genesis: creation time out of range")
    genesis["authorityKey"] = r.take(32, "genesis authority key")
    length = r.uint(2, "genesis name length")
    name = r.take(length, "genesis name")
    try:
        genesis["name"] = name.decode("utf-8")
    except UnicodeDecodeError:
        length = 0
    if not 1 <= length <= 200:
        raise DecodeError("genesis: name must be 1-200 bytes of UTF-8")
    if r.left():
        raise DecodeError(f"genesis: {r.left()} trailing bytes")
    return genesis


# ------------------------------------------------------------------------------- §5-§6 the segment log

def count_segments(path):
    """§7 opening steps 1-2: the number of segments, numbered 0 … n-1 without gaps (§5.2)."""
    if not os.path.exists(path):
        raise NotALedger("no such directory")
    if not os.path.isdir(path):
        raise NotALedger("it is not a directory")
    numbers = sorted(int(m.group(1)) for name in os.listdir(path)
                     if (m := re.fullmatch(r"segment-([0-9]{8})\.vlseg", name)))
    if not numbers:
        raise NotALedger("no segment files (segment-00000000.vlseg missing)")
    for expected, number in enumerate(numbers):
        if number != expected:
            raise NotALedger(f"{segment_name(expected)} is missing")
    return len(numbers)


def decode_segment_header(data):
    """Decodes the segment header (§5.3), one field at a time, into (number, firstHeight)."""
    r = Reader(data)
    if r.take(8, "segment header") != b"VOTELEDG":
        raise DecodeError("not a ledger segment (bad magic)")
    check_version(r.uint(2, "segment header"))
    if r.uint(2, "segment header"):
        raise DecodeError("segment header: reserved field is not 0")
    number, first_height = r.uint(4, "segment header"), r.uint(8, "segment header")
    if r.uint(8, "segment header"):
        raise DecodeError("segment header: reserved field is not 0")
    return number, first_height


def frame_problem(data, offset):
    """None if a valid frame (§5.4) starts at `offset`, else the §7 reason of the first failing test."""
    if len(data) - offset < FRAME_HEADER_SIZE:
        return "incomplete frame header"
    if data[offset:offset + 4] != b"VLBK":
        return "frame marker missing"
    length = int.from_bytes(data[offset + 4:offset + 8], "big")
    if not MIN_BLOCK <= length <= MAX_BLOCK:
        return f"frame length {length} out of range"
    start = offset + FRAME_HEADER_SIZE
    if start + length > len(data):
        return "frame runs past the end of the file"
    if crc32c(data[start:start + length]) != int.from_bytes(data[offset + 8:start], "big"):
        return "frame checksum mismatch"
    return None


def damage_evidence_after(data, offset, height, authority):
    """Whether a frame after `offset` proves the invalid frame there is damage, not a torn tail (§6 step 3):
    a valid frame at some p, offset < p <= size - 12, whose block decodes, carries this ledger's id, has a
    height above `height` and a signature that verifies under the genesis key. Before the genesis block is
    read (`authority` None) any valid frame counts."""
    p = data.find(b"VLBK", offset + 1)
    while 0 <= p <= len(data) - FRAME_HEADER_SIZE:
        if frame_problem(data, p) is None:
            if authority is None:
                return True
            length = int.from_bytes(data[p + 4:p + 8], "big")
            try:
                header, header_bytes, signature, _ = decode_block(data[p + FRAME_HEADER_SIZE:p + FRAME_HEADER_SIZE + length])
                if header["ledgerID"] == authority[0] and header["height"] > height:
                    authority[1].verify(signature, sha256(header_bytes))
                    return True
            except (DecodeError, InvalidSignature):
                pass
        p = data.find(b"VLBK", p + 1)
    return False


class Log:
    """The segments read in order (§6). `blocks()` yields (segment, offset, block bytes) per valid frame.

    The caller counts verified blocks in `next_height` (it names damage and is each segment's expected
    `firstHeight`). After the scan, `torn_tail` is the size of a torn tail and `bytes` the size of all the
    rest: 32 per segment header read plus every complete frame.
    """

    def __init__(self, path):
        self.path, self.count = path, count_segments(path)
        self.next_height, self.torn_tail, self.bytes = 0, 0, 0
        self.authority = None  # (ledger id, key) once the genesis block is read: what §6 damage evidence needs

    def blocks(self):
        """§6 steps 1-3 over every segment; raises NotALedger for segment 0's header, else Damage."""
        for number in range(self.count):
            last = number == self.count - 1
            with open(os.path.join(self.path, segment_name(number)), "rb") as file:
                size = os.fstat(file.fileno()).st_size
                if size < SEGMENT_HEADER_SIZE and last and number > 0:
                    self.torn_tail = size  # a torn segment creation
                    return
                data = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
            try:
                yield from self._frames(number, data, last)
            finally:
                if size:
                    data.close()
            if self.torn_tail:
                return

    def _frames(self, number, data, last):
        """Checks one segment's header (§6 step 2) and yields its frames until a torn tail (step 3)."""
        try:
            header_number, first_height = decode_segment_header(data)
        except DecodeError as error:
            if number == 0:
                raise NotALedger(str(error), os.path.join(self.path, segment_name(0))) from None
            reason = str(error) if str(error).startswith("segment header") else f"segment header: {error}"
            raise Damage(self.next_height, number, 0, reason) from None
        if header_number != number:
            raise Damage(self.next_height, number, 0, f"segment header names segment {header_number}")
        if first_height != self.next_height:
            raise Damage(self.next_height, number, 0, f"segment header says it starts at block {first_height}")
        self.bytes += SEGMENT_HEADER_SIZE
        offset = SEGMENT_HEADER_SIZE
        while offset < len(data):
            problem = frame_problem(data, offset)
            if problem is not None:
                if last and not damage_evidence_after(data, offset, self.next_height, self.authority):
                    self.torn_tail = len(data) - offset
                    return
                raise Damage(self.next_height, number, offset, problem)
            end = offset + FRAME_HEADER_SIZE + int.from_bytes(data[offset + 4:offset + 8], "big")
            yield number, offset, data[offset + FRAME_HEADER_SIZE:end]
            self.bytes += end - offset
            offset = end


# --------------------------------------------------------------------------------- §7 the verification

def verify_ledger(path, election=None, on_block=None):
    """Verifies the ledger at `path` in one streaming pass (§7), stopping at the first failure.

    Once a block passes the checks of §7, its events go to `election.apply` (§11) and the block to
    `on_block(header, header_hash, events)`. Returns the summary of §7 (a dict) and the authority key.
    """
    log = Log(path)
    frontier, genesis, key, previous = Frontier(), None, None, None
    blocks = log.blocks()
    first = next(blocks, None)
    if first is None or first[:2] != (0, SEGMENT_HEADER_SIZE):
        raise NotALedger("the first segment holds no complete genesis block")
    for segment, offset, block in itertools.chain([first], blocks):
        height = log.next_height

        def fail(reason):
            return Damage(height, segment, offset, reason)

        try:
            header, header_bytes, signature, events = decode_block(block)
            if height == 0:  # §7 opening steps 5-6
                if header["height"] != 0 or len(events) != 1:
                    raise DecodeError("the first block is not a genesis block")
                genesis = decode_genesis(events[0])
        except DecodeError as error:
            raise (NotALedger(str(error)) if height == 0 else fail(str(error))) from None
        if height == 0:
            try:
                key = Ed25519PublicKey.from_public_bytes(genesis["authorityKey"])
            except ValueError:
                raise fail("genesis authority key is invalid") from None
            log.authority = (genesis["ledgerID"], key)
        if header["height"] != height:
            raise fail(f"height is {header['height']}, expected {height}")
        if header["ledgerID"] != genesis["ledgerID"]:
            raise fail(f"belongs to another ledger (id {header['ledgerID'].hex()})")
        types = [event_type(e) for e in events]
        if height == 0:
            if types != [GENESIS_TYPE] or header["timestamp"] != genesis["createdAt"] or any(header["previousHash"]):
                raise fail("malformed genesis block")
        else:
            if header["previousHash"] != previous["hash"]:
                raise fail("previous header hash mismatch")
            if header["timestamp"] < previous["timestamp"]:
                raise fail(f"timestamp {header['timestamp']} is before the previous block's {previous['timestamp']}")
            reserved = [t for t, e in zip(types, events) if t < FIRST_APPLICATION_TYPE and not withheld_event(e)]
            if reserved:
                raise fail(f"event type {reserved[0]} is reserved for the ledger")
        first_index = frontier.size
        if header["treeSize"] != first_index + len(events):
            raise fail(f"tree size is {header['treeSize']}, expected {first_index + len(events)}")
        for event in events:
            frontier.append(event_leaf(event))
        if frontier.root() != header["treeRoot"]:
            raise fail("tree root mismatch")
        header_hash = sha256(header_bytes)
        try:
            key.verify(signature, header_hash)
        except InvalidSignature:
            raise fail("signature invalid") from None
        if election is not None and height > 0:  # §11.2: decode every event, then §11.6: re-decide each
            try:
                election.check_withheld_places(header["timestamp"])  # 11.20.5
            except Violation as error:
                raise fail(str(error)) from None
            decoded = []
            for i, event in enumerate(events):
                withheld = withheld_event(event)
                if withheld:
                    decoded.append((WITHHELD_TYPE, withheld))
                    continue
                try:
                    decoded.append(election.decode(event))
                except DecodeError as error:
                    raise Damage(height, segment, offset, str(error), f"block {height}, event {i}") from None
            for i, (kind, fields) in enumerate(decoded):
                if kind == WITHHELD_TYPE:  # §11.20: checked, not re-decided
                    try:
                        election.admit_withheld(fields, header["timestamp"])
                    except Violation as error:
                        raise Damage(height, segment, offset, f"withheld event: {error}",
                                     f"block {height}, event {i}") from None
                    continue
                try:
                    election.apply(kind, fields, first_index + i, header["timestamp"],
                                   block_events=len(events), created_at=genesis["createdAt"])
                except Violation as error:
                    where = f"block {height}, event {i} breaks the rules"
                    raise Damage(height, segment, offset, str(error), where) from None
        if on_block:
            on_block(header, header_hash, events)
        previous = dict(hash=header_hash, timestamp=header["timestamp"])
        log.next_height += 1
    return dict(ok=True, ledger_id=genesis["ledgerID"].hex(), blocks=log.next_height, events=frontier.size,
                bytes=log.bytes, height=log.next_height - 1, head_hash=previous["hash"].hex(),
                tree_root=frontier.root().hex(), torn_tail_bytes=log.torn_tail), genesis["authorityKey"]


# --------------------------------------------------------------------------------- §11 election events

PLACE_RESULTS_AFTER_CLOSE = 1  # §11.1: place-created flag bit 0, the results embargo
PLACE_ANONYMOUS_BALLOT = 2  # §11.1: place-created flag bit 1, anonymous ballots; a `ballotKey bytes` follows
PLACE_QUESTIONS = 4  # §11.1: place-created flag bit 2, a ballot of questions (§11.21); a `ballot` follows
PLACE_REVOTING = 8  # §11.1: place-created flag bit 3, re-voting (§11.24)
PLACE_BATCHES = 16  # §11.1: place-created flag bit 4, ballot batches (§11.31); `batchInterval i64, batchSize u32` follow
CHOOSE, YES_NO, RANK = 1, 2, 3  # §11.21: a question's method
STV, SCHULZE = 1, 2  # §11.21: a ranked question's rule
BLANK = 0xFFFF  # §11.22: the `n` of a blank answer

ELECTION_EVENTS = {  # §11: type -> (name, fields); u4 and u8 unsigned, i8 a time, s a str, d a digest, b bytes
    0x0101: ("place created", "u4 s s i8 i8 i8 i8 u4"),
    0x0102: ("candidate registered", "u4 u4 s s"),
    0x0103: ("candidate withdrawn", "u4 u4"),
    0x0104: ("voter authorised", "u4 d d"),
    0x0105: ("vote cast", "u4 u4 d"),
    0x0106: ("results certified", "u4 u8 u8 u8 u4"),  # then `count` x (candidate u4, votes u8)
    0x0107: ("voter secret commitment", "d"),
    0x0108: ("voter token reissued", "u4 d d d"),
    0x0109: ("credential issued", "u4 d d"),
    0x010A: ("anonymous vote cast", "u4 u4 b b"),
    0x010B: ("ballot cast", "u4 d"),  # then `answers` (§11.22)
    0x010C: ("ballot replaced", "u4 d"),  # then `answers` (§11.24)
    0x010D: ("voter authorised with a weight", "u4 d d u8"),  # §11.25
    0x010E: ("ballot results certified", "u4 u8 u8 u8 u8 u8 u1"),  # then `count` x `result` (§11.26)
    0x010F: ("anonymous ballot cast", "u4 b b"),  # then `answers` (§11.27)
    0x0110: ("place amended", "u4 s s i8 i8"),  # §11.28
    0x0111: ("voter withdrawn", "u4 d d u8"),  # §11.29
    0x0112: ("place cancelled", "u4 s"),  # §11.30
}
MAX_WEIGHT = 1_000_000  # 11.25.1
MAX_PLACE_WEIGHT = 10_000_000_000_000  # 11.25.3


def read_str(r, name):
    """A `str` field (§11.1): its u32 length, its bytes, then the UTF-8 check of 11.2.3."""
    try:
        return r.take(r.uint(4, name), name).decode("utf-8")
    except UnicodeDecodeError:
        raise DecodeError(f"{name}: invalid UTF-8") from None


def decode_ballot(r, name):
    """§11.21: a place's `ballot`, read field by field; each of 11.2.7-11.2.12 is checked as its field is read."""
    version = r.uint(1, name)
    if version != 1:  # 11.2.7
        raise DecodeError(f"{name}: ballot version {version} is not 1")
    questions = []
    for number in range(1, r.uint(1, name) + 1):
        q = dict(title=read_str(r, name), description=read_str(r, name), flags=r.uint(1, name))
        if q["flags"] & ~1:  # 11.2.8
            raise DecodeError(f"{name}: question {number} has unknown flags {q['flags']}")
        q["method"] = r.uint(1, name)
        if q["method"] not in (CHOOSE, YES_NO, RANK):  # 11.2.9
            raise DecodeError(f"{name}: question {number} has unknown method {q['method']}")
        if q["method"] == CHOOSE:
            q.update(min=r.uint(2, name), max=r.uint(2, name), seats=r.uint(2, name))
        elif q["method"] == YES_NO:
            q["threshold"] = r.uint(1, name)
            if not 1 <= q["threshold"] <= 4:  # 11.2.10
                raise DecodeError(f"{name}: question {number} has unknown threshold {q['threshold']}")
            q["fraction"] = (r.uint(8, name), r.uint(8, name)) if q["threshold"] in (2, 3) else None
            has_quorum = r.uint(1, name)
            if has_quorum not in (0, 1):  # 11.2.11
                raise DecodeError(f"{name}: question {number} has unknown quorum flag {has_quorum}")
            q["quorum"] = (r.uint(8, name), r.uint(8, name)) if has_quorum else None
        else:
            q.update(seats=r.uint(2, name), rule=r.uint(1, name))
            if q["rule"] not in (STV, SCHULZE):  # 11.2.12
                raise DecodeError(f"{name}: question {number} has unknown rule {q['rule']}")
        q["options"] = [read_str(r, name) for _ in range(r.uint(2, name))]
        questions.append(q)
    return questions


def decode_answers(r, name):
    """§11.22: `answers`, one per question, each a list of option indexes or None (blank); and its bytes."""
    start, answers = r.at, []
    for _ in range(r.uint(1, name)):
        n = r.uint(2, name)
        answers.append(None if n == BLANK else [r.uint(2, name) for _ in range(n)])
    return answers, bytes(r.data[start:r.at])


def decode_election_event(event_bytes):
    """Decodes an election event (§11) into (type, [fields]); any other type is refused."""
    kind = event_type(event_bytes)
    if kind not in ELECTION_EVENTS:
        raise DecodeError(f"unknown election event type {kind}")
    name, layout = ELECTION_EVENTS[kind]
    r, fields = Reader(event_bytes[2:]), []
    for field in layout.split():
        if field == "s":
            fields.append(read_str(r, name))
        elif field == "d":
            fields.append(r.take(32, name))
        elif field == "b":
            fields.append(r.take(r.uint(4, name), name))
        else:
            fields.append(int.from_bytes(r.take(int(field[1]), name), "big", signed=field[0] == "i"))
    if kind == 0x0101:  # §11.1: `flags u32` only when not 0, bits 0-4 only; bit 1 brings `ballotKey bytes`,
        flags, ballot_key, ballot, batches = 0, None, None, None  # bit 2 a `ballot` (§11.21) after it, bit 4
        if r.left():  # `batchInterval i64, batchSize u32` after those
            flags = r.uint(4, name)
            if flags == 0:  # 11.2.5
                raise DecodeError(f"{name}: flags must be left out when 0")
            if flags & ~(PLACE_RESULTS_AFTER_CLOSE | PLACE_ANONYMOUS_BALLOT | PLACE_QUESTIONS | PLACE_REVOTING
                         | PLACE_BATCHES):  # 11.2.6
                raise DecodeError(f"{name}: unknown flags {flags}")
            if flags & PLACE_ANONYMOUS_BALLOT:
                ballot_key = r.take(r.uint(4, name), name)
            if flags & PLACE_QUESTIONS:
                ballot = decode_ballot(r, name)
            if flags & PLACE_BATCHES:  # (interval ms, size), 0 for a part not set
                batches = (int.from_bytes(r.take(8, name), "big", signed=True), r.uint(4, name))
        fields += [flags, ballot_key, ballot, batches]
    if kind in (0x010B, 0x010C, 0x010F):
        fields += decode_answers(r, name)
    if kind == 0x010E:  # §11.26: each result field by field; 11.2.14 as its outcome is read
        results = []
        for _ in range(fields[-1]):
            totals = [(r.uint(8, name), r.uint(8, name)) for _ in range(2)]
            options = [(r.uint(8, name), r.uint(8, name)) for _ in range(r.uint(2, name))]
            outcome = r.uint(1, name)
            if outcome > 2:
                raise DecodeError(f"{name}: unknown outcome {outcome}")
            results.append((totals[0], totals[1], options, outcome, [r.uint(2, name) for _ in range(r.uint(2, name))]))
        fields.append(results)
    if kind == 0x010D and fields[3] == 1:  # 11.2.13
        raise DecodeError(f"{name}: a weight of 1")
    if kind == 0x0106:
        if fields[-1] * 12 > r.left():
            raise DecodeError(f"{name}: truncated (needs {fields[-1] * 12} bytes, has {r.left()})")
        fields.append([(r.uint(4, name), r.uint(8, name)) for _ in range(fields[-1])])
    if r.left():
        raise DecodeError(f"{name}: {r.left()} trailing bytes")
    return kind, fields


# §11.7.8: the odd primes below 752; a ballot key's modulus has none of them (nor 2) as a factor.
SMALL_PRIMES = [p for p in range(3, 752) if all(p % q for q in range(2, int(p**0.5) + 1))]


def integer_root(n, c):
    """⌊n^(1/c)⌋ by Newton's method on integers, x <- ((c - 1)x + ⌊n / x^(c-1)⌋) / c: one step from any positive x
    lands at or above the root, and the steps then decrease until they stop. The first x (from log2 n) only
    makes it fast."""
    f = math.log2(n) / c
    whole = int(f)
    x = int(2 ** (f - whole) * 2**40) + 1
    x = x << (whole - 40) if whole >= 40 else (x >> (40 - whole)) + 1

    def step(x):
        return ((c - 1) * x + n // x ** (c - 1)) // c

    x = step(x)
    while (y := step(x)) < x:
        x = y
    return x


def valid_rsa_public_key(n, e):
    """§11.7.8's partial public-key validation (after NIST SP 800-56B Rev. 2 §6.4.2.2): n of 3072 to 4096 bits,
    odd, with no prime factor below 752, not a strong probable prime to base 2, not a perfect power; e odd with
    2^16 < e < 2^256."""
    if not (3072 <= n.bit_length() <= 4096 and n % 2 == 1 and e % 2 == 1 and 2**16 < e < 2**256):
        return False
    if any(n % p == 0 for p in SMALL_PRIMES):
        return False
    d, s = n - 1, 0
    while d % 2 == 0:
        d, s = d // 2, s + 1
    x = pow(2, d, n)
    if x in (1, n - 1):
        return False
    for _ in range(s - 1):
        x = x * x % n
        if x == n - 1:
            return False
    # n = b^c needs b > 751 > 2^9, so c < bits / 9; a perfect power is a prime power of its root.
    return not any(integer_root(n, c) ** c == n for c in [2] + SMALL_PRIMES if c <= n.bit_length() // 9)


def ballot_key(der):
    """The place's RSA public key from its `ballotKey` (§11.7.8): a DER SubjectPublicKeyInfo of an RSA key with
    e = 65537 that passes partial public-key validation, in its one DER encoding; None for anything else."""
    try:
        key = serialization.load_der_public_key(der)
    except (ValueError, TypeError):
        return None
    if not isinstance(key, rsa.RSAPublicKey) or key.public_numbers().e != 65537:
        return None
    if not valid_rsa_public_key(key.public_numbers().n, key.public_numbers().e):
        return None
    spki = key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return key if spki == der else None


# §11.19: RSASSA-PSS with SHA-384, MGF1-SHA-384 and a 48-byte salt (RFC 9474 RSABSSA-SHA384-PSS-Randomized).
BALLOT_PSS = padding.PSS(mgf=padding.MGF1(hashes.SHA384()), salt_length=48)


def ballot_signature_verifies(key, credential, signature):
    """Whether `signature` is the place key's RSA-PSS signature of the 64-byte `credential` (11.19.4)."""
    if len(credential) != 64:
        return False
    try:
        key.verify(signature, credential, BALLOT_PSS, hashes.SHA384())
        return True
    except InvalidSignature:
        return False


class Election:
    """The state of §11.5 and the rules of §11.6-§11.12, §11.16-§11.19 and §11.22, re-decided for every event at its
    block's time.

    `decode(event_bytes)` is §11.2; `apply(kind, fields, index, t, block_events, created_at)` re-decides one
    decoded event at leaf `index` and block time `t` (§11.6), in a block of `block_events` events of a ledger
    created at `created_at` (§11.16), raising Violation with the rule's reason, then applies it.
    """

    def __init__(self):
        self.places = []
        self.withheld = {}  # §11.20: place number -> withheld events

    decode = staticmethod(decode_election_event)

    def admit_withheld(self, withheld, t):
        """§11.20: rules 11.20.1-11.20.4 for a withheld event at block time t; it is counted, not applied."""
        kind, _, disclosed = withheld
        if len(disclosed) != 4:  # 11.20.1
            raise Violation(f"it must disclose its place (4 bytes), not {len(disclosed)} bytes")
        if kind not in ELECTION_EVENTS:  # 11.20.2
            raise Violation(f"unknown election event type {kind}")
        number = int.from_bytes(disclosed, "big")
        if not 1 <= number <= len(self.places):  # 11.20.3
            raise Violation(f"place {number} does not exist")
        place = self.places[number - 1]
        kinds = {0x010A, 0x010F} if place["key"] else {0x0104, 0x0105, 0x0108, 0x010B, 0x010C, 0x010D}
        if not (place["flags"] & PLACE_RESULTS_AFTER_CLOSE and t < place["voting"][1] and kind in kinds):  # 11.20.4
            raise Violation(f"the embargo of place {number} does not withhold a {ELECTION_EVENTS[kind][0]} event "
                            "at this block's time")
        self.withheld[number] = self.withheld.get(number, 0) + 1

    def check_withheld_places(self, t):
        """§11.20.5: no block at or after the end of voting in a place with withheld events."""
        for number in sorted(self.withheld):
            if t >= self.places[number - 1]["voting"][1]:
                raise Violation(f"voting in place {number} has ended, yet {self.withheld[number]} of its events "
                                "are withheld")

    def apply(self, kind, fields, index, t, block_events, created_at):
        """§11.6 steps 1-4 for one event."""
        if kind == 0x0101:
            self._create_place(fields, t)
            return
        if kind == 0x0107:  # 11.16.1: the first election event (leaf 1), alone in block 1; 11.16.2; no state
            if index != 1 or block_events != 1:
                raise Violation("a voter secret commitment may only be the first election event, alone in block 1")
            if t != created_at:
                raise Violation("a voter secret commitment must have the ledger's creation time as its block time")
            return
        number = fields[0]
        if not 1 <= number <= len(self.places):  # 11.8.1, 11.9.1, 11.10.1, 11.11.1, 11.12.1, 11.17.1
            raise Violation(f"place {number} does not exist")
        place = self.places[number - 1]
        if place["cancelled"] and kind != 0x0112:  # 11.30.5, right after the rule that the place exists
            raise Violation(f"place {number} is cancelled")
        {0x0102: self._register, 0x0103: self._withdraw, 0x0104: self._authorise, 0x0105: self._vote,
         0x0106: self._certify, 0x0108: self._reissue, 0x0109: self._issue,
         0x010A: self._vote_anonymously, 0x010B: self._cast_ballot,
         0x010C: self._replace_ballot, 0x010D: self._authorise,
         0x010E: self._certify_ballot, 0x010F: self._cast_anonymous_ballot,
         0x0110: self._amend, 0x0111: self._withdraw_voter, 0x0112: self._cancel}[kind](place, number, fields, index, t)

    def _create_place(self, fields, t):
        """§11.7: rules 11.7.1-11.7.17, then the derived event (11.6.3)."""
        recorded_id, name, description, rs, re_, vs, ve, limit, flags, ballot_der, ballot, batches = fields
        trimmed = check_name(name, "place name")  # 11.7.1
        check_text(description, "description")  # 11.7.2
        if min(rs, re_, vs, ve) < 0:  # 11.7.3
            raise Violation("invalid windows: times must not be before 1970")
        if rs >= re_:  # 11.7.4
            raise Violation("invalid windows: registration must start before it ends")
        if re_ > vs:  # 11.7.5
            raise Violation("invalid windows: registration must end no later than voting starts")
        if vs >= ve:  # 11.7.6
            raise Violation("invalid windows: voting must start before it ends")
        if vs <= t:  # 11.7.7
            raise Violation("the voting window must start in the future")
        key = None if ballot_der is None else ballot_key(ballot_der)
        if ballot_der is not None and key is None:  # 11.7.8
            raise Violation("the ballot key is not an RSA public key of 3072 to 4096 bits")
        untrimmed = False
        if ballot is not None:
            untrimmed = check_ballot_texts(ballot)  # 11.7.9
            problem = ballot_shape_problem(ballot)
            if problem:  # 11.7.10
                raise Violation("the ballot " + problem)
        if flags & PLACE_ANONYMOUS_BALLOT and flags & PLACE_REVOTING:  # 11.7.11
            raise Violation("an anonymous place cannot allow re-voting: a credential casts one ballot")
        if ballot is not None:
            if limit:  # 11.7.12
                raise Violation("maximum number of candidates is for a place with candidates, not questions")
        if flags & PLACE_REVOTING and ballot is None:  # 11.7.13
            raise Violation("re-voting is for a place with a ballot of questions")
        if batches is not None:  # §11.31
            interval, size = batches
            if not flags & PLACE_ANONYMOUS_BALLOT:  # 11.7.14
                raise Violation("ballot batches: are for a place with anonymous ballots")
            if interval == 0 and size == 0:  # 11.7.15
                raise Violation("ballot batches: need an interval, a size or both")
            if interval != 0 and not (1_000 <= interval <= 604_800_000 and interval % 1_000 == 0):  # 11.7.16
                raise Violation("ballot batches: the interval must be whole seconds, 1 second to 7 days")
            if size != 0 and not 2 <= size <= 1_000_000:  # 11.7.17
                raise Violation("ballot batches: the size must be 2 to 1000000 ballots")
        # 11.6.3: the id, the trimmed name, and the ballot's trimmed titles and options are derived
        if recorded_id != len(self.places) + 1 or trimmed != name or untrimmed:
            raise Violation(DIFFERS)
        self.places.append(dict(name=name, description=description, amendments=0, registration=(rs, re_), voting=(vs, ve), limit=limit, flags=flags,
                                candidates=[], tags={}, tokens={}, replaced=set(), withdrawn_tags=set(), withdrawn=0, cancelled=False, authorized=0, voted=0, weight=0, weights={},
                                certified=False, key=key, issued=0, credentials=set(), ballot=ballot, answers=[],
                                answered={}, batches=batches))

    def _amend(self, place, number, fields, index, t):
        """§11.28: rules 11.28.2-11.28.9, then the derived event (11.6.3)."""
        _, name, description, vs, ve = fields
        refused = f"place {number} cannot be amended: "
        (old_vs, old_ve), (_, re_) = place["voting"], place["registration"]
        if t >= old_ve:  # 11.28.2
            raise Violation(refused + "its voting has ended, and its results stand as voted")
        trimmed = check_name(name, "place name")  # 11.28.3
        check_text(description, "description")
        if vs < 0 or vs >= ve:  # 11.28.4
            raise Violation(refused + "voting must start before it ends")
        if t >= old_vs:
            if vs != old_vs:  # 11.28.5
                raise Violation(refused + "voting has started, so its start stays")
            if ve < old_ve:  # 11.28.6
                raise Violation(refused + "voting has started, so it may be extended but not shortened")
        else:
            if vs <= t:  # 11.28.7
                raise Violation(refused + "voting must start in the future")
            if vs < re_:  # 11.28.8
                raise Violation(refused + "voting must start no earlier than registration ends")
        if (trimmed, description, (vs, ve)) == (place["name"], place["description"], place["voting"]):  # 11.28.9
            raise Violation(refused + "the amendment changes nothing")
        if trimmed != name:  # 11.6.3
            raise Violation(DIFFERS)
        place.update(name=name, description=description, voting=(vs, ve), amendments=place["amendments"] + 1)

    def _register(self, place, number, fields, index, t):
        """§11.8: rules 11.8.2-11.8.6, then the derived event (11.6.3)."""
        _, recorded_id, name, pledge = fields
        if place["ballot"] is not None:  # 11.8.1a
            raise Violation(f"place {number} asks questions: it has no candidates; cast answers to its ballot")
        status = place_status(place, t)
        if status != "registration":  # 11.8.2
            raise Violation(f"candidate registration for place {number} is not open (the place is {status})")
        trimmed = check_name(name, "candidate name")  # 11.8.3
        check_text(pledge, "pledge")  # 11.8.4
        key = name_key(trimmed)
        if any(c["key"] == key for c in place["candidates"]):  # 11.8.5
            raise Violation(f'a candidate named "{trimmed}" is already registered')
        if place["limit"] and len(place["candidates"]) >= place["limit"]:  # 11.8.6
            raise Violation(f"the place already has its maximum of {place['limit']} candidates")
        if recorded_id != len(place["candidates"]) + 1 or trimmed != name:  # 11.6.3
            raise Violation(DIFFERS)
        place["candidates"].append(dict(name=name, key=key, votes=0, withdrawn=False))

    def _withdraw(self, place, number, fields, index, t):
        """§11.9: rules 11.9.2-11.9.4."""
        candidate = existing_candidate(place, number, fields[1])  # 11.9.2
        if t >= place["voting"][0]:  # 11.9.3
            raise Violation(f"candidates of place {number} can no longer withdraw: voting has opened")
        if candidate["withdrawn"]:  # 11.9.4
            raise Violation(f"candidate {fields[1]} has already withdrawn")
        candidate["withdrawn"] = True

    def _authorise(self, place, number, fields, index, t):
        """§11.10: rules 11.10.2-11.10.4, and §11.25 for a weight; tags (each with its current token) and tokens are
        separate, per place."""
        tag, token, weight = fields[1], fields[2], fields[3] if len(fields) > 3 else 1
        if t >= place["voting"][1]:  # 11.10.2
            raise Violation(f"voting in place {number} has closed; no more voters can be authorised")
        if weight != 1:
            if not 1 <= weight <= MAX_WEIGHT:  # 11.25.1
                raise Violation(f"a weight must be a whole number from 1 to {MAX_WEIGHT}")
            if place["ballot"] is None:  # 11.25.2
                raise Violation("only a place that asks questions takes weighted voters")
            if place["key"]:  # 11.25.2a
                raise Violation("an anonymous place takes no weights: each voter casts one credential")
        if place["weight"] + weight > MAX_PLACE_WEIGHT:  # 11.10.2a, 11.25.3
            raise Violation(f"the place's voters would weigh more than {MAX_PLACE_WEIGHT} in all")
        if tag in place["tags"]:  # 11.10.3
            raise Violation("voter already authorised")
        if token in place["tokens"] or token in place["replaced"]:  # 11.10.4
            raise Violation("this token is already issued")
        place["tags"][tag] = token
        place["tokens"][token] = False  # authorised, not yet voted
        place["authorized"] += 1
        place["weight"] += weight
        if weight != 1:
            place["weights"][token] = weight

    def _reissue(self, place, number, fields, index, t):
        """§11.17: rules 11.17.2-11.17.6; the old token leaves the authorised tokens for good."""
        _, tag, old, new = fields
        if t >= place["voting"][1]:  # 11.17.2
            raise Violation(f"voting in place {number} has closed; no more tokens can be issued")
        if tag not in place["tags"] or tag in place["withdrawn_tags"]:  # 11.17.3 (§11.29: a withdrawn voter too)
            raise Violation(f"voter not authorised in place {number}")
        if place["tags"][tag] != old:  # 11.17.4
            raise Violation("the replaced token is not the voter's current token")
        if place["tokens"][old]:  # 11.17.5: in an anonymous place, a credential was issued for the code
            raise Violation(ALREADY_ISSUED if place["key"] else "this voter has already voted")
        if new in place["tokens"] or new in place["replaced"]:  # 11.17.6
            raise Violation("this token is already issued")
        del place["tokens"][old]
        place["replaced"].add(old)
        place["tags"][tag] = new
        place["tokens"][new] = False
        if old in place["weights"]:  # §11.25: the new token keeps the voter's weight
            place["weights"][new] = place["weights"].pop(old)

    def _cancel(self, place, number, fields, index, t):
        """§11.30: rules 11.30.2-11.30.4, then the derived (trimmed) reason (11.6.3)."""
        reason = fields[1]
        refused = f"place {number} cannot be cancelled: "
        if place["cancelled"]:  # 11.30.2
            raise Violation(refused + "it is already cancelled")
        if t >= place["voting"][0]:  # 11.30.3
            raise Violation(refused + "its voting has opened")
        trimmed = trim(reason)  # 11.30.4
        check_text(trimmed, "cancellation reason")
        if len(trimmed.encode()) > 500:
            raise Violation("cancellation reason must be at most 500 bytes")
        if trimmed != reason:  # 11.6.3
            raise Violation(DIFFERS)
        place["cancelled"] = True

    def _withdraw_voter(self, place, number, fields, index, t):
        """§11.29: rules 11.29.2-11.29.6, then the derived weight (11.6.3); the token leaves the authorised ones for
        good, the tag stays (never authorised again) and the voter leaves the electorate."""
        _, tag, token, weight = fields
        refused = f"the voter cannot be withdrawn from place {number}: "
        if t >= place["voting"][1]:  # 11.29.2
            raise Violation(refused + "its voting has ended")
        if tag not in place["tags"]:  # 11.29.3
            raise Violation(refused + "the voter is not authorised there")
        if tag in place["withdrawn_tags"]:  # 11.29.4
            raise Violation(refused + "the voter is already withdrawn")
        if place["tags"][tag] != token:  # 11.29.5
            raise Violation(refused + "the token is not the voter's current token")
        if place["tokens"][token]:  # 11.29.6
            raise Violation(refused + ("a ballot credential was already issued for the voter's code, and a credential "
                                       "cannot be taken back" if place["key"] else "the voter has voted"))
        if weight != place["weights"].get(token, 1):  # 11.6.3: the weight is the voter's
            raise Violation(DIFFERS)
        del place["tokens"][token]
        place["replaced"].add(token)
        place["weights"].pop(token, None)
        place["withdrawn_tags"].add(tag)
        place["authorized"] -= 1
        place["weight"] -= weight
        place["withdrawn"] += 1

    def _vote(self, place, number, fields, index, t):
        """§11.11: rules 11.11.1a-11.11.6."""
        _, candidate_id, token = fields
        if place["key"]:  # 11.11.1a
            raise Violation(f"place {number} takes only anonymous ballots")
        if place["ballot"] is not None:  # 11.11.1b
            raise Violation(f"place {number} asks questions: it has no candidates; cast answers to its ballot")
        status = place_status(place, t)
        if status != "voting":  # 11.11.2
            raise Violation(f"voting in place {number} is not open (the place is {status})")
        voted = place["tokens"].get(token)
        if voted is None:  # 11.11.3 (never issued, or replaced by a re-issue)
            raise Violation(f"this token is not authorised to vote in place {number}")
        if voted:  # 11.11.4
            raise Violation("this token has already voted")
        candidate = existing_candidate(place, number, candidate_id)  # 11.11.5
        if candidate["withdrawn"]:  # 11.11.6
            raise Violation(f"candidate {candidate_id} has withdrawn")
        place["tokens"][token] = True
        candidate["votes"] += 1
        place["voted"] += 1

    def _issue(self, place, number, fields, index, t):
        """§11.18: rules 11.18.2-11.18.5; the issuance code counts as used from then on."""
        _, code, _ = fields
        if not place["key"]:  # 11.18.2
            raise Violation(f"place {number} does not use anonymous ballots")
        if t >= place["voting"][1]:  # 11.18.3
            raise Violation(f"voting in place {number} has closed; no more credentials can be issued")
        used = place["tokens"].get(code)
        if used is None:  # 11.18.4 (never authorised, or replaced by a re-issue)
            raise Violation(f"this issuance code is not authorised in place {number}")
        if used:  # 11.18.5
            raise Violation(ALREADY_ISSUED)
        place["tokens"][code] = True
        place["issued"] += 1

    @staticmethod
    def _credential_rules(place, number, credential, signature, t):
        """§11.19: rules 11.19.2-11.19.6, which an anonymous ballot of answers (§11.27) shares."""
        if not place["key"]:  # 11.19.2
            raise Violation(f"place {number} does not use anonymous ballots")
        status = place_status(place, t)
        if status != "voting":  # 11.19.3
            raise Violation(f"voting in place {number} is not open (the place is {status})")
        if not ballot_signature_verifies(place["key"], credential, signature):  # 11.19.4
            raise Violation(f"the ballot's signature does not verify under place {number}'s key")
        if credential in place["credentials"]:  # 11.19.5
            raise Violation("this credential has already voted")
        if place["voted"] >= place["issued"]:  # 11.19.6
            raise Violation(f"place {number} has no more credentials issued than votes cast")

    def _vote_anonymously(self, place, number, fields, index, t):
        """§11.19: rules 11.19.2-11.19.8; the signature is checked under the place's ballot key."""
        _, candidate_id, credential, signature = fields
        self._credential_rules(place, number, credential, signature, t)
        if place["ballot"] is not None:  # 11.19.6a
            raise Violation(f"place {number} asks questions: it has no candidates; cast answers to its ballot")
        candidate = existing_candidate(place, number, candidate_id)  # 11.19.7
        if candidate["withdrawn"]:  # 11.19.8
            raise Violation(f"candidate {candidate_id} has withdrawn")
        place["credentials"].add(credential)
        candidate["votes"] += 1
        place["voted"] += 1

    def _cast_anonymous_ballot(self, place, number, fields, index, t):
        """§11.27: rules 11.19.2-11.19.6 for the credential, then 11.27.1-11.27.3 for the answers (weight 1)."""
        _, credential, signature, answers, encoded = fields
        self._credential_rules(place, number, credential, signature, t)
        if place["ballot"] is None:  # 11.27.1
            raise Violation(f"place {number} has candidates, not questions: cast a candidate")
        self._answer_rules(place["ballot"], answers)  # 11.27.2, 11.27.3
        place["credentials"].add(credential)
        place["voted"] += 1
        place["answers"].append((answers, encoded, 1))

    def _cast_ballot(self, place, number, fields, index, t):
        """§11.22: rules 11.22.2-11.22.7, then the derived type (11.6.3); the answers are kept for §11.23."""
        if self._ballot_rules(place, number, fields, t):  # the token has voted: the rules derive a replacement
            raise Violation(DIFFERS)
        _, token, answers, encoded = fields
        place["tokens"][token] = True
        place["voted"] += 1
        place["answered"][token] = len(place["answers"])
        place["answers"].append((answers, encoded, place["weights"].get(token, 1)))

    def _replace_ballot(self, place, number, fields, index, t):
        """§11.24: the rules of 11.22, then the derived type (11.6.3): the token's answers replace its earlier ones."""
        if not self._ballot_rules(place, number, fields, t):  # the token has not voted: the rules derive a cast
            raise Violation(DIFFERS)
        _, token, answers, encoded = fields
        slot = place["answered"][token]
        place["answers"][slot] = (answers, encoded, place["answers"][slot][2])

    def _ballot_rules(self, place, number, fields, t):
        """Rules 11.22.2-11.22.7 for a ballot cast or replaced; whether the token has already voted."""
        _, token, answers, encoded = fields
        ballot = place["ballot"]
        if ballot is None:  # 11.22.2
            raise Violation(f"place {number} has candidates, not questions: cast a candidate")
        if place["key"]:  # 11.22.2a
            raise Violation(f"place {number} takes only anonymous ballots")
        status = place_status(place, t)
        if status != "voting":  # 11.22.3
            raise Violation(f"voting in place {number} is not open (the place is {status})")
        voted = place["tokens"].get(token)
        if voted is None:  # 11.22.4 (never issued, or replaced by a re-issue)
            raise Violation(f"this token is not authorised to vote in place {number}")
        if voted and not place["flags"] & PLACE_REVOTING:  # 11.22.5
            raise Violation("this token has already voted")
        self._answer_rules(ballot, answers)
        return voted

    @staticmethod
    def _answer_rules(ballot, answers):
        """Rules 11.22.6 and 11.22.7 (and 11.27.2, 11.27.3): one answer per question, each valid for it."""
        if len(answers) != len(ballot):  # 11.22.6
            raise Violation(f"answer to question {min(len(answers), len(ballot)) + 1}: the ballot asks {len(ballot)} "
                            "questions: give one answer to each")
        for q, (question, answer) in enumerate(zip(ballot, answers), start=1):
            problem = answer_problem(question, answer)
            if problem:  # 11.22.7
                raise Violation(f"answer to question {q}: {problem}")

    def _certify(self, place, number, fields, index, t):
        """§11.12: rules 11.12.1a-11.12.4; the derived results cover the events before leaf `index`."""
        if place["ballot"] is not None:  # 11.12.1a
            raise Violation(f"place {number} asks questions: its results are certified as ballot results, "
                            "not as candidate votes")
        if t < place["voting"][1]:  # 11.12.2
            raise Violation(f"results of place {number} can be certified only after voting has closed")
        if place["certified"]:  # 11.12.3
            raise Violation(f"results of place {number} are already certified")
        rows = [(i + 1, c["votes"]) for i, c in enumerate(place["candidates"])]
        derived = [number, index, place["authorized"], place["voted"], len(rows), rows]
        if fields != derived:  # 11.12.4
            raise Violation(f"the certified results of place {number} differ from the votes cast")
        place["certified"] = True

    def _certify_ballot(self, place, number, fields, index, t):
        """§11.26: rules 11.26.2-11.26.5; the derived results are §11.23's count over the events before `index`."""
        if place["ballot"] is None:  # 11.26.2
            raise Violation(f"place {number} has candidates, not questions: cast a candidate")
        if t < place["voting"][1]:  # 11.26.3
            raise Violation(f"results of place {number} can be certified only after voting has closed")
        if place["certified"]:  # 11.26.4
            raise Violation(f"results of place {number} are already certified")
        def pair(total):
            return total["members"], total["weight"]
        results = []
        for q in range(len(place["ballot"])):
            count = count_question(place, q)
            outcome = 2 if count.get("passed") is None else int(count["passed"])
            results.append((pair(count["ballots"]), pair(count["blank"]), [pair(t) for t in count["totals"]], outcome,
                            [o - 1 for o in count["elected"]]))
        voted_weight = sum(weight for _, _, weight in place["answers"])
        derived = [number, index, place["authorized"], place["weight"], place["voted"], voted_weight, len(results),
                   results]
        if fields != derived:  # 11.26.5
            raise Violation(f"the certified results of place {number} differ from the votes cast")
        place["certified"] = True

    def tallies(self):
        """Every place's tally and turnout (§11.13), as the report's `tallies`."""
        out = []
        for number, place in enumerate(self.places, start=1):
            voted, authorized = place["voted"], place["authorized"]
            rows = [dict(candidate=i + 1, name=c["name"], votes=c["votes"], share=c["votes"] / voted if voted else 0.0,
                         withdrawn=c["withdrawn"]) for i, c in enumerate(place["candidates"])]
            turnout = dict(authorized=authorized, voted=voted, percentage=voted * 100 / authorized if authorized else 0.0)
            if place["key"]:
                turnout["issued"] = place["issued"]
            if number in self.withheld:  # §11.20: the counts are not in a copy that withholds the place's events
                out.append(dict(place=number, name=place["name"], tally=[], withheld=self.withheld[number]))
                continue
            if place["ballot"] is not None:  # §11.13: a place with a ballot is counted question by question (§11.23)
                turnout.update(authorized_weight=place["weight"],
                               voted_weight=sum(weight for _, _, weight in place["answers"]))
                out.append(dict(place=number, name=place["name"], questions=[
                    count_question(place, index) for index in range(len(place["ballot"]))], turnout=turnout))
                continue
            out.append(dict(place=number, name=place["name"], tally=rows, turnout=turnout))
        return out


UNICODE_VERSION = "14.0.0"  # §11.4
DIFFERS = "recorded event differs from what the contract decides"  # rule 11.6.3
ALREADY_ISSUED = "a credential has already been issued for this issuance code"  # 11.18.5, 11.17.5

# §11.3.1: the 25 code points of Unicode's White_Space property.
WHITE_SPACE = frozenset([0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B),
                         0x2028, 0x2029, 0x202F, 0x205F, 0x3000])
# §11.3.2: the controls and the bidirectional marks, embeddings, overrides and isolates.
FORBIDDEN = frozenset([*range(0x00, 0x20), *range(0x7F, 0xA0), 0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F),
                       *range(0x2066, 0x206A)])


def trim(text):
    """§11.3.1: the text without the White_Space code points at its start and end."""
    start, end = 0, len(text)
    while start < end and ord(text[start]) in WHITE_SPACE:
        start += 1
    while end > start and ord(text[end - 1]) in WHITE_SPACE:
        end -= 1
    return text[start:end]


def check_name(name, field):
    """§11.3.3: the name trimmed (§11.3.1), then non-empty, at most 200 code points, nothing forbidden."""
    trimmed = trim(name)
    if not trimmed:
        raise Violation(f"{field} must not be empty")
    if len(trimmed) > 200:
        raise Violation(f"{field} must be at most 200 code points")
    if any(ord(c) in FORBIDDEN for c in trimmed):
        raise Violation(f"{field} must not contain control or text-direction characters")
    return trimmed


def check_text(text, field):
    """§11.3.4: at most 2000 code points, nothing forbidden but line feed; not trimmed."""
    if len(text) > 2000:
        raise Violation(f"{field} must be at most 2000 code points")
    if any(ord(c) in FORBIDDEN and c != "\n" for c in text):
        raise Violation(f"{field} must not contain control or text-direction characters")


def name_key(name):
    """§11.4: the canonical caseless match key NFD(toCasefold(NFD(X))), on Unicode 14.0.0 data."""
    return unicodedata.normalize("NFD", unicodedata.normalize("NFD", name).casefold())


def place_status(place, t):
    """§11.5: where a place stands at time t."""
    if place["cancelled"]:  # §11.30
        return "cancelled"
    (rs, re_), (vs, ve) = place["registration"], place["voting"]
    if t < rs:
        return "upcoming"
    if t < re_:
        return "registration"
    if t < vs:
        return "waiting"
    return "voting" if t < ve else "ended"


def existing_candidate(place, number, candidate):
    """Candidate `candidate` of the place, which must exist (11.9.2, 11.11.5)."""
    if not 1 <= candidate <= len(place["candidates"]):
        raise Violation(f"candidate {candidate} does not exist in place {number}")
    return place["candidates"][candidate - 1]


# ----------------------------------------------------------------------------- §11.21-§11.23 ballots

def check_ballot_texts(ballot):
    """Rule 11.7.9: question by question, the title (a name), the description (a text), then each option (a name,
    whose key must differ from every earlier option's). Returns whether a title or an option is untrimmed (11.6.3)."""
    untrimmed = False
    for q, question in enumerate(ballot, start=1):
        title = check_name(question["title"], f"question {q} title")
        check_text(question["description"], f"question {q} description")
        untrimmed |= title != question["title"]
        keys = set()
        for k, option in enumerate(question["options"], start=1):
            trimmed = check_name(option, f"question {q} option {k}")
            key = name_key(trimmed)
            if key in keys:
                raise Violation(f'question {q} has two options named "{trimmed}"')
            keys.add(key)
            untrimmed |= trimmed != option
    return untrimmed


def ballot_shape_problem(ballot):
    """§11.21: the first rule of the ballot's shape that fails (11.21.1, then per question 11.21.2-11.21.5), as its
    reason after `the ballot `; None if none does."""
    if not 1 <= len(ballot) <= 64:  # 11.21.1
        return "must ask 1 to 64 questions"
    for q, question in enumerate(ballot, start=1):
        count, method = len(question["options"]), question["method"]
        if not (1 <= count <= 256 if method == CHOOSE else count == 0 if method == YES_NO else 2 <= count <= 256):
            return (f"question {q}: a choose question needs 1 to 256 options, a ranked one 2 to 256, a yes/no "
                    "question none")  # 11.21.2
        if method == CHOOSE and not 1 <= question["min"] <= question["max"] <= count:  # 11.21.3
            return f"question {q}: min must be at least 1 and at most max, and max at most the number of options"
        if (method == CHOOSE and not 1 <= question["seats"] <= count) or (
                method == RANK and not 1 <= question["seats"] < count):  # 11.21.4
            return f"question {q}: seats must be at least 1 and fewer than the options (choose: at most the options)"
        if method == YES_NO and any(f and not 0 < f[0] <= f[1] for f in (question["fraction"], question["quorum"])):
            return f"question {q}: a threshold or quorum must be a fraction above 0 and at most 1"  # 11.21.5
    return None


def answer_problem(question, answer):
    """Rule 11.22.7 for one answer (a list of option indexes, None when blank): the reason of the first of (a)-(d)
    it fails, or None."""
    if answer is None:  # (a); a blank answer passes (b)-(d)
        return None if question["flags"] & 1 else "this question may not be left blank"
    method, n = question["method"], len(answer)
    if any(o >= (3 if method == YES_NO else len(question["options"])) for o in answer):  # (b)
        return "no such option"
    if len(set(answer)) != n:  # (c)
        return "an option is given twice"
    if method == CHOOSE:  # (d)
        if n < question["min"]:
            return f"pick at least {question['min']}"
        if n > question["max"]:
            return f"pick at most {question['max']}"
        if answer != sorted(answer):
            return "the options picked must be listed in ascending order"
    elif n == 0:
        return "pick at least 1"
    elif method == YES_NO and n > 1:
        return "pick at most 1"
    return None


UNIT = 100000  # §11.23: 1 vote = 100000 units
LOT_LABEL = b"voteledger-lot-v1\x00"


def units(amount):
    """An amount of units as votes with five decimals ("2.18178")."""
    return f"{amount // UNIT}.{amount % UNIT:05d}"


class Lot:
    """§11.23 "The lot" for one question: draws and orderings keyed by the place's ballots, numbered from 0."""

    def __init__(self, seed, question):
        self.seed, self.question, self.draws = seed, question, 0

    def key(self, draw, option):
        return sha256(LOT_LABEL + self.seed + self.question.to_bytes(4, "big") + draw.to_bytes(4, "big")
                      + option.to_bytes(4, "big"))

    def order(self, options):
        """An ordering with the next draw number: the options sorted by key, smallest first."""
        draw, self.draws = self.draws, self.draws + 1
        return sorted(options, key=lambda o: self.key(draw, o))

    def draw(self, options):
        """A draw with the next draw number: the option whose key is smallest."""
        return self.order(options)[0]


def count_stv(rankings, count, seats, lot):
    """§11.23 Scottish STV over `rankings` (each a pair: a non-empty list of option indexes and its weight) for
    `seats` of `count` options, in units: (quota, elected in order of election, stages)."""
    weights = {}
    for ranking, weight in rankings:  # a ballot of weight w is w papers
        weights[tuple(ranking)] = weights.get(tuple(ranking), 0) + weight
    valid = sum(weights.values())
    quota = (valid // (seats + 1) + 1) * UNIT
    # A record: [ranking, papers, value, position in the ranking]; `held[o]` the records option o holds.
    held = {o: [] for o in range(count)}
    total = [0] * count
    status = ["continuing"] * count
    elected, stages, history = [], [], []
    non_transferable = loss = 0
    transferred = set()

    def next_preference(record):
        ranking = record[0]
        for position in range(record[3] + 1, len(ranking)):
            if status[ranking[position]] == "continuing":
                return position
        return None

    def move(records, value_of):
        """Each record to its next continuing preference at value_of(record), or set aside; returns Σ value × papers."""
        nonlocal non_transferable
        moved = 0
        for record in records:
            record[2] = value_of(record)
            position = next_preference(record)
            if position is None:
                non_transferable += record[2] * record[1]
            else:
                record[3] = position
                held[record[0][position]].append(record)
                total[record[0][position]] += record[2] * record[1]
            moved += record[2] * record[1]
        return moved

    def end_stage(stage):
        newly = sorted((o for o in range(count) if status[o] == "continuing" and total[o] >= quota),
                       key=lambda o: (-total[o], o))
        for o in newly:
            status[o] = "elected"
        elected.extend(newly)
        stage.update(totals=list(total), elected=newly, non_transferable=non_transferable, loss=loss)
        stages.append(stage)
        history.append(list(total))

    def choose(group, largest):
        """Rules 49(2)-(3), 51(2): the option of `group` chosen by looking back, else by lot, and how."""
        if len(group) == 1:
            return group[0], None
        tied = [o + 1 for o in group]
        for stage in range(len(history) - 1, -1, -1):
            best = (max if largest else min)(history[stage][o] for o in group)
            group = [o for o in group if history[stage][o] == best]
            if len(group) == 1:
                return group[0], dict(options=tied, decided="looking back", stage=stage + 1)
        return lot.draw(group), dict(options=tied, decided="lot")

    for ranking, papers in weights.items():  # stage 1: every valid paper to its first preference
        record = [ranking, papers, UNIT, 0]
        held[ranking[0]].append(record)
        total[ranking[0]] += UNIT * papers
    end_stage(dict(number=1, action="first_count"))
    while len(elected) < seats:
        continuing = [o for o in range(count) if status[o] == "continuing"]
        if len(continuing) <= seats - len(elected):  # rule 52
            rest = sorted(continuing, key=lambda o: (-total[o], o))
            for o in rest:
                status[o] = "elected"
            elected.extend(rest)
            stages.append(dict(number=len(stages) + 1, action="elected_by_remaining", totals=list(total), elected=rest,
                               non_transferable=non_transferable, loss=loss))
            break
        surpluses = [o for o in elected if o not in transferred and total[o] > quota]
        if surpluses:  # rules 48-49
            largest = max(total[o] for o in surpluses)
            chosen, tie = choose(sorted(o for o in surpluses if total[o] == largest), True)
            surplus, whole = total[chosen] - quota, total[chosen]
            records, held[chosen] = held[chosen], []
            moved = move(records, lambda record: surplus * record[2] // whole)
            loss += surplus - moved
            total[chosen] = quota
            transferred.add(chosen)
            stage = dict(number=len(stages) + 1, action="surplus_transferred", option=chosen)
        else:  # rules 50-51
            smallest = min(total[o] for o in continuing)
            chosen, tie = choose([o for o in continuing if total[o] == smallest], False)
            status[chosen] = "excluded"
            records, held[chosen] = held[chosen], []
            move(records, lambda record: record[2])
            total[chosen] = 0
            stage = dict(number=len(stages) + 1, action="excluded", option=chosen)
        stage["tie"] = tie
        end_stage(stage)
    return quota, elected, stages


def count_schulze(rankings, count, seats, lot):
    """§11.23 Schulze with winning votes over (ranking, weight) pairs: (elected, order, ties decided by lot)."""
    d = [[0] * count for _ in range(count)]
    for ranking, weight in rankings:
        ranked = set(ranking)
        for i, a in enumerate(ranking):
            for b in ranking[i + 1:]:
                d[a][b] += weight
            for b in range(count):
                if b not in ranked:
                    d[a][b] += weight
    p = [[d[a][b] if a != b and d[a][b] > d[b][a] else 0 for b in range(count)] for a in range(count)]
    for i in range(count):
        for a in range(count):
            if a == i:
                continue
            for b in range(count):
                if b != a and b != i:
                    p[a][b] = max(p[a][b], min(p[a][i], p[i][b]))
    order, ties, remaining = [], [], list(range(count))
    while remaining:
        unbeaten = [a for a in remaining if not any(p[b][a] > p[a][b] for b in remaining)]
        if len(unbeaten) > 1:
            unbeaten = lot.order(unbeaten)
            ties.append(unbeaten)
        order.extend(unbeaten)
        remaining = [a for a in remaining if a not in unbeaten]
    return order[:seats], order, ties


def count_question(place, index):
    """§11.23: the count of question `index` (0-based) of a place with a ballot, as the report shows it."""
    question = place["ballot"][index]
    method, options = question["method"], question["options"]
    answers = [(a[index], weight) for a, _, weight in place["answers"]]  # §11.25: each with its token's weight
    lot = Lot(sha256(b"".join(encoded for _, encoded, _ in place["answers"])), index)
    count = 3 if method == YES_NO else len(options)
    members, totals = [0] * count, [0] * count  # per option: the ballots, and their summed weight (what decides)
    for answer, weight in answers:
        for o in (answer or [])[:1] if method == RANK else (answer or []):
            members[o] += 1
            totals[o] += weight
    blank = [w for a, w in answers if a is None]
    out = dict(question=index + 1, title=question["title"],
               method={CHOOSE: "choose", YES_NO: "yes-no", RANK: "rank"}[method],
               ballots=dict(members=len(answers), weight=sum(w for _, w in answers)),
               blank=dict(members=len(blank), weight=sum(blank)),
               totals=[dict(members=m, weight=w) for m, w in zip(members, totals)])
    if method == CHOOSE:
        ranked = sorted((o for o in range(count) if totals[o] > 0), key=lambda o: (-totals[o], o))
        seats = question["seats"]
        elected = ranked[:seats]
        if len(ranked) > seats and totals[ranked[seats - 1]] == totals[ranked[seats]]:
            last = totals[ranked[seats]]
            above = [o for o in ranked if totals[o] > last]
            tied = lot.order([o for o in ranked if totals[o] == last])
            elected = above + tied[:seats - len(above)]
            out["tie"] = dict(options=[o + 1 for o in tied], decided="lot")
        out["elected"] = [o + 1 for o in elected]
    elif method == YES_NO:
        yes, no, ballots, electorate = totals[0], totals[1], out["ballots"]["weight"], place["weight"]
        threshold, fraction = question["threshold"], question["fraction"]
        reached = {1: lambda: yes > no,
                   2: lambda: yes + no > 0 and yes * fraction[1] >= fraction[0] * (yes + no),
                   3: lambda: yes > 0 and yes * fraction[1] >= fraction[0] * ballots,
                   4: lambda: 2 * yes > electorate}[threshold]()
        quorum = question["quorum"]
        met = quorum is None or ballots * quorum[1] >= quorum[0] * electorate
        out.update(passed=reached and met, threshold_reached=reached, quorum_met=met if quorum else None,
                   electorate=electorate, elected=[])
    else:
        rankings = [(a, w) for a, w in answers if a]
        if not rankings:
            # §11.23: a ranked question no ballot answered elects no one and is counted no further.
            out.update(rule="scottish-stv" if question["rule"] == STV else "schulze", elected=[])
        elif question["rule"] == STV:
            quota, elected, stages = count_stv(rankings, count, question["seats"], lot)
            out.update(rule="scottish-stv", quota=units(quota), elected=[o + 1 for o in elected], stages=[
                dict(number=s["number"], action=s["action"], **({"option": s["option"] + 1} if "option" in s else {}),
                     totals=[units(x) for x in s["totals"]], elected=[o + 1 for o in s["elected"]],
                     non_transferable=units(s["non_transferable"]), loss=units(s["loss"]),
                     **({"tie": s["tie"]} if s.get("tie") else {}))
                for s in stages])
        else:
            elected, order, ties = count_schulze(rankings, count, question["seats"], lot)
            out.update(rule="schulze", elected=[o + 1 for o in elected], order=[o + 1 for o in order],
                       ties=[[o + 1 for o in tie] for tie in ties])
    return out


# ------------------------------------------------------------------------------ §4, §12 proofs, receipts

def verify_inclusion(leaf, index, size, path, root):
    """RFC 9162 §2.1.3.2: whether `path` proves `leaf` at `index` in the tree of `size` with `root` (§4)."""
    if index >= size:
        return False
    fn, sn, r = index, size - 1, leaf
    for p in path:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            while not fn & 1 and fn != 0:
                fn, sn = fn >> 1, sn >> 1
        else:
            r = node_hash(r, p)
        fn, sn = fn >> 1, sn >> 1
    return sn == 0 and r == root


def verify_consistency(first, second, path, first_root, second_root):
    """RFC 9162 §2.1.4.2, with the edge cases of §4 (no proof from size 0; equal sizes: empty proof)."""
    if first == 0 or first > second:
        return False
    if first == second:
        return not path and first_root == second_root
    if not path:
        return False
    if first & (first - 1) == 0:
        path = [first_root] + path
    fn, sn = first - 1, second - 1
    while fn & 1:
        fn, sn = fn >> 1, sn >> 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr, sr = node_hash(c, fr), node_hash(c, sr)
            while not fn & 1 and fn != 0:
                fn, sn = fn >> 1, sn >> 1
        else:
            sr = node_hash(sr, c)
        fn, sn = fn >> 1, sn >> 1
    return sn == 0 and fr == first_root and sr == second_root


def consistency_ranges(m, n):
    """RFC 9162 §2.1.4.1 PROOF(m, D[n]) as the leaf ranges [lo, hi) whose tree heads make up the proof."""
    def subproof(m, lo, hi, complete):
        if m == hi - lo:
            return [] if complete else [(lo, hi)]
        k = 1 << ((hi - lo - 1).bit_length() - 1)  # the largest power of two < hi - lo
        if m <= k:
            return subproof(m, lo, lo + k, complete) + [(lo + k, hi)]
        return subproof(m - k, lo + k, hi, False) + [(lo, lo + k)]
    return subproof(m, 0, n, True)


def consistency_proof(path, m, n):
    """PROOF(m, D[n]) over the ledger's leaves: one more pass, a frontier per (disjoint) range (§4)."""
    ranges = consistency_ranges(m, n)
    order = sorted(range(len(ranges)), key=lambda i: ranges[i])
    starts, frontiers, index = [ranges[i][0] for i in order], [Frontier() for _ in ranges], 0

    def collect(header, header_hash, events):
        nonlocal index
        for event in events:
            at = bisect.bisect_right(starts, index) - 1
            if at >= 0 and index < ranges[order[at]][1]:
                frontiers[order[at]].append(leaf_hash(event))
            index += 1

    verify_ledger(path, on_block=collect)
    return [f.root() for f in frontiers]


def b64(text, what, size=None):
    """Strict base64 of a receipt field, optionally of exactly `size` bytes (§12)."""
    try:
        raw = base64.b64decode(text, validate=True)
    except ValueError:
        raise MalformedReceipt(f"{what} is not valid base64") from None
    if size is not None and len(raw) != size:
        raise MalformedReceipt(f"{what} is {len(raw)} bytes, not {size}")
    return raw


def decimal(text, what):
    """A decimal number with no sign or leading zero (C2SP tlog-checkpoint, tlog-proof)."""
    if not re.fullmatch(r"0|[1-9][0-9]*", text):
        raise MalformedReceipt(f"{what} is not a decimal number")
    return int(text)


def parse_receipt(text):
    """Parses a C2SP tlog-proof (§12): extra, index, proof, and its signed head (`parse_head`)."""
    proof_part, _, note = text.partition("\n\n")
    lines = proof_part.split("\n")
    if lines[0] != "c2sp.org/tlog-proof@v1" or len(lines) < 3 or not lines[1].startswith("extra "):
        raise MalformedReceipt("not a c2sp.org/tlog-proof@v1 receipt with an extra line (the event)")
    if not lines[2].startswith("index "):
        raise MalformedReceipt("the receipt has no index line")
    receipt = dict(extra=b64(lines[1][6:], "extra"), index=decimal(lines[2][6:], "index"),
                   path=[b64(line, "a proof hash", 32) for line in lines[3:]])
    receipt.update(parse_head(note))
    return receipt


def parse_head(note):
    """Parses a signed head (§12.1): the note text, its signature lines, and the checkpoint's origin, tree
    size, root, and `height` and `time`, each given by exactly one extension line in decimal."""
    body, separator, signatures = note.partition("\n\n")
    head = body.split("\n")
    if not separator or not signatures.endswith("\n") or len(head) < 3:
        raise MalformedReceipt("the checkpoint is not a signed note of at least three lines")
    fields = dict(note=body + "\n", signatures=signatures[:-1].split("\n"), origin=head[0],
                  tree_size=decimal(head[1], "the tree size"), root=b64(head[2], "the root", 32))
    for name in ("height", "time"):
        values = [line[len(name) + 1:] for line in head[3:] if line.startswith(name + " ")]
        if len(values) != 1:
            raise MalformedReceipt(f"the checkpoint has {len(values)} {name} lines, not exactly one")
        fields[name] = decimal(values[0], name)
    if fields["time"] >= 1 << 63:
        raise MalformedReceipt("the checkpoint's time is out of range")
    return fields


def check_signed_note(head, authority_key):
    """The checkpoint's Ed25519 signature by the key named after the origin, found by key ID (§12)."""
    origin = head["origin"]
    if not re.fullmatch(r"voteledger/[0-9a-f]{32}", origin):
        raise ReceiptFailure(f"the checkpoint's origin {origin!r} is not a VoteLedger origin")
    key_id = sha256(origin.encode() + b"\n\x01" + authority_key)[:4]
    for line in head["signatures"]:
        parts = line.split(" ")
        if len(parts) != 3 or parts[0] != "\u2014":
            raise MalformedReceipt("a checkpoint signature line is malformed")
        signature = b64(parts[2], "a checkpoint signature")
        if parts[1] == origin and signature[:4] == key_id and len(signature) == 68:
            try:
                Ed25519PublicKey.from_public_bytes(authority_key).verify(signature[4:], head["note"].encode())
                return
            except InvalidSignature:
                raise ReceiptFailure("the checkpoint's signature is invalid") from None
    raise ReceiptFailure("the checkpoint is not signed by the authority key")


def parse_witness(text):
    """A `--witness NAME=VKEY` option: the witness's name and Ed25519 cosigning key, from its verifier key
    "name+keyid+base64(0x04 || key)" (C2SP signed-note, tlog-cosignature); NAME must be the key's name."""
    name, separator, vkey = text.partition("=")
    parts = vkey.split("+", 2)
    if not separator or len(parts) != 3 or parts[0] != name or not name or re.search(r"\s|\+", name):
        raise ValueError(f"--witness must be NAME=VKEY with the verifier key of witness NAME, not {text!r}")
    try:
        raw = base64.b64decode(parts[2], validate=True)
    except ValueError:
        raw = b""
    key_id = sha256(name.encode() + b"\n\x04" + raw[1:])[:4] if len(raw) == 33 else None
    if raw[:1] != b"\x04" or not re.fullmatch(r"[0-9a-f]{8}", parts[1]) or bytes.fromhex(parts[1]) != key_id:
        raise ValueError(f"--witness {name}: not an Ed25519 cosigner verifier key (type 0x04) with a matching key ID")
    return name, raw[1:]


def cosignature_time(head, name, key):
    """The time of the valid tlog-cosignature/v1 (Ed25519, type 0x04) by witness `name` with public `key` on
    the checkpoint `head` (`parse_head`), or None if it has none. The signed message is "cosignature/v1",
    "time T" and the note's text, each line ending in a newline; the signature line's payload is the key ID,
    T as a big-endian u64, and the signature. A line of this key that does not verify makes it None."""
    key_id = sha256(name.encode() + b"\n\x04" + key)[:4]
    latest = None
    for line in head["signatures"]:
        parts = line.split(" ")
        if len(parts) != 3 or parts[0] != "\u2014" or parts[1] != name:
            continue
        payload = b64(parts[2], "a cosignature")
        if payload[:4] != key_id:
            continue
        time = int.from_bytes(payload[4:12], "big")
        if len(payload) != 76 or time == 0 or time >= (1 << 63) - 1:  # no moment a witness signed at
            return None
        message = f"cosignature/v1\ntime {time}\n".encode() + head["note"].encode()
        try:
            Ed25519PublicKey.from_public_bytes(key).verify(payload[12:], message)
        except InvalidSignature:
            return None
        latest = max(latest or 0, time)
    return latest


def check_quorum(head, witnesses, quorum):
    """At least `quorum` of `witnesses` (name, key) cosigned the checkpoint `head`; returns who did."""
    cosigned = [name for name, key in witnesses if cosignature_time(head, name, key) is not None]
    if len(cosigned) < quorum:
        raise ReceiptFailure(f"the checkpoint has {len(cosigned)} valid cosignatures of the {len(witnesses)} "
                             f"witnesses named ({', '.join(cosigned) or 'none'}), fewer than the quorum of {quorum}")
    return cosigned


def verified_ledger(ledger, head):
    """Verifies `ledger` (§7) for checking `head` against it: its summary, authority key, and the header of
    block `head["height"]` (None if it has no such block)."""
    blocks = {}

    def remember(header, header_hash, events):
        if header["height"] == head["height"]:
            blocks["head"] = header
    summary, key = verify_ledger(ledger, on_block=remember)
    if head["origin"] != "voteledger/" + summary["ledger_id"]:
        raise ReceiptFailure("the head belongs to another ledger")
    return summary, key, blocks.get("head")


def check_head_in_ledger(head, ledger, summary, block):
    """§12.1 against a ledger: its tree is a prefix of the ledger's (consistency proof), and its `height`
    names the block whose tree size is the head's, with its root and `time`. Returns the ledger's size."""
    size, root, current = head["tree_size"], head["root"], summary["events"]
    proof = consistency_proof(ledger, size, current) if 0 < size <= current else []
    if not verify_consistency(size, current, proof, root, bytes.fromhex(summary["tree_root"])):
        raise ReceiptFailure(f"the head (tree size {size}) is not a prefix of this ledger (tree size {current})")
    if block is None or (block["treeSize"], block["treeRoot"], block["timestamp"]) != (size, root, head["time"]):
        raise ReceiptFailure(f"the checkpoint does not match block {head['height']} of this ledger")
    return current


def verify_receipt(text, ledger=None, key=None, witnesses=(), quorum=0):
    """Checks a receipt (§12): its signed head and the event's inclusion; against a ledger (verified to §7)
    also that the head is a prefix of it (consistency proof) and matches its block `height`; with
    `witnesses`, that at least `quorum` of them cosigned its head."""
    receipt = parse_receipt(text)
    if ledger is not None:
        summary, key, block = verified_ledger(ledger, receipt)
    check_signed_note(receipt, key)
    cosigned = check_quorum(receipt, witnesses, quorum)
    size, root = receipt["tree_size"], receipt["root"]
    if not verify_inclusion(leaf_hash(receipt["extra"]), receipt["index"], size, receipt["path"], root):
        raise ReceiptFailure("the inclusion proof does not verify under the checkpoint")
    result = dict(ok=True, index=receipt["index"], tree_size=size, height=receipt["height"])
    if witnesses:
        result["cosigned_by"] = cosigned
    if ledger is not None:
        result["current_tree_size"] = check_head_in_ledger(receipt, ledger, summary, block)
    return result


def verify_head(text, ledger, witnesses=(), quorum=0):
    """Checks a published signed head against a ledger (§12.1): the authority's signature, then as for a
    receipt's head, that the ledger extends it and that it names its block truly, and its cosignatures."""
    head = parse_head(text)
    summary, key, block = verified_ledger(ledger, head)
    check_signed_note(head, key)
    cosigned = check_quorum(head, witnesses, quorum)
    current = check_head_in_ledger(head, ledger, summary, block)
    result = dict(ok=True, tree_size=head["tree_size"], height=head["height"], current_tree_size=current)
    if witnesses:
        result["cosigned_by"] = cosigned
    return result


# ----------------------------------------------------------------------------------------------- main

def check_earlier_copy(path, blocks, ledger_only=False):
    """§3.8: verifies the copy at `path`, then checks it against the ledger's `blocks` ([(header hash, events)]):
    the same header hash at every height of the copy, and every event the same bytes or a withheld event that
    matches the ledger's (same type, leaf hash and disclosed prefix). Returns how many withheld events matched."""
    copied = []
    verify_ledger(path, election=None if ledger_only else Election(),
                  on_block=lambda header, header_hash, events: copied.append((header_hash, events)))
    disclosed = 0
    for height, (header_hash, events) in enumerate(copied):
        if height >= len(blocks):
            raise ReceiptFailure(f"the earlier copy holds block {height}, which this ledger does not")
        if blocks[height][0] != header_hash:
            raise ReceiptFailure(f"block {height} of the earlier copy is not this ledger's (its header differs)")
        for i, (old, new) in enumerate(zip(events, blocks[height][1])):
            if old == new:
                continue
            withheld = withheld_event(old)
            if withheld and withheld[0] == event_type(new) and leaf_hash(new) == withheld[1] and \
                    new[2:2 + len(withheld[2])] == withheld[2]:
                disclosed += 1
                continue
            raise ReceiptFailure(f"block {height}, event {i} of the earlier copy is not this ledger's event")
    return disclosed


def read_text(path):
    """A receipt or head file's text; a file that cannot be read or is not UTF-8 is malformed."""
    try:
        with open(path, encoding="utf-8") as file:
            return file.read()
    except (OSError, UnicodeDecodeError) as error:
        raise MalformedReceipt(f"cannot read it: {error}") from None


def main(argv):
    """The command line: prints one JSON object and returns the exit status (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("directory", nargs="?", help="the ledger directory to verify")
    parser.add_argument("--ledger-only", action="store_true", help="check §5-§7 only, not the election (§11)")
    parser.add_argument("--receipt", help="a receipt (c2sp.org/tlog-proof@v1) to check")
    parser.add_argument("--ledger", help="the ledger directory (with --receipt: the ledger to check it against)")
    parser.add_argument("--key", help="with --receipt and no ledger: the authority public key, 64 hex digits")
    parser.add_argument("--head", help="a signed head (c2sp.org/tlog-checkpoint) to check against --ledger")
    parser.add_argument("--witness", action="append", default=[], metavar="NAME=VKEY",
                        help="with --receipt or --head: a witness whose cosignature counts (repeatable)")
    parser.add_argument("--quorum", type=int, help="how many of the witnesses must have cosigned (default: all)")
    parser.add_argument("--earlier-copy", help="a public copy taken earlier to check against the ledger (§3.8)")
    args = parser.parse_args(argv)
    ledger = args.ledger or args.directory
    try:
        witnesses = [parse_witness(text) for text in args.witness]
    except ValueError as error:
        parser.error(str(error))
    quorum = len(witnesses) if args.quorum is None else args.quorum
    if len({name for name, _ in witnesses}) != len(witnesses) or not 0 <= quorum <= len(witnesses) or (
            witnesses and quorum == 0) or (witnesses and not (args.receipt or args.head)):
        parser.error("--quorum K needs K distinct --witness NAME=VKEY (1 <= K <= their number) and --receipt or --head")
    try:
        if args.head:
            if ledger is None:
                parser.error("--head needs --ledger LEDGER_DIR")
            report = verify_head(read_text(args.head), ledger, witnesses, quorum)
            if args.receipt:
                # Both heads are proven prefixes of the ledger, so the published one extends the receipt's.
                receipt = verify_receipt(read_text(args.receipt), ledger)
                if receipt["tree_size"] > report["tree_size"]:
                    raise ReceiptFailure("the published head is older than the receipt's")
                report = dict(receipt, head_tree_size=report["tree_size"],
                              **({"cosigned_by": report["cosigned_by"]} if witnesses else {}))
        elif args.receipt:
            if ledger is None and not re.fullmatch(r"[0-9a-fA-F]{64}", args.key or ""):
                parser.error("--receipt needs --ledger LEDGER_DIR or --key with 64 hex digits")
            key = None if ledger else bytes.fromhex(args.key)
            report = verify_receipt(read_text(args.receipt), ledger, key, witnesses, quorum)
        else:
            if ledger is None:
                parser.error("give a ledger directory")
            if not args.ledger_only and unicodedata.unidata_version != UNICODE_VERSION:
                parser.error(f"the election rules (§11.4) need Unicode {UNICODE_VERSION} (Python 3.11); this Python's "
                             f"unicodedata is {unicodedata.unidata_version}: use Python 3.11, or --ledger-only")
            election = None if args.ledger_only else Election()
            blocks = []
            report, _ = verify_ledger(ledger, election=election, on_block=(
                (lambda header, header_hash, events: blocks.append((header_hash, events))) if args.earlier_copy
                else None))
            if election is not None:
                report.update(places=len(election.places), tallies=election.tallies())
                if election.withheld:
                    report.update(withheld_events=sum(election.withheld.values()))
            if args.earlier_copy:
                report.update(earlier_copy_disclosed=check_earlier_copy(args.earlier_copy, blocks,
                                                                        ledger_only=args.ledger_only))
        print(json.dumps(report))
        return 0
    except NotALedger as error:
        print(json.dumps(dict(ok=False, error=f"{error.path or ledger}: not a ledger: {error}")))
        return 1
    except MalformedReceipt as error:
        print(json.dumps(dict(ok=False, error=f"malformed {'head' if args.head else 'receipt'}: {error}")))
        return 1
    except Damage as error:
        print(json.dumps(dict(ok=False, error=str(error), height=error.height, file=error.file, offset=error.offset)))
        return 3
    except ReceiptFailure as error:
        print(json.dumps(dict(ok=False, error=str(error))))
        return 3


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
