"""A ballot of questions made in the console, in headless Chromium against a real `vote serve`: the authority
loads a choose question (3 of 5) from a pasted questions file, after a paste that is not JSON and one with an
unknown threshold are refused, adds a 2/3 yes/no motion with a quorum of 1/4 and a 5-seat STV question in the
editor, sees a rule broken (more ticks than options) named and the place not sent, checks the preview (the
booth's own rendering of the ballot), sees the server's refusal of a bad window next to the form, and creates
the place with re-voting. Voters vote: one
by keyboard alone, one ranking by dragging on a phone, the rest through the API. After the close the results
page draws the STV count's stages (an SVG with a bar per option still in the count, per stage, and an accessible
name), and printing gives a clean sheet (no navigation, buttons or forms; the ledger head it was counted at),
which Chromium also prints to PDF. A second test authorises a weighted voter (120 shares) in the console and
finds members and weight on the results page and its print sheet.

Time: `vote serve` runs at a DEBUG test clock (VOTE_TEST_CLOCK_OFFSET_MS), restarted inside the voting window and
after it, as in test_questions. Screenshots (console-questions, booth-drag, results-rounds at 360 px and 1280 px,
results-print.png, console-weight at 360 px, results-weights at 1280 px) go to $WEB_SCREENSHOTS (default: a new
temporary directory, printed)."""

import base64
import json
import os
import time
import unittest
import urllib.request

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

from support import BrowserLedgerTest, CLOSED, MINUTE, VOTING, iso, request, this_minute

BOARD = {"title": "Board members", "description": "Elect three of the five nominees.", "method": "choose",
         "options": ["Ana", "Ben", "Chloe", "Dev", "Eun"], "blank": True, "min": 1, "max": 3, "seats": 3}
MOTION = {"title": "Amend the bylaws", "description": "Article 4: meetings may be held online.", "method": "yes-no",
          "options": [], "blank": False, "threshold": "2/3 of yes-and-no", "quorum": "1/4"}
COUNCIL = {"title": "Council", "description": "Five seats.", "method": "rank",
           "options": ["Ana", "Ben", "Chloe", "Dev", "Eun", "Fay", "Gil"], "blank": True, "seats": 5,
           "rule": "scottish-stv"}

# The ballots cast through the API (the booth casts two more), so that the STV count runs several stages.
OTHER_BALLOTS = ["1,2;yes;1>3>2", "2,3;yes;2>1", "1;yes;3>2", "3,4,5;yes;4>5", "2;no;5>4", "1,5;abstain;6>1",
                 "blank;yes;7>6", "1,2,3;yes;2>3"]


