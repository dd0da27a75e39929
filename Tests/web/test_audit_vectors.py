"""The audit page's verification (Sources/VoteServer/Web/audit.js, run in headless Chromium) agrees with
`vote audit` on every receipt vector of Ledger/vectors/audit: the good receipts pass, and each tampered one
fails the check that `vote audit` names (signature, inclusion, consistency, or the receipt's format)."""

import base64
import json
import os
import struct
import subprocess
import tempfile
import unittest

from support import VECTORS, WEB, Tree, chromium, static_server, vote_binary

AUDIT = """
const [receipt, key, head, proofs, done] = arguments;
import('/audit.js').then(async (audit) => {
    const report = await audit.auditReceipt({
        receipt, key, head,
        consistency: async (from, to) => {
            const proof = proofs[`${from}-${to}`];
            if (!proof) throw new Error(`no consistency proof ${from}-${to}`);
            return proof;
        },
    });
    done({ok: report.ok, checks: report.checks, event: report.event});
}).catch((error) => done({error: String(error)}));
"""


def failing_check(vote_result):
    """The browser check that corresponds to `vote audit`'s failure message."""
    message = vote_result["message"]
    if vote_result["exit"] == 1:
        return "format"
    if "signature" in message:
        return "signature"
    if "not included" in message:
        return "inclusion"
    if "prefix" in message or "forked" in message:
        return "consistency"
    raise AssertionError(f"unmapped vote audit message: {message}")


class AuditVectorTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.vote = vote_binary()
        with open(os.path.join(VECTORS, "cases.json")) as file:
            cls.cases = json.load(file)["audits"]
        cls.trees = {name: Tree(cls.vote, os.path.join(VECTORS, name))
                     for name in ("election", "audit/rewritten", "audit/forged")}
        cls.driver = chromium()
        cls.server = static_server(WEB)
        cls.base = cls.server.__enter__()
        cls.driver.get(cls.base + "/")

    @classmethod
    def tearDownClass(cls):
        cls.driver.quit()
        cls.server.__exit__(None, None, None)

    def read(self, relative):
        with open(os.path.join(VECTORS, relative)) as file:
            return file.read()

    def run_vote_audit(self, case):
        """`vote audit` as cases.json describes the invocation, with its own state directory."""
        arguments = [self.vote, "audit"]
        if "receipt" in case:
            arguments.append(case["receipt"])
        for option in ("head", "key", "ledger"):
            if option in case:
                arguments += [f"--{option}", case[option]]
        with tempfile.TemporaryDirectory() as state:
            done = subprocess.run(arguments, cwd=VECTORS, capture_output=True, text=True,
                                  env={**os.environ, "VOTE_STATE_DIR": state})
        result = {"exit": done.returncode, "message": done.stderr.strip().removeprefix("vote: ")}
        return result

    def head_of(self, name):
        """The signed head (of the vectors) whose root is the ledger's current root: the server's GET /head."""
        tree = self.trees[name]
        root = base64.b64encode(tree.root(len(tree.leaves))).decode()
        for head in ("head-final.txt", "head-rewritten.txt", "head-forged.txt"):
            text = self.read("audit/" + head)
            if text.splitlines()[2] == root:
                return text
        self.fail(f"no signed head in the vectors for {name}")

    def browser_inputs(self, case):
        """What the audit page would be given for this invocation: the receipt, the authority's key (the
        case's, or the one its ledger names), and as the current head the ledger's (or the published one)."""
        ledger = case.get("ledger")
        key = self.read(case["key"]) if "key" in case else self.trees[ledger].verifier_key()
        head = self.head_of(ledger) if ledger else (self.read(case["head"]) if "head" in case else None)
        proofs = {}
        if head:
            lines = head.splitlines()
            size = int(lines[1])
            for tree in self.trees.values():
                if base64.b64encode(tree.root(size)).decode() == lines[2]:
                    for first in range(1, size + 1):
                        proofs[f"{first}-{size}"] = [h.hex() for h in tree.consistency(first, size)]
        return self.read(case["receipt"]), key, head, proofs

    def test_every_receipt_vector_agrees_with_vote_audit(self):
        receipt_cases = [c for c in self.cases if "receipt" in c]
        self.assertGreaterEqual(len(receipt_cases), 15)
        outcomes = {"pass": 0, "fail": 0}
        for case in receipt_cases:
            with self.subTest(case["name"]):
                vote = self.run_vote_audit(case)
                self.assertEqual(vote["exit"], case["expect"]["exit"], vote["message"])
                report = self.driver.execute_async_script(AUDIT, *self.browser_inputs(case))
                self.assertNotIn("error", report, report.get("error"))
                checks = {c["id"]: c["status"] for c in report["checks"]}
                if vote["exit"] == 0:
                    outcomes["pass"] += 1
                    self.assertTrue(report["ok"], report["checks"])
                    self.assertEqual(report["event"]["kind"], "vote_cast")
                else:
                    outcomes["fail"] += 1
                    self.assertFalse(report["ok"], report["checks"])
                    expected = failing_check(vote)
                    self.assertEqual(checks.get(expected), "fail", (expected, report["checks"]))
                    failed = sorted(k for k, v in checks.items() if v == "fail")
                    self.assertEqual(failed, [expected], report["checks"])
        self.assertGreater(outcomes["pass"], 3)
        self.assertGreater(outcomes["fail"], 5)

    def test_rewritten_ledger_is_caught_from_an_earlier_receipt(self):
        """An early receipt (24 events) against the rewritten ledger's head: the consistency proof the
        rewritten ledger gives cannot take the receipt's root to its own."""
        receipt = self.read("audit/receipt-early.tlog-proof")
        head = self.read("audit/head-rewritten.txt")
        tree = self.trees["audit/rewritten"]
        proofs = {"24-29": [h.hex() for h in tree.consistency(24, 29)]}
        report = self.driver.execute_async_script(AUDIT, receipt, tree.verifier_key(), head, proofs)
        checks = {c["id"]: c["status"] for c in report["checks"]}
        self.assertEqual((checks["signature"], checks["inclusion"], checks["head"], checks["consistency"]),
                         ("pass", "pass", "pass", "fail"), report)
        good = self.driver.execute_async_script(
            AUDIT, receipt, tree.verifier_key(), self.head_of("election"),
            {"24-29": [h.hex() for h in self.trees["election"].consistency(24, 29)]})
        self.assertTrue(good["ok"], good)


    def test_a_place_created_event_names_its_ballot_key(self):
        """describeEvent reads a place-created event (FORMAT.md §11.1) as the booth needs it: the place and, for an
        anonymous place (flag bit 1), its ballot key, and for one that writes its ballots in batches (flag bit 4,
        §11.31) the batch rule; bytes that do not decode as one are not described."""
        def text(value):
            return struct.pack(">I", len(value)) + value.encode()

        def place(flags=None, key=b"", batches=(0, 0)):
            body = struct.pack(">HI", 0x0101, 7) + text("Board") + text("the board") + struct.pack(">4qI", 1, 2, 3, 4, 0)
            if flags is not None:
                body += struct.pack(">I", flags)
            if flags is not None and flags & 2:
                body += struct.pack(">I", len(key)) + key
            if flags is not None and flags & 16:
                body += struct.pack(">QI", *batches)
            return list(body)

        describe = """
        const [bytes, done] = arguments;
        import('/audit.js').then((audit) => {
            const event = audit.describeEvent(Uint8Array.from(bytes));
            done(event && {kind: event.kind, place: event.place, key: event.ballotKey && Array.from(event.ballotKey),
                           batches: event.batches});
        }).catch((error) => done({error: String(error)}));
        """
        key = b"\x30\x82" + bytes(range(40))
        cases = [
            (place(), {"kind": "place_created", "place": 7, "key": None, "batches": None}),
            (place(1), {"kind": "place_created", "place": 7, "key": None, "batches": None}),
            (place(3, key), {"kind": "place_created", "place": 7, "key": list(key), "batches": None}),
            (place(18, key, (30_000, 5)),
             {"kind": "place_created", "place": 7, "key": list(key), "batches": {"intervalSeconds": 30, "size": 5}}),
            (place(18, key, (0, 5)), {"kind": "place_created", "place": 7, "key": list(key), "batches": {"size": 5}}),
            (place(18, key, (600_000, 0)),
             {"kind": "place_created", "place": 7, "key": list(key), "batches": {"intervalSeconds": 600}}),
            (place(18, key, (30_000, 5))[:-1], None),
            (place(2, key)[:-1], None),
            (place(2, key) + [0], None),
            (place()[:-3], None),
        ]
        for bytes_, expected in cases:
            with self.subTest(length=len(bytes_)):
                self.assertEqual(self.driver.execute_async_script(describe, bytes_), expected)


if __name__ == "__main__":
    unittest.main()
