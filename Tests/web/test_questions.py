"""A ballot of questions in headless Chromium against a real `vote serve`: the CLI creates a place asking a
choose question (3 of 5, blank allowed), a yes/no motion (2/3 of yes and no, a quorum of 1/4) and a ranked
question (instant runoff), and authorises six voters. Two vote in the booth (the second leaves a question
blank and ranks one option only); the booth refuses a fourth tick and a rank given twice before anything
is sent, and shows the server's refusal when a token is spent between the confirmation and the cast. After
the close the results page shows the elected options, "Passed" and the stages of the count, and the audit
page verifies a ballot's receipt and the place's creation, and names the answers.

Time: `vote serve` runs at a DEBUG test clock (VOTE_TEST_CLOCK_OFFSET_MS), restarted inside the voting window
and then after it, as in test_scenario. Screenshots of the booth, its refusals, the confirmation, the receipt
and the results at 360 px and 1280 px go to $WEB_SCREENSHOTS (default: a new temporary directory, printed)."""

import json
import os
import struct
import subprocess
import time
import unittest
import urllib.request

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from support import BrowserLedgerTest, iso

MINUTE = 60_000

QUESTIONS = {"questions": [
    {"title": "Board members", "description": "Elect three of the five nominees.", "method": "choose",
     "options": ["Ana", "Ben", "Chloe", "Dev", "Eun"], "blank": True, "min": 1, "max": 3, "seats": 3},
    {"title": "Amend the bylaws", "description": "Article 4: meetings may be held online.", "method": "yes-no",
     "options": [], "blank": False, "threshold": "2/3 of yes-and-no", "quorum": "1/4"},
    {"title": "Club colour", "description": "", "method": "rank", "options": ["Red", "Green", "Blue"],
     "blank": True, "seats": 1, "rule": "scottish-stv"},
]}