class QuestionsConsoleTest(BrowserLedgerTest):
    ledger_name = "Rowing club"

    def visible(self, selector):
        return self.driver.execute_script(
            "const e = document.querySelector(arguments[0]); return !!e && e.checkVisibility()", selector)

    def preview_legends(self):
        return [e.text for e in self.driver.find_elements(By.CSS_SELECTOR, "#questions-preview legend")]

    def problems(self):
        return self.now_text("#questions-problems")

    def test_console_questions_to_printed_results(self):
        d = self.driver
        now = this_minute()
        url = self.serve(0)
        admin = self.admin_token()

        # The console: sign in, a place that asks questions.
        self.sign_in(admin)
        self.type_into("place-name", "Annual general meeting")
        self.fill_windows(now)
        self.assertFalse(self.visible("#ballot-of-questions"))
        d.find_element(By.ID, "kind-questions").click()
        self.assertTrue(self.visible("#ballot-of-questions"))
        # An anonymous place asks questions too, but a credential casts once: the box turns re-voting off.
        self.assertTrue(self.visible("#anonymous-ballots"))
        d.find_element(By.ID, "anonymous-ballots").click()
        self.assertFalse(d.find_element(By.ID, "revoting").is_enabled())
        d.find_element(By.ID, "anonymous-ballots").click()
        self.assertTrue(d.find_element(By.ID, "revoting").is_enabled())

        # A paste that is not JSON is refused; a questions file with the first question is taken.
        d.find_element(By.CSS_SELECTOR, "#ballot-of-questions summary").click()
        self.type_into("questions-json", "{questions: nope")
        d.find_element(By.ID, "load-questions-json").click()
        self.shows("#questions-json-error", "This is not JSON")
        d.execute_script("document.getElementById('questions-json').value = arguments[0]",
                         json.dumps([{**MOTION, "threshold": "most of them"}]))
        d.find_element(By.ID, "load-questions-json").click()
        self.shows("#questions-json-error", "Question 1: its threshold is none of")
        d.execute_script("document.getElementById('questions-json').value = arguments[0]",
                         json.dumps({"questions": [BOARD]}))
        d.find_element(By.ID, "load-questions-json").click()
        self.until("the pasted question in the editor",
                   lambda: d.find_element(By.ID, "qe1-title").get_attribute("value") == "Board members",
                   self.preview_legends)
        self.assertEqual(self.preview_legends(), ["1. Board members"])
        d.find_element(By.CSS_SELECTOR, "#ballot-of-questions summary").click()  # closed again
        self.assertIn("Choose up to 3 options. The 3 options with the most votes are elected.", self.text("#q1-rule"))

        # A rule broken is named at once, and the place is not sent.
        self.type_into("qe1-max", "6")
        self.until("the broken rule named", lambda: "at most 6 ticks" in self.problems(), self.problems)
        self.assertIn("Question 1: at most 6 ticks, but there are only 5 options.", self.problems())
        d.find_element(By.XPATH, "//form[@id='create-place']//button[text()='Create']").click()
        self.shows("#create-place-error", "fix them")
        self.type_into("qe1-max", "3")
        self.until("no problem left", lambda: "No problem found" in self.problems(), self.problems)
        self.assertEqual(self.now_text("#create-place-error"), "")

        # The motion and the ranked question, in the editor (a yes/no question has no options to fill in). The
        # council's rule is left as the editor offers it: the place's questions, checked below, say it is Scottish STV.
        d.find_element(By.ID, "add-question").click()
        self.fill_question(2, MOTION)
        self.assertFalse(self.visible("#qe2-options"))
        d.find_element(By.ID, "add-question").click()
        self.type_into("qe3-title", "Club colour")
        d.find_element(By.ID, "add-question").click()
        self.fill_question(4, {k: v for k, v in COUNCIL.items() if k != "rule"})
        self.type_into("qe4-rank-seats", "7")
        self.until("the seats rule named", lambda: "Question 4: the seats must be" in self.problems(), self.problems)
        self.type_into("qe4-rank-seats", "5")
        # Reordered and removed: the unfinished third question goes, the council moves up, the focus follows.
        d.find_element(By.CSS_SELECTOR, ".question-editor[data-index='3'] [data-action='up']").click()
        self.assertEqual(self.preview_legends(), ["1. Board members", "2. Amend the bylaws", "3. Council", "4. Club colour"])
        self.assertEqual(self.focused(), "qe3-title")
        d.find_element(By.CSS_SELECTOR, ".question-editor[data-index='3'] [data-action='remove']").click()
        self.assertEqual(self.preview_legends(), ["1. Board members", "2. Amend the bylaws", "3. Council"])
        d.find_element(By.ID, "revoting").click()

        # The preview: the ballot as the booth renders it.
        self.until("no problem left", lambda: "No problem found" in self.problems(), self.problems)
        self.assertIn("at least 2/3 of those answering yes or no answer yes", self.text("#q2-rule"))
        self.assertIn("Quorum: at least 1/4", self.text("#q2-rule"))
        self.assertIn("5 seats are filled by single transferable vote", self.text("#q3-rule"))
        self.assertEqual(len(d.find_elements(By.CSS_SELECTOR, "#questions-preview #question-1 input[type=checkbox]")), 6)
        self.assertEqual(len(d.find_elements(By.CSS_SELECTOR, "#questions-preview #question-3 select")), 7)
        self.assertIn("only your last ballot counts", self.text("#questions-preview"))
        d.execute_script("window.scrollTo(0, 0)")
        self.snap("console-questions")

        # The server's refusal (registration ending before it starts) is shown next to the form.
        self.set_time("reg-end", now - 2 * MINUTE)
        d.find_element(By.XPATH, "//form[@id='create-place']//button[text()='Create']").click()
        self.shows("#create-place-error", "Refused: invalid windows: registration must start before it ends")
        self.set_time("reg-end", now + 60 * MINUTE)
        d.find_element(By.XPATH, "//form[@id='create-place']//button[text()='Create']").click()
        self.shows("#console-outcome", "Created place 1.")
        self.assertEqual(self.now_text("#create-place-error"), "")
        place = request(f"{url}/api/v1/places/1")
        self.assertEqual(place["questions"], [BOARD, MOTION, COUNCIL])
        self.assertTrue(place["revoting"])
        tokens = [request(f"{url}/api/v1/places/1/voters", {"voter": f"member-{n}"}, admin)["token"] for n in range(1, 11)]

        # Voting: the first voter by keyboard alone.
        self.serve(VOTING)
        self.open("#/booth/1")
        d.find_element(By.ID, "token").send_keys(tokens[0])
        self.assertIn("only your last ballot counts", self.text("#revoting-note"))
        self.press(Keys.TAB, Keys.SPACE, Keys.TAB, Keys.SPACE, Keys.TAB, Keys.SPACE)  # Ana, Ben, Chloe
        self.press(Keys.TAB, Keys.TAB, Keys.TAB, Keys.TAB, Keys.SPACE)  # past Dev, Eun, blank: yes
        self.assertEqual(self.focused(), "yes")
        self.press(Keys.TAB, Keys.ARROW_DOWN, Keys.TAB, Keys.ARROW_DOWN, Keys.ARROW_DOWN)  # Ana 1st, Ben 2nd
        self.assertEqual(self.focused(), "q3-o2")
        for _ in range(8):
            if self.focused() == "Continue":
                break
            self.press(Keys.TAB)
        self.press(Keys.ENTER)
        self.until("the confirmation", lambda: "Confirm" in self.now_text("main h1"), lambda: self.now_text("main"))
        self.assertEqual([dd.text for dd in d.find_elements(By.CSS_SELECTOR, "#confirm-answers dd")],
                         ["Ana, Ben, Chloe", "Yes", "1st: Ana, 2nd: Ben"])
        self.press(Keys.TAB, Keys.ENTER)  # from the heading to "Cast my vote"
        self.until("the receipt", lambda: "recorded" in self.now_text("main h1"), lambda: self.now_text("main"))

        # The second voter, on a phone, ranks by dragging: Gil above the line, then Ana above Gil.
        d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": 360, "height": 800, "deviceScaleFactor": 1, "mobile": True})
        self.open("#/booth/1")
        d.find_element(By.ID, "token").send_keys(tokens[1])
        d.find_element(By.XPATH, "//fieldset[@id='question-1']//label[span[text()='Dev']]").click()
        d.find_element(By.CSS_SELECTOR, "#question-2 input[value='no']").click()
        line = d.find_element(By.CSS_SELECTOR, "#question-3 .rank-line")
        d.execute_script("arguments[0].scrollIntoView({block: 'start'})", d.find_element(By.CSS_SELECTOR, "#question-3 .rank-list"))
        self.drag(self.grip(3, 7), self.box(line)["top"] - 4)
        self.until("Gil ranked 1st", lambda: self.rank_order(3)[:2] == ["Gil=1", "|"], lambda: self.rank_order(3))
        self.assertEqual(self.now_text("#question-3 .note"), "Gil moved to rank 1.")
        self.drag(self.grip(3, 1), self.box(self.grip(3, 7))["top"] + 2)
        self.until("Ana ranked 1st, Gil 2nd", lambda: self.rank_order(3)[:3] == ["Ana=1", "Gil=2", "|"],
                   lambda: self.rank_order(3))
        self.assertEqual(self.now_text("#question-3 .note"), "Ana moved to rank 1.")
        self.assertEqual(Select(d.find_element(By.ID, "q3-o7")).first_selected_option.text, "2nd")
        self.snap("booth-drag", widths=(360,))
        d.find_element(By.CSS_SELECTOR, "main form button[type=submit]").click()
        self.until("the confirmation", lambda: "Confirm" in self.now_text("main h1"), lambda: self.now_text("main"))
        self.assertEqual([dd.text for dd in d.find_elements(By.CSS_SELECTOR, "#confirm-answers dd")],
                         ["Dev", "No", "1st: Ana, 2nd: Gil"])
        d.find_element(By.XPATH, "//button[text()='Cast my vote']").click()
        self.until("the receipt", lambda: "recorded" in self.now_text("main h1"), lambda: self.now_text("main"))
        for token, answers in zip(tokens[2:], OTHER_BALLOTS):
            request(f"{self.server.url}/api/v1/places/1/votes", {"answers": answers, "token": token})

        # After the close: the stages of the STV count, drawn.
        self.serve(CLOSED)
        self.open("#/results/1")
        self.until("the final counts", lambda: "final counts" in self.now_text("#results-state"),
                   lambda: self.now_text("main"))
        tally = request(f"{self.server.url}/api/v1/places/1/tally")
        count = tally["questions"][2]
        excluded = {s["option"]: s["number"] for s in count["stages"] if s["action"] == "excluded"}
        expected = [sum(1 for k in range(1, 8) if not excluded.get(k, 99) < s["number"]) + 1 for s in count["stages"]]
        self.assertGreater(len(expected), 2, count["stages"])
        picture = d.find_element(By.ID, "question-3-picture")
        self.assertEqual(picture.aria_role, "image")
        self.assertEqual(picture.accessible_name, "The stages of the count of Council, as bars")
        self.assertIn(f"{len(expected)} stages", d.execute_script("return document.querySelector('#question-3-picture desc').textContent"))
        shown = d.execute_script("""return [...document.querySelectorAll('#question-3-picture g.stage')]
            .map((g) => g.querySelectorAll('.bar-row').length)""")
        self.assertEqual(shown, expected)
        marked = d.execute_script("""return [...document.querySelectorAll('#question-3-picture g.stage:last-of-type .bar-row.elected')]
            .map((g) => [Number(g.dataset.option), g.textContent])""")
        self.assertEqual(sorted(k for k, _ in marked), sorted(count["elected"]))
        self.assertTrue(all(text.endswith("elected") for _, text in marked), marked)
        self.assertEqual(len(d.find_elements(By.CSS_SELECTOR, "#question-3-stages tbody tr")), len(expected))
        self.assertEqual(len(d.find_elements(By.CSS_SELECTOR, "#results-body svg")), 1)  # STV questions only
        self.snap("results-rounds")

        # The printed sheet: the figures and where they were counted, nothing to click.
        self.assertTrue(self.visible("#print-results"))
        d.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
        for hidden in ("header.top", "#print-results", "#question-3-picture"):
            self.assertFalse(self.visible(hidden), f"{hidden} is printed")
        self.assertEqual(d.execute_script("""return [...document.querySelectorAll('button, form, nav, input, select')]
            .filter((e) => e.checkVisibility()).map((e) => e.outerHTML.slice(0, 60))"""), [])
        sheet = self.text("main")
        for words in ("Results of Annual general meeting", "Ended", "Turnout: 10 of 10 voters (100%)", "Voting",
                      "Passed.", "The threshold is reached.", "Quorum met: 10 of 10", "Elected: Ana, Ben",
                      "Stages of the count", "vote verify", "vote tally --place 1"):
            self.assertIn(words, sheet)
        self.assertTrue(self.visible("#question-3-stages"))
        self.assertEqual(self.text("#counted-size"), str(tally["tree_size"]))
        with urllib.request.urlopen(f"{self.server.url}/api/v1/head") as response:
            head = response.read().decode().split("\n")
        self.assertEqual(head[1], str(tally["tree_size"]))
        self.assertEqual(self.text("#counted-root"), head[2])
        d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": 800, "height": 1100, "deviceScaleFactor": 1, "mobile": False})
        height = d.execute_script("return document.documentElement.scrollHeight")
        d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": 800, "height": min(height, 6000), "deviceScaleFactor": 1, "mobile": False})
        d.save_screenshot(os.path.join(self.shots, "results-print.png"))
        d.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        pdf = base64.b64decode(d.execute_cdp_cmd("Page.printToPDF", {"paperWidth": 8.27, "paperHeight": 11.69})["data"])
        self.assertTrue(pdf.startswith(b"%PDF-"), pdf[:16])
        with open(os.path.join(self.shots, "results-print.pdf"), "wb") as file:
            file.write(pdf)
        d.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})

        # Nothing the Content-Security-Policy refused, no script error.
        self.check_browser_log()

    def test_weighted_voter_from_console_to_results(self):
        """A shareholder's 120 shares: the console authorises a voter with a weight (a field shown only for a place
        that asks questions), the voter votes in the booth, and the results page and its print sheet give members
        and weight wherever they differ, the shares and the quorum by weight."""
        d = self.driver
        now = this_minute()
        url = self.serve(0)
        admin = self.admin_token()

        windows = {"registration": {"start": iso(now - MINUTE), "end": iso(now + 60 * MINUTE)},
                   "voting": {"start": iso(now + 60 * MINUTE), "end": iso(now + 120 * MINUTE)}}
        request(f"{url}/api/v1/places", {"name": "Shareholders", **windows, "questions": [BOARD, MOTION]}, admin)
        request(f"{url}/api/v1/places", {"name": "Class president", **windows}, admin)

        # The weight field and the CSV file's weight hint: for the place that asks questions only.
        self.sign_in(admin)
        self.until("the places in the console", lambda: len(d.find_elements(By.CSS_SELECTOR, "#manage-place option")) == 2,
                   lambda: self.now_text("main"))
        Select(d.find_element(By.ID, "manage-place")).select_by_value("2")
        self.assertFalse(self.visible("#voter-weight"))
        self.assertFalse(self.visible("#voters-csv-weights"))
        Select(d.find_element(By.ID, "manage-place")).select_by_value("1")
        self.assertTrue(self.visible("#voter-weight"))
        self.assertEqual(self.text("#voter-weight-help"), "Shares or units; every count adds weights.")
        self.assertIn("identity,weight, such as member-7,120", self.text("#voters-csv-weights"))

        # A weight the server refuses is told as the console's other refusals are; 120 is taken.
        self.type_into("voter-identity", "member-1")
        self.type_into("voter-weight", "2000000")
        d.find_element(By.XPATH, "//form[@id='authorize-one']//button[text()='Authorise']").click()
        self.shows("#console-outcome", "Refused: a weight must be a whole number from 1 to 1000000")
        self.type_into("voter-weight", "120")
        d.find_element(By.XPATH, "//form[@id='authorize-one']//button[text()='Authorise']").click()
        self.until("the token issued", lambda: d.find_elements(By.ID, "issued-token"), lambda: self.now_text("#console-outcome"))
        weighted_token = self.text("#issued-token")
        self.assertEqual(d.find_element(By.ID, "voter-weight").get_attribute("value"), "")  # the form is cleared
        self.snap("console-weight", widths=(360,))
        tokens = [request(f"{url}/api/v1/places/1/voters", {"voter": f"member-{n}"}, admin)["token"] for n in (2, 3)]
        turnout = request(f"{url}/api/v1/places/1/tally")["turnout"]
        self.assertEqual((turnout["authorized"], turnout["authorized_weight"]), (3, 122))

        # The weighted voter votes in the booth; one other through the API; the third does not vote.
        self.serve(61 * MINUTE)
        self.open("#/booth/1")
        d.find_element(By.ID, "token").send_keys(weighted_token)
        for option in ("Ana", "Ben"):
            d.find_element(By.XPATH, f"//fieldset[@id='question-1']//label[span[text()='{option}']]").click()
        d.find_element(By.CSS_SELECTOR, "#question-2 input[value='yes']").click()
        d.find_element(By.CSS_SELECTOR, "main form button[type=submit]").click()
        self.until("the confirmation", lambda: "Confirm" in self.now_text("main h1"), lambda: self.now_text("main"))
        d.find_element(By.XPATH, "//button[text()='Cast my vote']").click()
        self.until("the receipt", lambda: "recorded" in self.now_text("main h1"), lambda: self.now_text("main"))
        request(f"{self.server.url}/api/v1/places/1/votes", {"answers": "3;no", "token": tokens[0]})

        # The results: members and weight side by side, the shares and the quorum by weight.
        self.serve(121 * MINUTE)
        self.open("#/results/1")
        self.until("the final counts", lambda: "final counts" in self.now_text("#results-state"),
                   lambda: self.now_text("main"))
        self.assertEqual(self.text("#turnout"), "Turnout: 2 of 3 members · weight 121 of 122 (99.2%)")

        def cells(n):
            return [c.text for c in d.find_elements(By.CSS_SELECTOR, f"#question-{n}-table tbody td")]

        self.assertEqual(cells(1), ["1 member · weight 120", "99.2%", "1 member · weight 120", "99.2%",
                                    "1 member · weight 1", "0.8%", "0 members · weight 0", "0%", "0 members · weight 0", "0%"])
        self.assertEqual(cells(2)[:4], ["1 member · weight 120", "99.2%", "1 member · weight 1", "0.8%"])
        self.assertEqual(self.text("#question-1-table th:last-child"), "Share of weight")
        self.assertIn("Ballots: 2 members · weight 121, of which left blank: 0 members · weight 0.", self.text("#result-1"))
        self.assertEqual(self.text("#question-1-elected"), "Elected: Ana, Ben, Chloe")
        self.assertIn("Quorum met: the ballots cast weigh 121 of the 122 authorised (at least 1/4 needed).",
                      self.text("#question-2-verdict"))
        self.snap("results-weights", widths=(1280,))
        d.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
        sheet = self.text("main")
        d.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})
        for words in ("Turnout: 2 of 3 members · weight 121 of 122 (99.2%)", "1 member · weight 120", "Passed."):
            self.assertIn(words, sheet)
        self.check_browser_log()


if __name__ == "__main__":
    unittest.main()
