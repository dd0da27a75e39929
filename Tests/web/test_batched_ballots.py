"""An anonymous place that writes its ballots in batches (an interval of 30 s and a size of 2, set in the console's
new-place form), in headless Chromium against a real `vote serve`: two voters, each in a browser of their own (a credential is kept in the browser's
storage), cast in the booth; the server holds each ballot and answers 202, and the booth says so: held with others,
written together in an order no one can predict, at the local time the batch is due, keep the page open or come
back. The second voter leaves the held page and comes back to the booth, which finds the held ballot by the
credential kept on the device. Once the batch is written both booths, polling the receipt route, show the receipt as
an immediate cast does; the event feed holds both ballots in one block, and `vote verify` accepts the ledger. A ballot
held by a server that then crashes is cast again by the booth, which says so.

The server's clock is stepped into voting (VOTE_TEST_CLOCK_OFFSET_MS); each page's `Date.now` is stepped with it, and
past the booth's random wait before casting. The held page's screenshot goes to $WEB_SCREENSHOTS (default: a new
temporary directory, printed) as booth-batch-held-1280.png."""

import json
import subprocess
import time
import unittest
import urllib.request

from selenium.webdriver.common.by import By

from support import MINUTE, VOTING, BrowserLedgerTest, Server, call, chromium, iso, this_minute

INTERVAL = 30  # seconds
# How long the booth may take, at most, to show the receipt after the second ballot is held: the rest of the
# interval, a second one if the first voter's interval ended before the second ballot arrived, and the booth's polls
# (every 3 s after the due time), on a loaded machine.
RECEIPT_DEADLINE = 4 * INTERVAL + 60


def events(base):
    """Every event the public feed gives, as JSON lines parsed."""
    with urllib.request.urlopen(f"{base}/api/v1/events?from=0&limit=10000") as response:
        return [json.loads(line) for line in response.read().decode().splitlines() if line.strip()]


def ballots(base):
    """The anonymous ballots on the ledger (events that carry a credential)."""
    return [e for e in events(base) if "credential" in e["event"]]


