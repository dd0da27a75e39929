"""An anonymous place (RFC 9474 blind-signed ballot credentials) in headless Chromium against a real `vote serve`:
the authority creates it in the console; a voter opens the booth from the link in the letter, confirms, and the
page blinds a fresh credential, has it signed, unblinds and checks it, offers to save it, waits a random 5 to 30
seconds (saying why) and casts it, then shows a receipt that says what it proves and what it does not; a second
voter leaves during the wait and, coming back, confirms and casts the credential kept on the device; a used code is
refused before the confirmation; the saved credential file verifies under the place's key with Python's
`cryptography` and cannot vote twice; a hostile server (a proxy in front of the real one) that hands the booth a
ballot key of its own is refused before the code is sent and before a ballot is cast, nothing spent. `vote verify`
accepts the ledger at the end.

Screenshots of the waiting step and of the receipt page go to $WEB_SCREENSHOTS (default: a new temporary
directory, printed)."""

import base64
import glob
import hashlib
import http.server
import json
import os
import subprocess
import threading
import time
import unittest
import urllib.error
import urllib.request

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from support import BrowserLedgerTest, call

MINUTE = 60_000


def b64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class HostileProxy:
    """A server that plays the real one (every request forwarded to `upstream`, the app's files included) but hands
    out `ballot_key` (base64url DER) as place 1's key; `seen` lists every request as "METHOD PATH"."""

    def __init__(self, upstream, ballot_key):
        self.seen = []
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def forward(self):
                proxy.seen.append(f"{self.command} {self.path}")
                length = int(self.headers.get("Content-Length") or 0)
                data = self.rfile.read(length) if length else None
                headers = {"Content-Type": self.headers["Content-Type"]} if self.headers["Content-Type"] else {}
                request = urllib.request.Request(upstream + self.path, data=data, headers=headers, method=self.command)
                try:
                    with urllib.request.urlopen(request) as response:
                        status, kind, body = response.status, response.headers["Content-Type"], response.read()
                except urllib.error.HTTPError as error:
                    status, kind, body = error.code, error.headers["Content-Type"], error.read()
                if self.command == "GET" and self.path == "/api/v1/places/1":
                    place = json.loads(body)
                    place["ballot_key"] = ballot_key
                    body = json.dumps(place).encode()
                self.send_response(status)
                self.send_header("Content-Type", kind or "application/octet-stream")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = forward

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


