"""An anonymous place that asks questions (FORMAT.md §11.27) in headless Chromium against a real `vote serve`: the
CLI creates the place (`--ballot anonymous --questions`: a choose question, a yes/no motion, a ranked question) and
authorises three voters. The first opens the booth from the letter's link, answers (the booth refuses a missing
answer and a third tick before anything is sent), reviews every answer, and the page gets a credential signed
blind, waits a random 5 to 30 seconds and casts the answers with the credential and nothing else; the receipt page
shows the answers, and the audit page names them from the receipt. The second gets a credential, reloads the page
during the wait and casts the credential kept on the device, by keyboard where the booth moves the focus; an
answer rewritten on its way is refused at the question it names, and the credential stays kept. Then
`vote tally --json` counts both ballots and Tools/verify_ledger.py accepts the ledger.

Screenshots of the booth and of the receipt at 360 px go to $WEB_SCREENSHOTS (default: a new temporary directory,
printed)."""

import json
import os
import struct
import subprocess
import time
import unittest
import urllib.request

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

from support import BrowserLedgerTest, REPO, iso

MINUTE = 60_000

QUESTIONS = {"questions": [
    {"title": "Board members", "description": "Elect two of the four nominees.", "method": "choose",
     "options": ["Ana", "Ben", "Chloe", "Dev"], "blank": True, "min": 1, "max": 2, "seats": 2},
    {"title": "Raise the dues", "description": "From 10 to 12 a year.", "method": "yes-no", "options": [],
     "blank": False, "threshold": "more-yes-than-no"},
    {"title": "Club colour", "description": "", "method": "rank", "options": ["Red", "Green", "Blue"],
     "blank": False, "seats": 1, "rule": "scottish-stv"},
]}

# Every POST the page makes, as [path, body], in window.sent (the booth's own requests, for checking what it sends).
RECORD_POSTS = """
window.sent = [];
const fetch = window.fetch;
window.fetch = (url, options) => {
    if (options?.method === 'POST') window.sent.push([url, options.body]);
    return fetch(url, options);
};
"""