class BatchedBallotsTest(BrowserLedgerTest):
    ledger_name = "Union"

    def wait_for(self, what, check, seen, timeout=60):
        """Waits up to `timeout` s for `check()` and returns what it gave; on time out fails saying what was awaited
        and what `seen()` last showed."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if result := check():
                return result
            time.sleep(0.25)
        self.fail(f"waited {timeout} s for {what}; last saw: {seen()!r}")

    @staticmethod
    def page(d):
        """What a browser shows: its route and the text of main (for failures)."""
        return d.execute_script(
            "const m = document.getElementById('main'); return `${m.dataset.route}: ${m.innerText.slice(0, 600)}`")

    @staticmethod
    def shift_clock(d, ms):
        """The page's Date.now `ms` ahead of the real clock (where the served clock stands)."""
        d.execute_script("if (!window.realNow) window.realNow = Date.now;"
                         "const shift = arguments[0]; Date.now = () => window.realNow() + shift;", ms)

    def open_booth(self, d, code=None):
        route = f"#/booth/1?t={code}" if code else "#/booth/1"
        d.get(f"{self.server.url}/{route}")
        self.wait_for("the booth", lambda: d.execute_script(
            "return document.getElementById('main').dataset.route") == "#/booth/1", lambda: self.page(d))
        self.shift_clock(d, VOTING)

    def cast(self, d, code, candidate):
        """A voter casts in the booth from the letter's link, through the credential and the random wait (skipped
        by stepping the page's clock past it), until the booth answers: the held page or the receipt."""
        self.open_booth(d, code)
        self.wait_for("the candidates", lambda: d.find_elements(By.ID, "token"), lambda: self.page(d))
        d.find_element(By.XPATH, f"//label[contains(@class,'choice')][.//strong[text()='{candidate}']]").click()
        d.find_element(By.CSS_SELECTOR, "main form button[type=submit]").click()
        self.wait_for("the confirmation", lambda: d.find_elements(
            By.XPATH, "//button[text()='Get my ballot credential and vote']"), lambda: self.page(d))
        d.find_element(By.XPATH, "//button[text()='Get my ballot credential and vote']").click()
        self.wait_for("the random wait", lambda: d.find_elements(By.ID, "cast-countdown"), lambda: self.page(d))
        self.shift_clock(d, VOTING + 31_000)
        self.wait_for("the cast's answer", lambda: d.find_elements(By.ID, "held-status")
                      or d.find_elements(By.ID, "receipt-proves"), lambda: self.page(d))

    def kept(self, d):
        """The credential kept in the browser's storage, or None."""
        text = d.execute_script("return localStorage.getItem('voteledger.credential.1')")
        return json.loads(text) if text else None

    def receipt(self, d):
        """The receipt page, once the booth has it (it polls the receipt route after the batch is due)."""
        self.wait_for("the receipt", lambda: d.find_elements(By.ID, "receipt-proves"), lambda: self.page(d),
                      timeout=RECEIPT_DEADLINE)
        return {k: d.find_element(By.ID, f"event-{k}").text for k in ("hash", "height", "index")}

    def test_batched_ballots_in_the_browser(self):
        d = self.driver
        now = this_minute()
        base = self.serve(0)
        admin = self.admin_token()
        # The console offers the batch rule once the ballot is anonymous.
        self.sign_in(admin)
        self.type_into("place-name", "Union executive")
        self.fill_windows(now)
        self.assertFalse(d.find_element(By.ID, "batch-rule").is_displayed(), "a batch rule offered for token ballots")
        d.find_element(By.ID, "anonymous-ballots").click()
        self.assertTrue(d.find_element(By.ID, "batch-rule").is_displayed(), "no batch rule for anonymous ballots")
        self.type_into("batch-every", str(INTERVAL))
        self.type_into("batch-size", "2")
        d.find_element(By.CSS_SELECTOR, "#create-place button[type=submit]").click()
        self.shows("#console-outcome", "Created place 1")
        self.assertFalse(d.find_element(By.ID, "batch-rule").is_displayed(), "the batch rule stayed after the form's reset")
        for name in ("Ahn", "Baek"):
            self.assertEqual(call(f"{base}/api/v1/places/1/candidates", {"name": name}, admin)[0], 201)
        status, answer = call(f"{base}/api/v1/places/1/voters", token=admin, csv="member-1\nmember-2\n")
        self.assertEqual(status, 201, answer)
        codes = [row["token"] for row in answer["tokens"]]
        self.assertEqual(call(f"{base}/api/v1/places/1")[1]["batches"], {"interval_seconds": INTERVAL, "size": 2})

        base = self.serve(VOTING)

        # Voter 1: held, and the page says so, with the batch's due time in this browser's time zone.
        self.cast(d, codes[0], "Baek")
        self.assertEqual(d.find_elements(By.ID, "receipt-proves"), [], "a ballot of a batched place was not held")
        self.assertEqual(d.find_element(By.CSS_SELECTOR, "main h1").text, "Your ballot is held with others")
        self.assertIn("in an order no one can predict", d.find_element(By.ID, "held-status").text)
        self.assertIn("Keep this page open", d.find_element(By.ID, "held-keep").text)
        self.assertIn("come back", d.find_element(By.ID, "held-keep").text)
        self.assertEqual(d.find_element(By.ID, "receipt-candidate").text, "Baek")
        first = self.kept(d)
        self.assertIsNotNone(first, "the credential left the device before its receipt")
        baek = next(c["candidate"] for c in call(f"{base}/api/v1/places/1/candidates")[1] if c["name"] == "Baek")
        self.assertEqual(first["held"], {"candidate": baek})
        status, held = call(f"{base}/api/v1/places/1/ballots/receipt", {"credential": first["credential"]})
        self.assertEqual((status, held["held"]), (202, True), held)
        self.assertEqual(held["batches"], {"interval_seconds": INTERVAL, "size": 2})
        due_text = d.execute_async_script(
            "import('/app.js').then((m) => arguments[1](m.localTime(arguments[0], { seconds: true })));", held["batch_due"])
        self.assertEqual(d.find_element(By.ID, "batch-due").text,
                         f"Your ballot will be written at {due_text}, or later if fewer than 2 ballots are held by "
                         "then; at the latest, just before voting ends.")
        self.assertEqual(ballots(base), [], "a held ballot was written before its batch")
        self.snap("booth-batch-held", widths=(1280,))

        # Voter 2, in a browser of their own: held too; they leave and come back, and the booth finds the ballot.
        d2 = chromium(1280, 900, "en-US")
        self.addCleanup(d2.quit)
        self.cast(d2, codes[1], "Ahn")
        self.assertIsNotNone(self.kept(d2))
        d2.get(f"{self.server.url}/#/")
        self.open_booth(d2)
        self.wait_for("the held page or the receipt again", lambda: d2.find_elements(By.ID, "held-status")
                      or d2.find_elements(By.ID, "receipt-proves"), lambda: self.page(d2))
        self.assertEqual(d2.find_elements(By.ID, "credential-kept"), [], "the booth asked to cast a held ballot again")
        self.assertEqual(d2.find_element(By.ID, "receipt-candidate").text, "Ahn")

        # The batch is written: both booths show their receipts, as an immediate cast does.
        one, two = self.receipt(d), self.receipt(d2)
        self.assertEqual(d.find_element(By.ID, "receipt-candidate").text, "Baek")
        self.assertEqual(d2.find_element(By.ID, "receipt-candidate").text, "Ahn")
        self.assertIn("Who cast it", d.find_element(By.ID, "receipt-not-proves").text)
        self.assertEqual(d.find_elements(By.ID, "booth-recast"), [])
        self.assertNotEqual(one["hash"], two["hash"])
        self.assertEqual(one["height"], two["height"], "the two ballots are in different blocks")
        self.assertIsNone(self.kept(d), "the credential stayed on the device after its receipt")
        self.assertIsNone(self.kept(d2), "the credential stayed on the device after its receipt")

        # The ledger: both ballots in one block, and nothing else in it.
        cast = ballots(base)
        self.assertEqual(len(cast), 2, cast)
        heights = {e["height"] for e in cast}
        self.assertEqual(heights, {int(one["height"])}, cast)
        block = [e for e in events(base) if e["height"] in heights]
        self.assertEqual(len(block), 2, block)
        self.assertEqual(sorted(e["hash"] for e in cast), sorted((one["hash"], two["hash"])))
        tally = call(f"{base}/api/v1/places/1/tally")[1]
        self.assertEqual([row["votes"] for row in tally["tally"]], [1, 1])
        self.check_browser_log()

        self.server.stop()
        self.assertEqual(self.server.exit_status, 0)
        self.server = None
        verified = subprocess.run([self.vote, "verify", "--ledger", self.ledger], capture_output=True, text=True)
        self.assertEqual(verified.returncode, 0, verified.stderr)

    def restart(self, kill):
        """`vote serve` again on the same address (the booth's page stays where it is), after a crash (`kill`: SIGKILL,
        which loses the held ballots) or a graceful stop (which writes them)."""
        address = self.server.url.removeprefix("http://")
        if kill:
            self.server.process.kill()
            self.server.process.wait(timeout=60)
            self.server.process.stdout.close()
        else:
            self.server.stop()
            self.assertEqual(self.server.exit_status, 0)
        self.server = None
        # The last --listen given is the one that counts: the address the page was served from.
        self.server = Server(self.vote, self.ledger, self.token_file, VOTING, ("--listen", address))
        self.assertEqual(self.server.url, f"http://{address}")

    def test_a_held_ballot_lost_by_a_crash_is_cast_again(self):
        """A server that crashes loses the ballots it held: the booth, asking for the receipt, is answered 404 and
        casts the same credential and choice again, and says so; a graceful stop then writes what is held, and the
        booth shows the receipt (with what happened)."""
        d = self.driver
        now = this_minute()
        base = self.serve(0)
        admin = self.admin_token()
        status, created = call(f"{base}/api/v1/places", {
            "name": "Union executive", "ballot": "anonymous",
            "registration": {"start": iso(now - MINUTE), "end": iso(now + 60 * MINUTE)},
            "voting": {"start": iso(now + 60 * MINUTE), "end": iso(now + 120 * MINUTE)},
            "batches": {"size": 5},
        }, admin)
        self.assertEqual(status, 201, created)
        for name in ("Ahn", "Baek"):
            self.assertEqual(call(f"{base}/api/v1/places/1/candidates", {"name": name}, admin)[0], 201)
        status, answer = call(f"{base}/api/v1/places/1/voters", token=admin, csv="member-1\n")
        self.assertEqual(status, 201, answer)
        code = answer["tokens"][0]["token"]
        self.serve(VOTING)

        self.cast(d, code, "Ahn")
        self.assertIn("once enough ballots are held (5 at a time)", d.find_element(By.ID, "batch-due").text)
        kept = self.kept(d)
        self.restart(kill=True)
        base = self.server.url
        self.assertEqual(call(f"{base}/api/v1/places/1/ballots/receipt", {"credential": kept["credential"]})[0], 404)
        # The booth asks every 10 s for a batch of size alone: it finds the ballot gone, and casts it again.
        self.wait_for("the ballot cast again", lambda: d.find_elements(By.ID, "booth-recast"), lambda: self.page(d),
                      timeout=90)
        self.assertIn("cast the same ballot again", d.find_element(By.ID, "booth-recast").text)
        self.assertEqual(d.find_element(By.CSS_SELECTOR, "main h1").text, "Your ballot is held with others")
        status, held = call(f"{base}/api/v1/places/1/ballots/receipt", {"credential": kept["credential"]})
        self.assertEqual(status, 202, held)
        self.assertEqual(ballots(base), [])

        # A graceful stop writes what it holds; the booth then gets its receipt.
        self.restart(kill=False)
        base = self.server.url
        self.assertEqual(len(ballots(base)), 1)
        self.receipt(d)
        self.assertEqual(d.find_element(By.ID, "receipt-candidate").text, "Ahn")
        self.assertIn("cast the same ballot again", d.find_element(By.ID, "booth-recast").text)
        self.assertIsNone(self.kept(d))
        self.server.stop()
        self.assertEqual(self.server.exit_status, 0)
        self.server = None
        verified = subprocess.run([self.vote, "verify", "--ledger", self.ledger], capture_output=True, text=True)
        self.assertEqual(verified.returncode, 0, verified.stderr)


if __name__ == "__main__":
    unittest.main()
