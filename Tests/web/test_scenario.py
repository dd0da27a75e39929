"""The issue's scenario in headless Chromium against a real `vote serve` (which serves the web app at `/`):
the authority builds an election in the console and authorises voters from a CSV; three voters vote in the
booth (one with the keyboard only); a second vote with one token is refused; the results page shows the
counts and updates by itself when a fourth vote arrives; the audit page verifies a downloaded receipt and
rejects a flipped one and the same receipt against a rewritten ledger; the console certifies the results.

Time: the server runs at a DEBUG test clock (VOTE_TEST_CLOCK_OFFSET_MS), restarted at an offset inside each
window, so no step races a window. Screenshots of every page at 360 px and 1280 px go to $WEB_SCREENSHOTS
(default: a new temporary directory, printed)."""

import csv
import glob
import os
import shutil
import unittest

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select

from support import CLOSED, VOTING, BrowserLedgerTest, request, this_minute


class ScenarioTest(BrowserLedgerTest):
    ledger_name = "Student council"

    def new_download(self, pattern, before):
        def found(_):
            names = set(glob.glob(os.path.join(self.downloads, pattern))) - before
            return next(iter(names)) if names and not glob.glob(os.path.join(self.downloads, "*.crdownload")) else None
        return self.wait.until(found)

    def vote_in_booth(self, place, token, candidate_name, keyboard=False, refused=False):
        """Votes in the booth; `refused`: the token is turned down on the first step, before the confirmation."""
        self.open(f"#/booth/{place}")
        if not keyboard:
            self.type_into("token", token)
            label = self.driver.find_element(By.XPATH, f"//label[contains(@class,'choice')][.//strong[text()='{candidate_name}']]")
            label.click()
            self.driver.find_element(By.CSS_SELECTOR, "main form button[type=submit]").click()
            if refused:
                self.wait.until(lambda d: d.find_elements(By.ID, "booth-error"))
                self.assertNotIn("Confirm", self.now_text("main h1"))
                self.assertEqual(self.driver.find_element(By.ID, "token").get_attribute("value"), token)
                return
            self.wait.until(lambda d: "Confirm" in self.now_text("main h1"))
            self.assertIn(candidate_name, self.text("p.confirm"))
            self.driver.find_element(By.XPATH, "//button[text()='Cast my vote']").click()
            return
        # Keyboard only: Tab to the token field, type it, Tab to the radio group, arrows to the choice,
        # Enter to continue, Enter on the focused "Cast my vote" after tabbing to it.
        keys = ActionChains(self.driver)
        body = self.driver.find_element(By.TAG_NAME, "body")
        self.driver.execute_script("document.activeElement.blur()")
        for _ in range(20):
            keys.send_keys(Keys.TAB).perform()
            if self.driver.switch_to.active_element.get_attribute("id") == "token":
                break
        self.assertEqual(self.driver.switch_to.active_element.get_attribute("id"), "token", body)
        keys.send_keys(token.lower()).send_keys(Keys.TAB).perform()
        for _ in range(10):
            focused = self.driver.switch_to.active_element
            chosen = focused.find_element(By.XPATH, "following-sibling::span/strong").text
            if chosen == candidate_name:
                break
            keys.send_keys(Keys.ARROW_DOWN).perform()
        keys.send_keys(Keys.SPACE).send_keys(Keys.ENTER).perform()
        self.wait.until(lambda d: "Confirm" in self.now_text("main h1"))
        self.assertIn(candidate_name, self.text("p.confirm"))
        for _ in range(10):
            keys.send_keys(Keys.TAB).perform()
            if self.driver.switch_to.active_element.text == "Cast my vote":
                break
        keys.send_keys(Keys.ENTER).perform()

    def receipt_shown(self):
        self.wait.until(lambda d: "recorded" in self.now_text("main h1"))
        return {k: self.text(f"#event-{k}") for k in ("hash", "height", "index")}

    def audit(self, path, against_head=True):
        self.open("#/audit")
        self.wait.until(lambda d: d.find_element(By.ID, "key").get_attribute("value"))
        self.driver.find_element(By.ID, "receipt-file").send_keys(path)
        self.wait.until(lambda d: d.find_element(By.ID, "receipt").get_attribute("value").startswith("c2sp.org"))
        box = self.driver.find_element(By.ID, "against-head")
        if box.is_selected() != against_head:
            box.click()
        self.driver.find_element(By.XPATH, "//button[text()='Verify']").click()
        self.wait.until(lambda d: d.find_elements(By.ID, "audit-verdict"))
        checks = {li.get_attribute("data-check"): li.get_attribute("data-status")
                  for li in self.driver.find_elements(By.CSS_SELECTOR, "#audit-outcome li")}
        return self.text("#audit-verdict"), checks

    # MARK: the scenario

    def test_election_in_the_browser(self):
        d = self.driver
        now = this_minute()
        self.serve(0)
        admin = self.admin_token()

        # The authority builds the election in the console.
        # Times in the viewer's zone, with the zone shown: the browser is put in Seoul (GMT+9).
        d.execute_cdp_cmd("Emulation.setTimezoneOverride", {"timezoneId": "Asia/Seoul"})
        self.open("#/authority")
        self.snap("authority-sign-in")
        # A wrong admin token is refused at sign-in, not at the first action (which would lose the form).
        self.type_into("admin-token", "not-the-token")
        d.find_element(By.XPATH, "//button[text()='Sign in']").click()
        self.assertIn("was refused", self.text("#sign-in-error"))
        self.assertEqual(d.find_elements(By.ID, "create-place"), [])
        self.type_into("admin-token", admin)
        d.find_element(By.XPATH, "//button[text()='Sign in']").click()
        self.wait.until(EC.presence_of_element_located((By.ID, "create-place")))
        # The signed head's time, readable and with its zone (not `time 1795693429888`).
        self.wait.until(lambda d: "GMT+9" in self.now_text("#head-time"))
        self.type_into("place-name", "Student council 2026")
        self.type_into("place-description", "One vote per student; results certified after the close.")
        self.fill_windows(now)
        d.find_element(By.CSS_SELECTOR, "#create-place button[type=submit]").click()
        self.shows("#console-outcome", "Created place 1")
        for name, pledge in (("Kim Min-ji", "Longer library hours"), ("Lee Jun-ho", "Free printing"),
                             ("Park Seo-yeon", "A new student lounge")):
            self.type_into("candidate-name", name)
            self.type_into("candidate-pledge", pledge)
            d.find_element(By.CSS_SELECTOR, "#register-candidate button").click()
            self.wait.until(lambda d: "Registered candidate" in d.find_element(By.ID, "console-outcome").text
                            and d.find_element(By.ID, "candidate-name").get_attribute("value") == "")
        self.wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#withdraw-candidate option")) == 3)
        Select(d.find_element(By.ID, "withdraw-candidate")).select_by_value("3")
        d.find_element(By.CSS_SELECTOR, "#withdraw button").click()
        self.wait.until(lambda d: "Candidate 3 withdrew" in d.find_element(By.ID, "console-outcome").text)
        roll = os.path.join(self.work, "voters.csv")
        with open(roll, "w") as file:
            file.write("".join(f"+8210555500{n:02d}\n" for n in range(1, 7)))
        before = set(glob.glob(os.path.join(self.downloads, "*.csv")))
        d.find_element(By.ID, "voters-csv").send_keys(roll)
        d.find_element(By.CSS_SELECTOR, "#authorize-csv button").click()
        self.assertIn("0 lines were refused", self.shows("#console-outcome", "6 voters authorised"))
        with open(self.new_download("tokens-*.csv", before)) as file:
            rows = list(csv.DictReader(file))
        self.assertEqual(len(rows), 6)
        tokens = [row["token"].replace("-", "") for row in rows]
        self.assertTrue(all(len(token) == 33 for token in tokens))
        self.type_into("voter-identity", "student-2026-77")
        d.find_element(By.CSS_SELECTOR, "#authorize-one button").click()
        self.wait.until(lambda d: d.find_elements(By.ID, "issued-token"))
        issued = d.find_element(By.ID, "issued-token").text
        # A lost letter: the console re-issues the voter's token; the new one differs, the voter counts once.
        self.type_into("reissue-identity", "student-2026-77")
        d.find_element(By.CSS_SELECTOR, "#reissue-one button").click()
        self.wait.until(lambda d: d.find_elements(By.ID, "reissued-token"))
        reissued = d.find_element(By.ID, "reissued-token").text
        self.assertEqual(len(reissued.replace("-", "")), 33)
        self.assertNotEqual(reissued, issued)
        self.snap("authority")

        # Place 2 hides its counts until voting ends (the results embargo), with one voter.
        self.type_into("place-name", "Treasurer 2026")
        self.fill_windows(now)
        d.find_element(By.ID, "results-after-close").click()
        d.find_element(By.CSS_SELECTOR, "#create-place button[type=submit]").click()
        self.shows("#console-outcome", "Created place 2")
        self.wait.until(lambda d: Select(d.find_element(By.ID, "manage-place")).first_selected_option.get_attribute("value") == "2")
        self.type_into("candidate-name", "Choi Da-eun")
        d.find_element(By.CSS_SELECTOR, "#register-candidate button").click()
        self.shows("#console-outcome", "Registered candidate 1")
        self.type_into("voter-identity", "treasurer-voter-1")
        d.find_element(By.CSS_SELECTOR, "#authorize-one button").click()
        self.wait.until(lambda d: d.find_elements(By.ID, "issued-token") and d.find_element(By.ID, "issued-token").text != issued)
        embargo_token = d.find_element(By.ID, "issued-token").text.replace("-", "")

        self.open("#/")
        self.assertIn("Registration open", self.text("main"))
        self.snap("home")
        self.open("#/place/1")
        self.assertIn("withdrawn", self.text("main").lower())
        self.assertIn("Turnout: 0 of 7", self.text("main"))
        self.snap("place")
        self.open("#/booth/1")
        self.assertIn("not open yet", self.text("[role=alert]"))
        self.assertIn("Voting opens", self.text("[role=alert]"))
        self.assertIn("GMT+9", self.text("[role=alert]"))  # the viewer's zone, shown

        # The ledger as it stands before any vote: the start of the rewritten history, later.
        self.server.stop()
        self.server = None
        fork = os.path.join(self.work, "fork")
        shutil.copytree(self.ledger, fork)
        shutil.copytree(self.ledger + ".keys", fork + ".keys")

        # Voting: three voters in the booth, one of them with the keyboard only.
        self.serve(VOTING)
        self.open("#/")
        self.assertIn("Voting now", self.text("main"))
        self.open("#/booth/1")
        self.assertNotIn("Park Seo-yeon", self.text("main form"))  # withdrawn: not offered
        self.snap("booth")
        spaced = " ".join(tokens[0][i:i + 4] for i in range(0, 33, 4)).lower()
        self.vote_in_booth(1, spaced, "Kim Min-ji")
        first = self.receipt_shown()
        self.snap("booth-receipt")
        before = set(glob.glob(os.path.join(self.downloads, "*.tlog-proof")))
        d.find_element(By.ID, "download-receipt").click()
        receipt_path = self.new_download("*.tlog-proof", before)
        with open(receipt_path) as file:
            receipt = file.read()
        self.assertTrue(receipt.startswith("c2sp.org/tlog-proof@v1\n"))
        self.assertIn(f"index {first['index']}\n", receipt)

        self.vote_in_booth(1, tokens[1], "Lee Jun-ho")
        self.receipt_shown()
        dashed = "-".join(tokens[2][i:i + 4] for i in range(0, 33, 4))
        self.vote_in_booth(1, dashed, "Kim Min-ji", keyboard=True)
        self.receipt_shown()

        # A second vote with the first token, and a token no one issued, are refused in plain words.
        # Both are told on the first step (the status route), before "A vote cannot be changed".
        self.vote_in_booth(1, tokens[0], "Lee Jun-ho", refused=True)
        self.assertIn("already been used", self.text("#booth-error"))
        self.snap("booth-refused")
        self.vote_in_booth(1, "A" * 32, "Lee Jun-ho", refused=True)
        self.assertIn("not known", self.text("#booth-error"))
        self.snap("booth-token-check")
        self.open("#/booth/1")
        self.type_into("token", "not a token")
        d.find_element(By.CSS_SELECTOR, "main form button[type=submit]").click()
        self.assertIn("33 letters", self.text("#booth-error"))
        # A typo (two neighbours swapped) is told apart from an unknown token, by the check character.
        swapped = tokens[4][:10] + tokens[4][11] + tokens[4][10] + tokens[4][12:]
        if swapped == tokens[4]:
            swapped = tokens[4][:10] + ("B" if tokens[4][10] == "A" else "A") + tokens[4][11:]
        self.vote_in_booth(1, swapped, "Lee Jun-ho", refused=True)
        self.assertIn("typo", self.text("#booth-error"))
        self.snap("booth-mistyped")
        # A voting link: the token comes in the fragment, fills the field, and leaves the address bar.
        self.driver.get(self.server.url + f"/#/booth/1?t={tokens[4]}")
        self.wait.until(lambda d: d.execute_script("return document.getElementById('main').dataset.route") == "#/booth/1")
        self.assertEqual(d.find_element(By.ID, "token").get_attribute("value"), tokens[4])
        self.assertNotIn(tokens[4], d.execute_script("return location.href"))
        self.assertNotIn(tokens[4], d.execute_script("return document.getElementById('main').outerHTML.replace(document.getElementById('token').value, '')"))

        # Results: counts now, and an update without reloading when a fourth vote arrives.
        self.open("#/results/1")
        self.wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "td[data-votes='1']"))
        self.assertEqual(self.text("td[data-votes='1']"), "2")
        self.assertEqual(self.text("td[data-votes='2']"), "1")
        self.assertIn("So far", self.text("#results-state"))
        self.assertIn("3 of 7", self.text("#turnout"))
        self.assertEqual(len(d.find_elements(By.CSS_SELECTOR, "svg.chart g.row")), 3)
        self.snap("results-voting")
        d.execute_script("window.sameDocument = true")
        request(f"{self.server.url}/api/v1/places/1/votes", {"candidate": 2, "token": tokens[3]})
        self.wait.until(lambda d: self.now_text("td[data-votes='2']") == "2")
        self.assertIn("4 of 7", self.text("#turnout"))
        self.assertTrue(d.execute_script("return window.sameDocument === true"))  # updated without a reload
        # The page's percentages follow the README's rule, as the CLI's do: 5 of 16 (31.25 %) is 31.3 %.
        self.assertEqual(d.execute_async_script(
            "import('./app.js').then((app) => arguments[0](app.percentText(5, 16)))"), "31.3%")

        # The embargoed place: a vote is recorded, but its results page shows no count until voting ends.
        request(f"{self.server.url}/api/v1/places/2/votes", {"candidate": 1, "token": embargo_token})
        self.open("#/results/2")
        self.wait.until(lambda d: "hidden until voting ends" in self.now_text("#results-state"))
        self.assertIn("GMT+9", self.text("#results-state"))
        self.assertEqual(d.find_elements(By.CSS_SELECTOR, "td[data-votes]"), [])
        self.snap("results-embargoed")

        # Audit: the downloaded receipt verifies; one flipped proof byte does not.
        verdict, checks = self.audit(receipt_path)
        self.assertEqual(verdict, "The receipt is valid.")
        self.assertEqual(set(checks.values()), {"pass"}, checks)
        self.snap("audit-valid")
        lines = receipt.split("\n")
        proof_line = next(i for i, line in enumerate(lines) if line.startswith("index ")) + 1
        flipped_char = "B" if lines[proof_line][0] != "B" else "C"
        lines[proof_line] = flipped_char + lines[proof_line][1:]
        flipped = os.path.join(self.work, "flipped.tlog-proof")
        with open(flipped, "w") as file:
            file.write("\n".join(lines))
        verdict, checks = self.audit(flipped)
        self.assertEqual(checks["inclusion"], "fail", checks)
        self.assertEqual(checks["signature"], "pass", checks)
        self.assertIn("the receipt was altered", verdict)
        self.snap("audit-flipped")

        # The rewritten ledger: the authority's key continues the copy from before the votes differently
        # (the first voter's token now for Lee Jun-ho). The genuine receipt exposes it.
        self.server.stop()
        real = self.ledger
        self.ledger = fork
        self.serve(VOTING)
        for token in tokens[:5]:
            request(f"{self.server.url}/api/v1/places/1/votes", {"candidate": 2, "token": token})
        verdict, checks = self.audit(receipt_path)
        self.assertIn("The ledger was rewritten", verdict)
        self.assertEqual(checks["consistency"], "fail", checks)
        self.assertEqual((checks["signature"], checks["inclusion"], checks["head"]), ("pass", "pass", "pass"), checks)
        self.snap("audit-rewritten")
        self.server.stop()
        self.ledger = real

        # After the close: the console certifies; the results page says at which block.
        self.serve(CLOSED)
        self.open("#/results/2")  # voting has ended: the embargoed place's count is shown
        self.wait.until(lambda d: self.now_text("td[data-votes='1']") == "1")
        self.open("#/authority")
        self.type_into("admin-token", admin)
        self.driver.find_element(By.ID, "admin-token").send_keys(Keys.ENTER)
        self.wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#manage-place option"))
        certified = self.certify()
        height = certified.split("block ")[1].rstrip(".")
        self.open("#/results/1")
        self.wait.until(lambda d: "Certified" in self.now_text("#results-state"))
        self.assertEqual(self.text("#results-state"), f"Certified at block {height}")
        self.snap("results-certified")

        # Korean, switched from the header.
        Select(d.find_element(By.ID, "language")).select_by_value("ko")
        self.wait.until(lambda d: "확정" in self.now_text("#results-state"))
        self.snap("results-ko")
        self.assertEqual(d.execute_script("return document.documentElement.lang"), "ko")
        # The choice is remembered on reload.
        d.refresh()
        self.wait.until(lambda d: "확정" in self.now_text("#results-state"))
        self.assertEqual(d.execute_script("return document.documentElement.lang"), "ko")

        # Nothing the Content-Security-Policy refused, no script error.
        self.check_browser_log()

        # No token anywhere a browser keeps things.
        kept = d.execute_script(
            "return JSON.stringify([location.href, history.length, document.cookie,"
            " Object.keys(localStorage), Object.keys(sessionStorage)])")
        for token in tokens + [admin]:
            self.assertNotIn(token, kept)
            self.assertNotIn(token.lower(), kept)


if __name__ == "__main__":
    unittest.main()
