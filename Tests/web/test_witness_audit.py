"""The audit page's witness check (Sources/VoteServer/Web/audit.js, in headless Chromium, WebCrypto Ed25519)
agrees with `vote audit --witness NAME=VKEY ... --quorum K`: a receipt of the vectors whose head carries
c2sp.org/tlog-cosignature lines made here (Python's `cryptography`, from the cosignature text alone) passes
with enough of them, fails with too few, and a line whose time or checkpoint was changed does not count."""

import base64
import hashlib
import os
import subprocess
import tempfile
import unittest

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from support import VECTORS, WEB, chromium, static_server, vote_binary

AUDIT = """
const [receipt, key, witnesses, quorum, done] = arguments;
import('/audit.js').then(async (audit) => {
    const report = await audit.auditReceipt({ receipt, key, witnesses, quorum });
    done({ok: report.ok, checks: report.checks});
}).catch((error) => done({error: String(error)}));
"""


class Witness:
    """A witness key from a fixed seed: its verifier key and the cosignature lines it makes."""

    def __init__(self, name, seed):
        self.name = name
        self.key = Ed25519PrivateKey.from_private_bytes(bytes([seed]) * 32)
        public = self.key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        self.key_id = hashlib.sha256(name.encode() + b"\n\x04" + public).digest()[:4]
        encoded = base64.b64encode(b"\x04" + public).decode()
        self.vkey = f"{name}+{self.key_id.hex()}+{encoded}"

    def line(self, text, time, signed_time=None):
        """The line on the checkpoint `text` at `time`; `signed_time` signs another time than the line says."""
        message = f"cosignature/v1\ntime {signed_time or time}\n".encode() + text.encode()
        payload = self.key_id + time.to_bytes(8, "big") + self.key.sign(message)
        return f"\u2014 {self.name} {base64.b64encode(payload).decode()}\n"


class WitnessAuditTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.vote = vote_binary()
        cls.driver = chromium()
        cls.server = static_server(WEB)
        cls.base = cls.server.__enter__()
        cls.driver.get(cls.base + "/")
        with open(os.path.join(VECTORS, "audit", "receipt.tlog-proof")) as file:
            cls.receipt = file.read()
        with open(os.path.join(VECTORS, "audit", "verifier.key")) as file:
            cls.key = file.read().strip()
        cls.witnesses = [Witness(f"witness.test/{name}", 50 + i)
                         for i, name in enumerate(["campaign", "observers", "auditor"])]

    @classmethod
    def tearDownClass(cls):
        cls.driver.quit()
        cls.server.__exit__(None, None, None)

    def checkpoint_text(self):
        note = self.receipt.split("\n\n", 1)[1]
        return note.split("\n\n", 1)[0] + "\n"

    def verdicts(self, receipt, quorum):
        """The page's report and `vote audit`'s exit status on `receipt`, offline, every witness named."""
        named = [f"{w.name}={w.vkey}" for w in self.witnesses]
        report = self.driver.execute_async_script(AUDIT, receipt, self.key, named, quorum)
        self.assertNotIn("error", report, report.get("error"))
        with tempfile.TemporaryDirectory() as work:
            path = os.path.join(work, "receipt.tlog-proof")
            with open(path, "w") as file:
                file.write(receipt)
            options = sum((["--witness", line] for line in named), [])
            done = subprocess.run([self.vote, "audit", path, "--key", self.key, "--quorum", str(quorum)] + options,
                                  capture_output=True, text=True, env={**os.environ, "VOTE_STATE_DIR": work})
        return report, done.returncode, done.stderr

    def test_the_page_counts_cosignatures_as_vote_audit_does(self):
        text = self.checkpoint_text()
        campaign, observers, auditor = self.witnesses
        two = self.receipt + campaign.line(text, 1_764_000_000) + auditor.line(text, 1_764_000_100)
        for quorum, ok in ((1, True), (2, True), (3, False)):
            with self.subTest(quorum=quorum):
                report, status, err = self.verdicts(two, quorum)
                checks = {c["id"]: c for c in report["checks"]}
                self.assertEqual(report["ok"], ok, report["checks"])
                self.assertEqual(checks["witnesses"]["status"], "pass" if ok else "fail")
                self.assertTrue(checks["witnesses"]["detail"].startswith("2/3"), checks["witnesses"])
                self.assertEqual(status, 0 if ok else 3, err)
        # A line whose time is not the time signed, or made over another checkpoint, does not count.
        other = text.replace("\ntime ", "\ntime 1")
        for name, line in (("retimed", observers.line(text, 1_764_000_000, signed_time=1_764_000_001)),
                           ("other checkpoint", observers.line(other, 1_764_000_000))):
            with self.subTest(name):
                report, status, err = self.verdicts(two + line, 3)
                self.assertFalse(report["ok"])
                self.assertEqual(status, 3, err)
                report, status, err = self.verdicts(two + line, 2)
                # A line of the witness's key that does not verify makes that witness count as not cosigned.
                self.assertTrue(report["ok"], report["checks"])
                self.assertEqual(status, 0, err)
        # No cosignature at all: fails at quorum 1 with the verdict the page shows.
        report, status, _ = self.verdicts(self.receipt, 1)
        self.assertFalse(report["ok"])
        self.assertEqual(status, 3)


if __name__ == "__main__":
    unittest.main()