def post(url, body):
    """A JSON POST (a voter's client other than this browser)."""
    request = urllib.request.Request(url, data=json.dumps(body).encode(),
                                      headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(request) as response:
        return json.load(response)



class QuestionsTest(BrowserLedgerTest):
    ledger_name = "Rowing club"

    def cli(self, *arguments):
        return subprocess.run([self.vote, *arguments, "--ledger", self.ledger], check=True, capture_output=True,
                              text=True).stdout

    def booth_error(self):
        return self.wait.until(lambda d: self.now_text("#booth-error"))

    def fill_token(self, token):
        self.open("#/booth/1")
        field = self.driver.find_element(By.ID, "token")
        field.clear()
        field.send_keys(token)

    def tick(self, question, option_name):
        self.driver.find_element(
            By.XPATH, f"//fieldset[@id='question-{question}']//label[span[text()='{option_name}']]").click()

    def answer_yes_no(self, question, value):
        self.driver.find_element(By.CSS_SELECTOR, f"#question-{question} input[value='{value}']").click()

    def rank(self, question, option, rank_text):
        Select(self.driver.find_element(By.ID, f"q{question}-o{option}")).select_by_visible_text(rank_text)

    def go_on(self):
        self.driver.find_element(By.CSS_SELECTOR, "main form button[type=submit]").click()

    def confirmation(self):
        self.wait.until(lambda d: "Confirm" in self.now_text("main h1"))
        return [dd.text for dd in self.driver.find_elements(By.CSS_SELECTOR, "#confirm-answers dd")]

    def cast(self):
        self.driver.find_element(By.XPATH, "//button[text()='Cast my vote']").click()

    def focused_in(self, question):
        return self.driver.execute_script(
            "return document.activeElement.closest('fieldset')?.id", ) == f"question-{question}"

    def test_ballot_of_questions(self):
        d = self.driver
        now = int(time.time() * 1000) // MINUTE * MINUTE
        questions_file = os.path.join(self.work, "questions.json")
        with open(questions_file, "w") as file:
            json.dump(QUESTIONS, file)
        self.cli("place", "create", "--name", "Annual general meeting",
                 "--registration", f"{iso(now - MINUTE)}/{iso(now + 60 * MINUTE)}",
                 "--voting", f"{iso(now + 60 * MINUTE)}/{iso(now + 120 * MINUTE)}", "--questions", questions_file)
        tokens = [self.cli("voter", "authorize", "--place", "1", "--voter", f"member-{n}").strip() for n in range(1, 7)]
        self.assertTrue(all(len(token.replace("-", "")) == 33 for token in tokens), tokens)

        # Before voting: the place page lists the questions and how each is decided, no candidates.
        self.serve(0)
        self.open("#/place/1")
        page = self.text("main")
        self.assertIn("Questions", page)
        self.assertNotIn("Candidates", page)
        self.assertIn("Choose up to 3 options. The 3 options with the most votes are elected.", page)
        self.assertIn("at least 2/3 of those answering yes or no answer yes", page)
        self.assertIn("Quorum: at least 1/4 of the authorised voters", page)
        self.assertIn("instant runoff", page)
        self.snap("questions-place")

        # Voting: the first voter, in the booth.
        self.serve(61 * MINUTE)
        self.fill_token(tokens[0])
        self.assertEqual(len(d.find_elements(By.CSS_SELECTOR, "main fieldset")), 3)
        self.assertEqual([e.text for e in d.find_elements(By.CSS_SELECTOR, "main legend")],
                         ["1. Board members", "2. Amend the bylaws", "3. Club colour"])
        self.snap("questions-booth")
        for name in ("Ana", "Ben", "Chloe"):
            self.tick(1, name)
        # A fourth tick is undone at once, and the booth says why.
        self.tick(1, "Dev")
        self.assertFalse(d.find_element(By.CSS_SELECTOR, "#question-1 input[value='4']").is_selected())
        self.assertIn("at most 3 options", self.text("#question-1 .note"))
        self.answer_yes_no(2, "yes")
        # A rank given twice is refused before anything is sent, at the question, with the focus there.
        self.rank(3, 2, "1st")
        self.rank(3, 1, "1st")
        self.go_on()
        self.assertIn("Question 3: two options are ranked 1st", self.booth_error())
        self.assertTrue(d.find_element(By.CSS_SELECTOR, "#question-3 #booth-error"))
        self.assertTrue(self.focused_in(3))
        self.snap("questions-booth-refused")
        # A gap is refused too; then the ranking Green, Red, Blue goes through.
        self.rank(3, 1, "3rd")
        self.go_on()
        self.assertIn("no option is ranked 2nd", self.booth_error())
        self.rank(3, 1, "2nd")
        self.rank(3, 3, "3rd")
        self.go_on()
        self.assertEqual(self.confirmation(), ["Ana, Ben, Chloe", "Yes", "1st: Green, 2nd: Red, 3rd: Blue"])
        self.snap("questions-confirm")
        self.cast()
        self.wait.until(lambda d: "recorded" in self.now_text("main h1"))
        self.snap("questions-receipt")

        # Its receipt, checked in the audit page: valid, and its answers named.
        d.find_element(By.XPATH, "//button[text()='Check this receipt now']").click()
        self.wait.until(lambda d: d.execute_script("return document.getElementById('main').dataset.route") == "#/audit")
        self.wait.until(lambda d: d.find_element(By.ID, "key").get_attribute("value"))
        d.find_element(By.XPATH, "//button[text()='Verify']").click()
        self.assertEqual(self.text("#audit-verdict"), "The receipt is valid.")
        self.assertIn("A ballot cast in place 1", self.text("#audit-outcome"))
        self.assertEqual([li.text for li in d.find_elements(By.CSS_SELECTOR, "#audit-answers li")],
                         ["Board members: Ana, Ben, Chloe", "Amend the bylaws: Yes",
                          "Club colour: 1st: Green, 2nd: Red, 3rd: Blue"])
        self.snap("questions-audit")

        # The second voter leaves the first question blank and ranks one option only.
        self.fill_token(tokens[1])
        self.go_on()
        self.assertIn("Question 1: answer this question, or choose to leave it blank", self.booth_error())
        self.assertTrue(self.focused_in(1))
        d.find_element(By.ID, "q1-blank").click()
        self.assertFalse(d.find_element(By.CSS_SELECTOR, "#question-1 input[value='1']").is_enabled())
        self.answer_yes_no(2, "yes")
        self.rank(3, 2, "1st")
        self.go_on()
        self.assertEqual(self.confirmation(), ["Left blank", "Yes", "1st: Green"])
        self.cast()
        self.wait.until(lambda d: "recorded" in self.now_text("main h1"))

        # The third voter reaches the confirmation, but the token is used elsewhere before the cast: the
        # server's refusal is shown, back on the first step.
        self.fill_token(tokens[3])
        self.tick(1, "Dev")
        self.answer_yes_no(2, "abstain")
        self.rank(3, 3, "1st")
        self.rank(3, 2, "2nd")
        self.go_on()
        self.assertEqual(self.confirmation(), ["Dev", "Abstain", "1st: Blue, 2nd: Green"])
        post(f"{self.server.url}/api/v1/places/1/votes", {"answers": "4;abstain;3>2", "token": tokens[3]})
        self.cast()
        self.assertIn("already been used", self.booth_error())

        # An answer the server refuses (here one rewritten on its way, past the booth's own checks): its message
        # is shown at the question it names, with the focus there, and nothing is recorded.
        self.fill_token(tokens[2])
        self.tick(1, "Ana")
        self.answer_yes_no(2, "no")
        self.rank(3, 1, "1st")
        self.go_on()
        self.confirmation()
        d.execute_script("""
            const fetch = window.fetch;
            window.fetch = (url, options) => fetch(url, options.method === 'POST' && /votes$/.test(url)
                ? { ...options, body: options.body.replace(/"answers":"[^"]*"/, '"answers":"1,2,3,4;no;1"') } : options);
        """)
        self.cast()
        self.assertEqual(self.booth_error(), "Your answers were refused and nothing was recorded: "
                                             "answer to question 1: pick at most 3")
        self.assertTrue(d.find_element(By.CSS_SELECTOR, "#question-1 #booth-error"))
        self.assertTrue(self.focused_in(1))
        self.snap("questions-server-refused", widths=(360,))
        post(f"{self.server.url}/api/v1/places/1/votes", {"answers": "1,2,3;no;1>3", "token": tokens[2]})
        post(f"{self.server.url}/api/v1/places/1/votes", {"answers": "1,2;yes;1>2", "token": tokens[4]})

        # While voting: counts so far.
        self.open("#/results/1")
        self.wait.until(lambda d: self.now_text("td[data-option='1-1']") == "3")
        self.assertIn("So far", self.text("#results-state"))
        self.assertIn("Passing so far", self.text("#question-2-verdict"))

        # After the close: the final results.
        self.serve(121 * MINUTE)
        self.open("#/results/1")
        self.wait.until(lambda d: "final counts, recounted from the ledger" in self.now_text("#results-state"))
        self.assertEqual([self.text(f"td[data-option='1-{k}']") for k in range(1, 6)], ["3", "3", "2", "1", "0"])
        self.assertEqual(self.text("#question-1-elected"), "Elected: Ana, Ben, Chloe")
        self.assertEqual([self.text(f"td[data-option='2-{k}']") for k in range(1, 4)], ["3", "1", "1"])
        verdict = self.text("#question-2-verdict")
        self.assertTrue(verdict.startswith("Passed."), verdict)
        self.assertIn("Quorum met: 5 of 6", verdict)
        self.assertEqual([self.text(f"td[data-option='3-{k}']") for k in range(1, 4)], ["2", "2", "1"])
        self.assertEqual(self.text("#question-3-elected"), "Elected: Green")
        stages = [row.text for row in d.find_elements(By.CSS_SELECTOR, "#question-3-stages tbody tr")]
        self.assertEqual(len(stages), 2, stages)
        self.assertIn("Blue excluded; elected: Green", stages[1])
        self.assertIn("Quota: 3.00000 votes", self.text("#result-3"))
        self.snap("questions-results")

        # The place's creation, audited from its receipt: the questions as the ledger holds them.
        with urllib.request.urlopen(f"{self.server.url}/api/v1/places/1/created") as response:
            created = json.load(response)["receipt"]
        self.open("#/audit")
        self.wait.until(lambda d: d.find_element(By.ID, "key").get_attribute("value"))
        d.execute_script("document.getElementById('receipt').value = arguments[0]", created)
        d.find_element(By.XPATH, "//button[text()='Verify']").click()
        self.assertEqual(self.text("#audit-verdict"), "The receipt is valid.")
        asked = [li.text for li in d.find_elements(By.CSS_SELECTOR, "#audit-questions li")]
        self.assertEqual(len(asked), 3, asked)
        self.assertTrue(asked[0].startswith("Board members Choose up to 3 options."), asked)
        self.assertIn("(Ana, Ben, Chloe, Dev, Eun)", asked[0])
        self.assertIn("Quorum: at least 1/4", asked[1])

        # Korean: the results page in the other language, without an untranslated key.
        Select(d.find_element(By.ID, "language")).select_by_value("ko")
        self.open("#/results/1")
        self.wait.until(lambda d: "가결" in self.now_text("#question-2-verdict"))
        self.snap("questions-results-ko", widths=(360,))
        Select(d.find_element(By.ID, "language")).select_by_value("en")

        # Nothing the Content-Security-Policy refused, no script error.
        problems = [entry["message"] for entry in d.get_log("browser")
                    if entry["level"] == "SEVERE" and "status of 4" not in entry["message"]]
        self.assertEqual(problems, [])

    def test_describe_event_reads_a_ballot(self):
        """describeEvent reads a place created with flag bit 2 (its ballot, FORMAT.md §11.21) and a ballot cast
        (0x010B, §11.22); bytes cut short or with a byte too many are not described."""
        def text(value):
            return struct.pack(">I", len(value.encode())) + value.encode()

        ballot = (struct.pack(">BB", 1, 3)
                  + text("Pick") + text("") + struct.pack(">BBHHH", 1, 1, 1, 2, 2) + struct.pack(">H", 3)
                  + text("A") + text("B") + text("C")
                  + text("Motion") + text("d") + struct.pack(">BBBQQBQQ", 0, 2, 2, 2, 3, 1, 1, 4) + struct.pack(">H", 0)
                  + text("Rank") + text("") + struct.pack(">BBHB", 0, 3, 1, 2) + struct.pack(">H", 2) + text("X") + text("Y"))
        place = (struct.pack(">HI", 0x0101, 9) + text("AGM") + text("") + struct.pack(">4qI", 1, 2, 3, 4, 0)
                 + struct.pack(">I", 4) + ballot)
        cast = (struct.pack(">HI", 0x010B, 9) + bytes(32) + struct.pack(">B", 3)
                + struct.pack(">HHH", 2, 0, 2) + struct.pack(">H", 0xFFFF) + struct.pack(">HHH", 2, 1, 0))
        self.serve(0)
        self.open("#/audit")
        describe = """
        const [bytes, done] = arguments;
        import('./audit.js').then((audit) => done(audit.describeEvent(Uint8Array.from(bytes))))
            .catch((error) => done({error: String(error)}));
        """
        event = self.driver.execute_async_script(describe, list(place))
        self.assertEqual(event["kind"], "place_created")
        self.assertEqual(event["place"], 9)
        self.assertIsNone(event["ballotKey"])
        self.assertEqual(event["questions"], [
            {"title": "Pick", "description": "", "blank": True, "method": "choose", "min": 1, "max": 2, "seats": 2,
             "options": ["A", "B", "C"]},
            {"title": "Motion", "description": "d", "blank": False, "method": "yes-no",
             "threshold": "2/3 of yes-and-no", "quorum": "1/4", "options": []},
            {"title": "Rank", "description": "", "blank": False, "method": "rank", "seats": 1, "rule": "schulze",
             "options": ["X", "Y"]},
        ])
        self.assertEqual(self.driver.execute_async_script(describe, list(cast)),
                         {"kind": "ballot_cast", "place": 9, "answers": [[0, 2], None, [1, 0]]})
        for broken in (place[:-1], place + b"\0", cast[:-1], cast + b"\0"):
            self.assertIsNone(self.driver.execute_async_script(describe, list(broken)))


if __name__ == "__main__":
    unittest.main()
