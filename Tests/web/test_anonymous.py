"""An anonymous place (RFC 9474 blind-signed ballot credentials) in headless Chromium against a real `vote serve`:
the authority creates it in the console; a voter opens the booth from the link in the letter, confirms, and the
page blinds a fresh credential, has it signed, unblinds and checks it, offers to save it, waits a random 5 to 30
seconds (saying why) and casts it, then shows a receipt that says what it proves and what it does not; a second
voter leaves during the wait and casts the credential kept on the device when coming back; a used code is
refused before the confirmation; the saved credential file verifies under the place's key with Python's
`cryptography` and cannot vote twice. `vote verify` accepts the ledger at the end.

Screenshots of the waiting step and of the receipt page go to $WEB_SCREENSHOTS (default: a new temporary
directory, printed)."""

import base64
import glob
import hashlib
import json
import os
import subprocess
import time
import unittest
import urllib.error
import urllib.request

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from support import BrowserLedgerTest

MINUTE = 60_000


def b64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def call(url, body=None, token=None, csv=None):
    """A JSON answer of the API (the status and the body), for set-up and checks beside the browser."""
    headers = {}
    data = None
    if body is not None:
        headers["Content-Type"] = "application/json"
        data = json.dumps(body).encode()
    if csv is not None:
        headers["Content-Type"] = "text/csv"
        data = csv.encode()
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, data=data, headers=headers, method="POST" if data else "GET")
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


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
        with open(self.token_file) as file:
            admin = file.read().strip()

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
        d.find_element(By.CSS_SELECTOR, "#create-place button").click()
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
        d.find_element(By.XPATH, "//label[contains(@class,'choice')][.//strong[text()='Ahn']]").click()
        d.find_element(By.ID, "cast-kept").click()
        second = self.receipt()
        self.assertNotEqual(first["hash"], second["hash"])

        # Voter 1's code again: refused on the first step, before the confirmation.
        self.open(f"#/booth/1?t={codes[0]}", shown="#/booth/1")
        self.choose_and_confirm("Ahn")
        self.wait.until(lambda d: d.find_elements(By.ID, "booth-error"))
        self.assertIn("already been issued", self.now_text("#booth-error"))

        # The saved credential, opened in the booth, is refused a second vote and is then forgotten.
        self.open("#/booth/1")
        d.find_element(By.ID, "credential-file").send_keys(saved_path)
        self.wait.until(lambda d: d.find_elements(By.ID, "cast-kept"))
        d.find_element(By.XPATH, "//label[contains(@class,'choice')][.//strong[text()='Ahn']]").click()
        d.find_element(By.ID, "cast-kept").click()
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