def status(base, code):
    request = urllib.request.Request(f"{base}/api/v1/places/1/status", data=json.dumps({"token": code}).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(request) as response:
        return json.load(response)


class AnonymousQuestionsTest(BrowserLedgerTest):
    ledger_name = "Rowing club"

    def cli(self, *arguments):
        return subprocess.run([self.vote, *arguments, "--ledger", self.ledger], check=True, capture_output=True,
                              text=True).stdout

    def press(self, *keys):
        """Keys typed into whatever has the focus, as a keyboard user types them."""
        ActionChains(self.driver).send_keys(*keys).perform()

    def tick(self, question, option_name):
        self.driver.find_element(
            By.XPATH, f"//fieldset[@id='question-{question}']//label[span[text()='{option_name}']]").click()

    def rank(self, question, option, rank_text):
        Select(self.driver.find_element(By.ID, f"q{question}-o{option}")).select_by_visible_text(rank_text)

    def go_on(self):
        self.driver.find_element(By.CSS_SELECTOR, "main form button[type=submit]").click()

    def booth_error(self):
        return self.wait.until(lambda d: self.now_text("#booth-error"))

    def focused_in(self, question):
        return self.driver.execute_script("return document.activeElement.closest('fieldset')?.id") == f"question-{question}"

    def confirmation(self):
        self.wait.until(lambda d: "Confirm" in self.now_text("main h1"))
        return [dd.text for dd in self.driver.find_elements(By.CSS_SELECTOR, "#confirm-answers dd")]

    def get_credential(self):
        """From the confirmation to the waiting step, the page's clock stopped so that the random wait cannot run
        out (and cast) before `resume()`, however slow the machine."""
        d = self.driver
        d.execute_script("const now = Date.now(); window.realNow = Date.now; Date.now = () => now;")
        d.find_element(By.XPATH, "//button[text()='Get my ballot credential and vote']").click()
        self.wait.until(lambda d: d.find_elements(By.ID, "cast-countdown"))
        seconds = int(self.now_text("#cast-countdown").split()[-2])
        self.assertTrue(5 <= seconds <= 30, seconds)
        kept = json.loads(d.execute_script("return localStorage.getItem('voteledger.credential.1')"))
        self.assertEqual(sorted(kept), ["ballot_key_hash", "credential", "place", "signature"],
                         "the device keeps the credential, and nothing of the answers")

    def receipt_answers(self):
        """The answers on the receipt page, once the ballot is cast (the random wait is at most 30 s)."""
        WebDriverWait(self.driver, 120).until(lambda d: d.find_elements(By.ID, "receipt-proves"))
        return [dd.text for dd in self.driver.find_elements(By.CSS_SELECTOR, "#receipt-answers dd")]

    def cast_sent(self):
        """The bodies of the ballots the page sent (POST …/ballots)."""
        return [json.loads(body) for url, body in self.driver.execute_script("return window.sent")
                if url.endswith("/places/1/ballots")]

    def test_anonymous_ballot_of_questions(self):
        d = self.driver
        now = int(time.time() * 1000) // MINUTE * MINUTE
        questions_file = os.path.join(self.work, "questions.json")
        with open(questions_file, "w") as file:
            json.dump(QUESTIONS, file)
        self.cli("place", "create", "--name", "Annual general meeting", "--ballot", "anonymous",
                 "--registration", f"{iso(now - MINUTE)}/{iso(now + 60 * MINUTE)}",
                 "--voting", f"{iso(now + 60 * MINUTE)}/{iso(now + 120 * MINUTE)}", "--questions", questions_file)
        codes = [self.cli("voter", "authorize", "--place", "1", "--voter", f"member-{n}").strip() for n in range(1, 4)]
        base = self.serve(61 * MINUTE)
        with urllib.request.urlopen(f"{base}/api/v1/places/1") as response:
            place = json.load(response)
        self.assertEqual(place["ballot"], "anonymous")
        self.assertEqual(len(place["questions"]), 3)

        # Voter 1, from the letter's link: the code filled and gone from the address bar, every question asked.
        self.open(f"#/booth/1?t={codes[0]}", shown="#/booth/1")
        self.assertEqual(d.find_element(By.ID, "token").get_attribute("value"), codes[0])
        self.assertNotIn(codes[0], d.current_url)
        self.assertIn("anonymous ballots", self.text("main"))
        self.assertEqual([e.text for e in d.find_elements(By.CSS_SELECTOR, "main legend")],
                         ["1. Board members", "2. Raise the dues", "3. Club colour"])
        self.assertEqual(d.find_elements(By.ID, "revoting-note"), [])
        d.execute_script(RECORD_POSTS)
        self.snap("booth-anonymous-questions", widths=(360,))
        # Nothing answered: refused at question 1, with the focus there, and the code is not sent.
        self.go_on()
        self.assertIn("Question 1: answer this question, or choose to leave it blank", self.booth_error())
        self.assertTrue(d.find_element(By.CSS_SELECTOR, "#question-1 #booth-error"))
        self.assertTrue(self.focused_in(1))
        self.assertEqual(d.execute_script("return window.sent"), [])
        # A third tick is undone at once, and the booth says why.
        for name in ("Ana", "Chloe", "Ben"):
            self.tick(1, name)
        self.assertFalse(d.find_element(By.CSS_SELECTOR, "#question-1 input[value='2']").is_selected())
        self.assertIn("at most 2 options", self.text("#question-1 .note"))
        d.find_element(By.CSS_SELECTOR, "#question-2 input[value='yes']").click()
        self.rank(3, 2, "1st")
        self.rank(3, 1, "2nd")
        self.go_on()
        self.assertEqual(self.confirmation(), ["Ana, Chloe", "Yes", "1st: Green, 2nd: Red"])
        self.assertIn("A ballot cannot be changed", self.text("main .confirm"))
        self.get_credential()
        d.execute_script("Date.now = window.realNow;")
        self.assertEqual(self.receipt_answers(), ["Ana, Chloe", "Yes", "1st: Green, 2nd: Red"])
        # The ballot carried the credential, its signature and the answers' text: nothing that names the voter.
        [ballot] = self.cast_sent()
        self.assertEqual(sorted(ballot), ["answers", "credential", "signature"])
        self.assertEqual(ballot["answers"], "1,3;yes;2>1")
        self.snap("booth-anonymous-questions-receipt", widths=(360,))
        self.assertIsNone(d.execute_script("return localStorage.getItem('voteledger.credential.1')"))

        # Its receipt, checked in the audit page: valid, an anonymous ballot, its answers named.
        d.find_element(By.XPATH, "//button[text()='Check this receipt now']").click()
        self.wait.until(lambda d: d.execute_script("return document.getElementById('main').dataset.route") == "#/audit")
        self.wait.until(lambda d: d.find_element(By.ID, "key").get_attribute("value"))
        d.find_element(By.XPATH, "//button[text()='Verify']").click()
        self.assertEqual(self.text("#audit-verdict"), "The receipt is valid.")
        self.assertIn("An anonymous ballot cast in place 1", self.text("#audit-outcome"))
        self.assertEqual([li.text for li in d.find_elements(By.CSS_SELECTOR, "#audit-answers li")],
                         ["Board members: Ana, Chloe", "Raise the dues: Yes", "Club colour: 1st: Green, 2nd: Red"])

        # Voter 2 gets a credential and reloads the page during the wait: the credential kept on the device is cast,
        # with no code, once the answers are given again (the device does not keep them).
        self.open(f"#/booth/1?t={codes[1]}", shown="#/booth/1")
        d.find_element(By.ID, "q1-blank").click()
        d.find_element(By.CSS_SELECTOR, "#question-2 input[value='no']").click()
        self.rank(3, 3, "1st")
        self.go_on()
        self.assertEqual(self.confirmation(), ["Left blank", "No", "1st: Blue"])
        self.get_credential()
        self.assertTrue(status(base, codes[1])["credential_issued"])
        self.open("#/booth/1")
        self.wait.until(lambda d: d.find_elements(By.ID, "credential-kept"))
        self.assertIn("Answer the questions", self.text("#credential-kept"))
        self.assertEqual(d.find_elements(By.ID, "token"), [], "the code was asked for again")
        d.execute_script(RECORD_POSTS)
        d.find_element(By.ID, "q1-blank").click()
        self.rank(3, 3, "1st")
        self.rank(3, 2, "2nd")
        self.rank(3, 1, "3rd")
        d.find_element(By.ID, "cast-kept").click()
        # Question 2 unanswered: the focus goes to its first answer, and the arrow key answers "No".
        self.assertIn("Question 2: answer this question.", self.booth_error())
        self.assertTrue(self.focused_in(2))
        self.press(Keys.ARROW_DOWN)
        self.assertTrue(d.find_element(By.CSS_SELECTOR, "#question-2 input[value='no']").is_selected())
        d.find_element(By.ID, "cast-kept").click()
        self.assertEqual(self.confirmation(), ["Left blank", "No", "1st: Blue, 2nd: Green, 3rd: Red"])
        # An answer the server refuses (rewritten on its way, past the booth's own checks): its message at the question
        # it names, with the focus there; nothing is recorded and the credential stays kept.
        d.execute_script("""
            const fetch = window.unrewritten = window.fetch;
            window.fetch = (url, options) => fetch(url, options?.method === 'POST' && /ballots$/.test(url)
                ? { ...options, body: options.body.replace(/"answers":"[^"]*"/, '"answers":"1,2,3;no;3>2>1"') } : options);
        """)
        self.press(Keys.TAB, Keys.ENTER)  # from the heading to "Cast my vote"
        self.assertEqual(self.booth_error(), "Your answers were refused and nothing was recorded: "
                                             "answer to question 1: pick at most 2")
        self.assertTrue(d.find_element(By.CSS_SELECTOR, "#question-1 #booth-error"))
        self.assertTrue(self.focused_in(1))
        self.assertIsNotNone(d.execute_script("return localStorage.getItem('voteledger.credential.1')"))
        # The answers given are still there: on again, unrewritten, and the ballot is cast.
        d.execute_script("window.fetch = window.unrewritten;")
        self.assertTrue(d.find_element(By.ID, "q1-blank").is_selected())
        d.find_element(By.ID, "cast-kept").click()
        self.assertEqual(self.confirmation(), ["Left blank", "No", "1st: Blue, 2nd: Green, 3rd: Red"])
        self.press(Keys.TAB, Keys.ENTER)
        self.assertEqual(self.receipt_answers(), ["Left blank", "No", "1st: Blue, 2nd: Green, 3rd: Red"])
        refused, ballot = self.cast_sent()
        self.assertEqual((refused["answers"], ballot["answers"]), ("1,2,3;no;3>2>1", "blank;no;3>2>1"))
        self.assertEqual(sorted(ballot), ["answers", "credential", "signature"])
        self.assertIsNone(d.execute_script("return localStorage.getItem('voteledger.credential.1')"))

        # The results page counts both ballots, as it counts a token place's.
        self.open("#/results/1")
        self.wait.until(lambda d: [self.now_text(f"td[data-option='1-{k}']") for k in range(1, 5)] == ["1", "0", "1", "0"])
        self.assertIn("2 of 3", self.text("main"))

        problems = [entry["message"] for entry in d.get_log("browser")
                    if entry["level"] == "SEVERE" and "status of 4" not in entry["message"]]
        self.assertEqual(problems, [])

        # The count: both ballots, each of weight 1; then the independent verifier accepts the ledger.
        self.server.stop()
        self.assertEqual(self.server.exit_status, 0)
        self.server = None
        tally = json.loads(self.cli("tally", "--place", "1", "--json"))
        board, dues, colour = tally["questions"]
        self.assertEqual((board["ballots"]["members"], board["blank"]["members"]), (2, 1))
        self.assertEqual([o["members"] for o in board["options"]], [1, 0, 1, 0])
        self.assertEqual([o["members"] for o in dues["options"]], [1, 1, 0])
        self.assertFalse(dues["passed"])
        self.assertEqual(colour["ballots"]["members"], 2)
        self.assertEqual([o["members"] for o in colour["options"]], [0, 1, 1])
        self.assertEqual(tally["turnout"]["voted"], 2)
        verifier = subprocess.run(["python3", os.path.join(REPO, "Tools", "verify_ledger.py"), self.ledger],
                                  capture_output=True, text=True, timeout=300, cwd=REPO)
        self.assertEqual(verifier.returncode, 0, verifier.stderr[-2000:] or verifier.stdout[-2000:])

    def test_describe_event_reads_anonymous_ballots(self):
        """describeEvent reads an anonymous ballot cast (0x010F: place, credential, signature, answers, §11.27) and an
        anonymous vote cast (0x010A: place, candidate, credential, signature, §11.19), so the audit page names what an
        anonymous receipt holds; bytes cut short or with a byte too many are not described."""
        def field(length):
            return struct.pack(">I", length) + bytes([7]) * length

        answers = struct.pack(">B", 3) + struct.pack(">HHH", 2, 0, 2) + struct.pack(">H", 0xFFFF) + struct.pack(">HHH", 2, 1, 0)
        ballot = struct.pack(">HI", 0x010F, 9) + field(64) + field(384) + answers
        vote = struct.pack(">HII", 0x010A, 4, 2) + field(64) + field(384)
        self.serve(0)
        self.open("#/audit")
        describe = """
        const [bytes, done] = arguments;
        import('./audit.js').then((audit) => done(audit.describeEvent(Uint8Array.from(bytes))))
            .catch((error) => done({error: String(error)}));
        """
        self.assertEqual(self.driver.execute_async_script(describe, list(ballot)),
                         {"kind": "anonymous_ballot_cast", "place": 9, "answers": [[0, 2], None, [1, 0]]})
        self.assertEqual(self.driver.execute_async_script(describe, list(vote)),
                         {"kind": "anonymous_vote_cast", "place": 4, "candidate": 2})
        for broken in (ballot[:-1], ballot + b"\0", vote[:-1], vote + b"\0"):
            self.assertIsNone(self.driver.execute_async_script(describe, list(broken)))


if __name__ == "__main__":
    unittest.main()
