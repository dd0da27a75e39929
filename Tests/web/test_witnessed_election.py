"""An election with three real witnesses (`vote witness serve`) and `vote serve --witness`: with one of them
down, a vote's receipt verifies on the audit page under quorum 2 against the head the server serves, and
fails under quorum 3 with the page's own verdict; the Python verifier agrees on both."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from support import chromium, vote_binary

HOUR = 3_600_000
# A loaded machine may leave a connection waiting: these tests are not about the servers' timeouts.
LONG_TIMEOUTS = ("--idle-timeout", "3600", "--head-timeout", "3600")
VERIFIER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Tools", "verify_ledger.py")


class Process:
    """A `vote` process that prints "listening on URL" first (no sleep: that line is the signal)."""

    def __init__(self, arguments, env=None):
        self.process = subprocess.Popen(arguments, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                        env={**os.environ, **(env or {})})
        line = self.process.stdout.readline()
        if not line.startswith("listening on "):
            raise AssertionError(f"{arguments[1]} exited ({self.process.wait()}) before listening: {line!r}")
        self.url = line.split()[-1]

    def stop(self):
        self.process.terminate()
        status = self.process.wait(timeout=60)
        self.process.stdout.close()
        return status


class WitnessedElectionTest(unittest.TestCase):
    def setUp(self):
        self.vote = vote_binary()
        self.work = tempfile.mkdtemp(prefix="vote-witnessed-")
        self.addCleanup(shutil.rmtree, self.work, True)
        self.ledger = os.path.join(self.work, "ledger")
        self.env = {"VOTE_STATE_DIR": os.path.join(self.work, "state")}
        self.run_vote("init", "--name", "Witnessed council", "--no-passphrase")
        self.run_vote("place", "create", "--name", "Board", "--registration", "+0s/+1h", "--voting", "+1h/+2h")
        self.run_vote("candidate", "register", "--place", "1", "--name", "Ada")
        self.token = self.run_vote("voter", "authorize", "--place", "1", "--voter", "member-1").strip()
        head = json.loads(self.run_vote("head", "--json"))
        self.log = f"{head['origin']}={head['verifier_key']}"

    def run_vote(self, *arguments, offset=0):
        done = subprocess.run([self.vote, *arguments, "--ledger", self.ledger], capture_output=True, text=True,
                              env={**os.environ, **self.env, "VOTE_TEST_CLOCK_OFFSET_MS": str(offset)})
        self.assertEqual(done.returncode, 0, done.stderr)
        return done.stdout

    def test_a_receipt_verifies_in_the_browser_under_quorum_two(self):
        witnesses, serve_options, named = [], [], []
        for name in ("campaign", "observers", "auditor"):
            key = os.path.join(self.work, f"{name}.key")
            vkey = subprocess.run([self.vote, "witness", "init", "--name", f"witness.test/{name}", "--key", key],
                                  capture_output=True, text=True, check=True).stdout.strip()
            witness = Process([self.vote, "witness", "serve", "--key", key, "--log", self.log, "--listen",
                               "127.0.0.1:0", "--state", os.path.join(self.work, f"state-{name}"), *LONG_TIMEOUTS])
            self.addCleanup(witness.stop)
            witnesses.append(witness)
            serve_options += ["--witness", f"witness.test/{name}={witness.url}={vkey}"]
            named.append(f"witness.test/{name}={vkey}")
        witnesses.pop().stop()  # the auditor's witness is down for the whole election
        server = Process([self.vote, "serve", "--listen", "127.0.0.1:0", "--ledger", self.ledger,
                          "--admin-token-file", os.path.join(self.work, "admin-token"), *LONG_TIMEOUTS, *serve_options,
                          "--witness-timeout", "600"],  # a witness up answers however loaded the machine is
                         env={**self.env, "VOTE_TEST_CLOCK_OFFSET_MS": str(HOUR + 1000)})
        self.addCleanup(server.stop)
        request = urllib.request.Request(f"{server.url}/api/v1/places/1/votes", method="POST",
                                         data=json.dumps({"candidate": 1, "token": self.token}).encode(),
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request) as response:
            receipt = json.load(response)["receipt"]
        receipt_path = os.path.join(self.work, "vote.tlog-proof")
        with open(receipt_path, "w") as file:
            file.write(receipt)
        # The two witnesses that are up cosign the current head in their own time: ask until they have (ten
        # minutes of asking without it is a failure, not a hung test).
        for _ in range(12_000):
            with urllib.request.urlopen(f"{server.url}/api/v1/head") as response:
                cosigned_by = response.headers.get("VoteLedger-Cosigned-By", "")
                head = response.read().decode()
            if cosigned_by == "witness.test/campaign, witness.test/observers":
                break
            time.sleep(0.05)
        else:
            self.fail(f"the head was never cosigned by the two witnesses up (last: {cosigned_by!r})")

        driver = chromium(1280, 900, "en-US")
        self.addCleanup(driver.quit)
        wait = WebDriverWait(driver, 30)
        for quorum, verdict in (("2", "The receipt is valid."), ("3", "too few of the witnesses")):
            with self.subTest(quorum=quorum):
                driver.get(server.url + "/#/audit")
                wait.until(lambda d: d.find_element(By.ID, "key").get_attribute("value"))
                driver.find_element(By.ID, "receipt-file").send_keys(receipt_path)
                wait.until(lambda d: d.find_element(By.ID, "receipt").get_attribute("value").startswith("c2sp.org"))
                # The route keeps the form between visits: start each check from empty fields.
                for field, text in (("witnesses", "\n".join(named)), ("quorum", quorum)):
                    driver.find_element(By.ID, field).clear()
                    driver.find_element(By.ID, field).send_keys(text)
                driver.find_element(By.XPATH, "//button[text()='Verify']").click()
                wait.until(lambda d: d.find_elements(By.ID, "audit-verdict"))
                self.assertIn(verdict, driver.find_element(By.ID, "audit-verdict").text)
                check = driver.find_element(By.CSS_SELECTOR, "#audit-outcome li[data-check=witnesses]")
                self.assertEqual(check.get_attribute("data-status"), "pass" if quorum == "2" else "fail")

        head_path = os.path.join(self.work, "head.txt")
        with open(head_path, "w") as file:
            file.write(head)
        options = sum((["--witness", line] for line in named), [])
        # The receipt carries the two cosignatures itself: it verifies alone as well as against the head.
        self.assertEqual(len(receipt.rstrip("\n").split("\n\n")[-1].split("\n")), 3, receipt)
        for against in (["--head", head_path], []):
            for quorum, status in (("2", 0), ("3", 3)):
                done = subprocess.run([sys.executable, VERIFIER, "--receipt", receipt_path, *against,
                                       "--ledger", self.ledger, "--quorum", quorum, *options],
                                      capture_output=True, text=True)
                self.assertEqual(done.returncode, status, done.stdout + done.stderr)
                done = subprocess.run([self.vote, "audit", receipt_path, *against, "--ledger", self.ledger,
                                       "--quorum", quorum, *options], capture_output=True, text=True,
                                      env={**os.environ, **self.env, "VOTE_TEST_CLOCK_OFFSET_MS": str(HOUR + 1000)})
                self.assertEqual(done.returncode, status, done.stdout + done.stderr)
        self.assertEqual(server.stop(), 0)


if __name__ == "__main__":
    unittest.main()