class AnonymousBoothTest(BrowserLedgerTest):
    ledger_name = "Union"

    def choose_and_confirm(self, candidate):
        self.driver.find_element(
            By.XPATH, f"//label[contains(@class,'choice')][.//strong[text()='{candidate}']]").click()
        self.driver.find_element(By.CSS_SELECTOR, "main form button[type=submit]").click()

    def get_credential(self, code, candidate):
        """The booth from the letter's link to the waiting step (the credential issued and kept)."""
        self.open(f"#/booth/1?t={code}", shown="#/booth/1")
        self.assertEqual(self.driver.find_element(By.ID, "token").get_attribute("value"), code)
        self.assertNotIn(code, self.driver.current_url, "the code stayed in the address bar")
        self.choose_and_confirm(candidate)
        self.wait.until(lambda d: "Confirm" in self.now_text("main h1"))
        # The page's clock stands still until `resume()`, so the random wait cannot run out (and cast) while the
        # test looks at this step, however slow the machine.
        self.driver.execute_script("const now = Date.now(); window.realNow = Date.now; Date.now = () => now;")
        self.driver.find_element(By.XPATH, "//button[text()='Get my ballot credential and vote']").click()
        self.wait.until(lambda d: d.find_elements(By.ID, "cast-countdown"))
        seconds = int(self.now_text("#cast-countdown").split()[-2])
        self.assertTrue(5 <= seconds <= 30, seconds)

    def cast_kept(self, candidate):
        """The booth with a credential kept on the device: the choice, its confirmation, the cast."""
        self.driver.find_element(By.XPATH, f"//label[contains(@class,'choice')][.//strong[text()='{candidate}']]").click()
        self.driver.find_element(By.ID, "cast-kept").click()
        self.wait.until(lambda d: f"You are voting for {candidate}" in self.now_text("main .confirm"))
        self.driver.find_element(By.XPATH, "//button[text()='Cast my vote']").click()

    def resume(self):
        self.driver.execute_script("Date.now = window.realNow;")

    def receipt(self):
        """The anonymous receipt page, once the random wait is over (at most 30 s) and the ballot is cast."""
        WebDriverWait(self.driver, 120).until(lambda d: d.find_elements(By.ID, "receipt-proves"))
        return {k: self.now_text(f"#event-{k}") for k in ("hash", "height", "index")}

    def test_anonymous_election_in_the_browser(self):
        d = self.driver
        now = int(time.time() * 1000) // MINUTE * MINUTE
        base = self.serve(0)
        admin = self.admin_token()

        # The authority creates the place in the console, with anonymous ballots.
        self.open("#/authority")
        d.find_element(By.ID, "admin-token").send_keys(admin)
        d.find_element(By.XPATH, "//button[text()='Sign in']").click()
        self.wait.until(lambda d: d.find_elements(By.ID, "create-place"))
        d.find_element(By.ID, "place-name").send_keys("Union executive")
        for field, at in (("reg-start", now - MINUTE), ("reg-end", now + 60 * MINUTE), ("vote-start", now + 60 * MINUTE),
                          ("vote-end", now + 180 * MINUTE)):
            d.execute_script(
                "const d = new Date(arguments[1]); const p = (n) => String(n).padStart(2, '0');"
                "document.getElementById(arguments[0]).value ="
                " `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;",
                field, at)
        d.find_element(By.ID, "anonymous-ballots").click()
        d.find_element(By.CSS_SELECTOR, "#create-place button[type=submit]").click()
        self.wait.until(lambda d: "Created place 1" in self.now_text("#console-outcome"))
        for name in ("Ahn", "Baek"):
            self.assertEqual(call(f"{base}/api/v1/places/1/candidates", {"name": name}, admin)[0], 201)
        status, answer = call(f"{base}/api/v1/places/1/voters", token=admin, csv="member-1\nmember-2\nmember-3\n")
        self.assertEqual(status, 201)
        codes = [row["token"] for row in answer["tokens"]]
        place = call(f"{base}/api/v1/places/1")[1]
        self.assertEqual(place["ballot"], "anonymous")
        spki = b64url(place["ballot_key"])
        key = serialization.load_der_public_key(spki)
        self.assertGreaterEqual(key.key_size, 3072)

        # Voting opens.
        base = self.serve(61 * MINUTE)

        # Voter 1: the letter's link, a credential, saved, the wait, the ballot.
        self.get_credential(codes[0], "Baek")
        self.assertIn("so the server cannot match your credential to you by time", self.now_text("main"))
        self.assertIn("lost for good", self.now_text("#credential-warning"))
        before = set(glob.glob(os.path.join(self.downloads, "*.json")))
        d.find_element(By.ID, "save-credential").click()
        saved_path = self.wait.until(lambda _: next(iter(set(glob.glob(os.path.join(self.downloads, "*.json"))) - before), None))
        self.wait.until(lambda _: not glob.glob(os.path.join(self.downloads, "*.crdownload")) and os.path.getsize(saved_path))
        self.snap("booth-anonymous-credential", widths=(360,))
        self.resume()
        with open(saved_path) as file:
            saved = json.load(file)
        self.assertEqual(saved["place"], 1)
        self.assertEqual(saved["ballot_key_hash"], hashlib.sha256(spki).hexdigest())
        credential, signature = b64url(saved["credential"]), b64url(saved["signature"])
        self.assertEqual(len(credential), 64)
        # The booth's credential verifies with Python's `cryptography`, as the ledger's verifiers check it.
        key.verify(signature, credential, padding.PSS(mgf=padding.MGF1(hashes.SHA384()), salt_length=48), hashes.SHA384())
        self.assertNotIn(codes[0].replace("-", ""), json.dumps(saved))
        first = self.receipt()
        self.assertIn("does not show", self.now_text("main"))
        self.assertIn("Who cast it", self.now_text("#receipt-not-proves"))
        self.snap("booth-anonymous-receipt", widths=(360,))
        self.assertIsNone(d.execute_script("return localStorage.getItem('voteledger.credential.1')"),
                          "the credential stayed on the device after its vote")

        # Voter 2 leaves during the wait and comes back: the credential kept on the device is cast.
        self.get_credential(codes[1], "Ahn")
        self.assertIsNotNone(d.execute_script("return localStorage.getItem('voteledger.credential.1')"))
        self.open("#/")
        self.open("#/booth/1")
        self.wait.until(lambda d: d.find_elements(By.ID, "credential-kept"))
        self.assertEqual(d.find_elements(By.ID, "token"), [], "the code was asked for again")
        self.cast_kept("Ahn")
        second = self.receipt()
        self.assertNotEqual(first["hash"], second["hash"])
        self.assertEqual(self.now_text("#receipt-candidate"), "Ahn")

        # A hostile server hands the booth a ballot key of its own (it would recognise this voter's ballot): the
        # booth checks it against the place's creation on the ledger and refuses before sending the code, which
        # stays unused; a credential kept under that key is not cast either.
        own = rsa.generate_private_key(public_exponent=65537, key_size=3072).public_key()
        own_der = own.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
        hostile = HostileProxy(base, base64.urlsafe_b64encode(own_der).decode().rstrip("="))
        self.addCleanup(hostile.stop)
        d.get(f"{hostile.url}/#/booth/1?t={codes[2]}")
        self.wait.until(lambda d: d.find_elements(By.ID, "token"))
        self.choose_and_confirm("Ahn")
        self.wait.until(lambda d: "Confirm" in self.now_text("main h1"))
        d.find_element(By.XPATH, "//button[text()='Get my ballot credential and vote']").click()
        self.wait.until(lambda d: "not the one on the election's ledger" in self.now_text("#booth-error"))
        self.assertIn("GET /api/v1/places/1/created", hostile.seen)
        self.assertFalse([r for r in hostile.seen if r.startswith("POST /api/v1/places/1/credentials")], hostile.seen)
        self.assertFalse(call(f"{base}/api/v1/places/1/status", {"token": codes[2]})[1]["credential_issued"])
        misled = dict(saved, ballot_key_hash=hashlib.sha256(own_der).hexdigest())
        d.execute_script("localStorage.setItem('voteledger.credential.1', arguments[0])", json.dumps(misled))
        d.get(f"{hostile.url}/#/")
        d.get(f"{hostile.url}/#/booth/1")
        self.wait.until(lambda d: d.find_elements(By.ID, "credential-kept"))
        self.cast_kept("Ahn")
        self.wait.until(lambda d: "not the one on the election's ledger" in self.now_text("#booth-error"))
        self.assertFalse([r for r in hostile.seen if r.startswith("POST /api/v1/places/1/ballots")], hostile.seen)

        # Voter 1's code again: refused on the first step, before the confirmation.
        self.open(f"#/booth/1?t={codes[0]}", shown="#/booth/1")
        self.choose_and_confirm("Ahn")
        self.wait.until(lambda d: d.find_elements(By.ID, "booth-error"))
        self.assertIn("already been issued", self.now_text("#booth-error"))
        # What is true: the code cannot be re-issued, so a lost credential is not replaced; the saved file still votes.
        self.assertIn("cannot be re-issued", self.now_text("#booth-error"))
        self.assertIn("open it below", self.now_text("#booth-error"))
        self.assertNotIn("new code", self.now_text("#booth-error"))

        # The saved credential, opened in the booth, is refused a second vote and is then forgotten.
        self.open("#/booth/1")
        d.find_element(By.ID, "credential-file").send_keys(saved_path)
        self.wait.until(lambda d: d.find_elements(By.ID, "cast-kept"))
        self.cast_kept("Ahn")
        self.wait.until(lambda d: "already voted" in self.now_text("#booth-error"))

        tally = call(f"{base}/api/v1/places/1/tally")[1]
        self.assertEqual([row["votes"] for row in tally["tally"]], [1, 1])
        self.assertEqual((tally["turnout"]["issued"], tally["turnout"]["voted"]), (2, 2))
        self.server.stop()
        self.assertEqual(self.server.exit_status, 0)
        self.server = None
        verified = subprocess.run([self.vote, "verify", "--ledger", self.ledger], capture_output=True, text=True)
        self.assertEqual(verified.returncode, 0, verified.stderr)


if __name__ == "__main__":
    unittest.main()
