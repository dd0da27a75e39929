"""The issue's "done when", end to end in headless Chromium against a real `vote serve`: an annual general meeting
made in the console asks (a) "Board", choose 3 of 7, (b) "Bylaws", yes/no passing with 2/3 of yes-and-no and a
quorum of 1/4 of the electorate, (c) "Delegates", 5 seats by Scottish STV, with re-voting on. The console authorises
12 members, three of them weighing 3, 10 and 120 shares. In the booth, two members vote by keyboard alone, one ranks
by dragging on a phone, the rest by pointer; the member weighing 10 votes again, and only that last ballot counts.
After the close the console certifies the results, saying what it certified; the results page and its print sheet
say they are certified at that block. Then the independent verifier (Tools/verify_ledger.py) recounts the ledger:
it exits 0, and every figure of its report agrees with GET /api/v1/places/1/tally (ballots, blank, each option's
members and weight, the elected, passed, quorum_met, the STV quota and each stage) and with the certify answer
(the elected, passed, the turnout).

The ballots make the outcomes turn on the weights and the transfers: Ben has the most members on the board question
but not the weight, and the re-vote puts Eun in his place; the motion passes by weight although most members vote
no; the 120 shares elect Hana at the first count and Ivan by the transfer of her surplus.

Time: `vote serve` runs at a DEBUG test clock (VOTE_TEST_CLOCK_OFFSET_MS), restarted in registration, inside the
voting window and after it, as in test_questions_console. Screenshots (console-certified-1280, results-agm-1280)
go to $WEB_SCREENSHOTS (default: a new temporary directory, printed)."""

import json
import os
import subprocess
import unittest

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

from support import CLOSED, REPO, VOTING, BrowserLedgerTest, request, this_minute

BOARD = ["Ana", "Ben", "Chloe", "Dev", "Eun", "Fay", "Gil"]
DELEGATES = ["Hana", "Ivan", "Jun", "Kai", "Lea", "Mo", "Nia"]

# The meeting's questions, in the questions file's form, as the console's editor is filled in.
QUESTIONS = [
    {"title": "Board", "method": "choose", "options": BOARD, "blank": True, "min": 1, "max": 3, "seats": 3},
    {"title": "Bylaws", "method": "yes-no", "options": [], "blank": False, "threshold": "2/3 of yes-and-no", "quorum": "1/4"},
    {"title": "Delegates", "method": "rank", "options": DELEGATES, "blank": True, "seats": 5, "rule": "scottish-stv"},
]

# The members: identity, weight (1 unless given), and how they vote in the booth.
MEMBERS = [("member-1", 3), ("member-2", 10), ("member-3", 120)] + [(f"member-{n}", 1) for n in range(4, 13)]

# Each ballot cast: the member (index in MEMBERS), the board's ticks (None: blank), the motion's answer, the
# ranking (None: blank), and the way it is cast. Member 2 votes twice; member 12 does not vote. A keyboard voter
# ranks a prefix of the options in order (a select each, by arrow keys); the phone voter drags Nia above the line,
# then Hana above Nia.
BALLOTS = [
    (0, [1, 2, 3], "no", [1, 2, 3], "keyboard"),
    (1, [4], "yes", [3, 4], "pointer"),  # replaced below by member 2's second ballot
    (2, [1, 4], "yes", [1, 2], "pointer"),
    (3, [2], "no", [1, 7], "drag"),
    (4, [2, 3], "abstain", [1], "keyboard"),
    (5, [2, 5], "no", [5, 6, 4], "pointer"),
    (6, None, "no", [6, 5], "pointer"),
    (7, [3, 5, 7], "no", [7, 6, 5], "pointer"),
    (8, [2, 3], "no", None, "pointer"),
    (9, [6], "no", [3, 5], "pointer"),
    (10, [5, 2], "yes", [5, 3, 4], "pointer"),
    (1, [5, 6], "no", [4, 3, 5], "pointer"),  # member 2 again: only this one counts
]


def names(options, numbers):
    """Options by their numbers from 1, as the app lists the elected."""
    return ", ".join(options[k - 1] for k in numbers)


def counted(ballots):
    """The choose and yes/no questions' counts that the last ballot of each member makes, as {members, weight}:
    (board ballots, board blank, board options, motion options)."""
    last = {member: (board, motion) for member, board, motion, _, _ in ballots}
    def zero(n):
        return [{"members": 0, "weight": 0} for _ in range(n)]

    board, motion = zero(len(BOARD)), zero(3)
    [ballots_count], [blank] = zero(1), zero(1)
    for member, (ticks, answer) in last.items():
        weight = MEMBERS[member][1]
        for count in [ballots_count] + ([blank] if ticks is None else [board[k - 1] for k in ticks]) \
                + [motion[["yes", "no", "abstain"].index(answer)]]:
            count["members"] += 1
            count["weight"] += weight
    return ballots_count, blank, board, motion


class AGMTest(BrowserLedgerTest):
    ledger_name = "Cooperative"

    def create_place(self, now):
        """The meeting's place, made in the console's editor: its three questions and re-voting."""
        d = self.driver
        self.type_into("place-name", "Annual general meeting")
        self.fill_windows(now)
        d.find_element(By.ID, "kind-questions").click()
        for n, question in enumerate(QUESTIONS, 1):
            if n > 1:
                d.find_element(By.ID, "add-question").click()
            self.fill_question(n, question)
        d.find_element(By.ID, "revoting").click()
        self.until("no problem left", lambda: "No problem found" in self.now_text("#questions-problems"),
                   lambda: self.now_text("#questions-problems"))
        d.find_element(By.XPATH, "//form[@id='create-place']//button[text()='Create']").click()
        self.shows("#console-outcome", "Created place 1.")

    def authorise(self, identity, weight):
        """One member authorised in the console (with a weight unless 1); the token it shows once."""
        d = self.driver
        before = self.now_text("#issued-token")
        self.type_into("voter-identity", identity)
        if weight != 1:
            self.type_into("voter-weight", str(weight))
        d.find_element(By.XPATH, "//form[@id='authorize-one']//button[text()='Authorise']").click()
        self.until(f"the token of {identity}", lambda: self.now_text("#issued-token") not in ("", before),
                   lambda: self.now_text("#console-outcome"))
        return self.now_text("#issued-token")

    # The booth, each way a member casts a ballot.

    def by_pointer(self, board, motion, ranking):
        d = self.driver
        if board is None:
            d.find_element(By.ID, "q1-blank").click()
        for k in board or []:
            d.find_element(By.XPATH, f"//fieldset[@id='question-1']//label[span[text()='{BOARD[k - 1]}']]").click()
        d.find_element(By.CSS_SELECTOR, f"#question-2 input[value='{motion}']").click()
        if ranking is None:
            d.find_element(By.ID, "q3-blank").click()
        for rank, k in enumerate(ranking or [], 1):
            Select(d.find_element(By.ID, f"q3-o{k}")).select_by_value(str(rank))
        d.find_element(By.CSS_SELECTOR, "main form button[type=submit]").click()

    def by_keyboard(self, board, motion, ranking):
        """From the token field: Tab to each box (Space ticks it), past the blank box, into the motion's radios
        (Space: yes; each arrow down moves one on), to each ranked select (an arrow down per rank), then to
        Continue."""
        self.assertEqual(ranking, list(range(1, len(ranking) + 1)), "a keyboard voter ranks a prefix, in order")
        for k in range(1, len(BOARD) + 1):
            self.press(Keys.TAB, *([Keys.SPACE] if k in board else []))
        self.press(Keys.TAB, Keys.TAB)
        self.assertEqual(self.focused(), "yes")
        self.press(*([Keys.SPACE] if motion == "yes" else [Keys.ARROW_DOWN] * ["yes", "no", "abstain"].index(motion)))
        for k in ranking:
            self.press(Keys.TAB, *[Keys.ARROW_DOWN] * k)
            self.assertEqual(self.focused(), f"q3-o{k}")
        for _ in range(len(DELEGATES) + 2):
            if self.focused() == "Continue":
                break
            self.press(Keys.TAB)
        self.assertEqual(self.focused(), "Continue")
        self.press(Keys.ENTER)

    def by_dragging(self, board, motion, ranking):
        """On a phone: the boxes and the radio by touch, the ranking (Hana, then Nia) by dragging."""
        d = self.driver
        self.assertEqual(ranking, [1, 7], "the phone voter drags Nia, then Hana above her")
        for k in board:
            d.find_element(By.XPATH, f"//fieldset[@id='question-1']//label[span[text()='{BOARD[k - 1]}']]").click()
        d.find_element(By.CSS_SELECTOR, f"#question-2 input[value='{motion}']").click()
        d.execute_script("arguments[0].scrollIntoView({block: 'start'})", d.find_element(By.CSS_SELECTOR, "#question-3 .rank-list"))
        self.drag(self.grip(3, 7), self.box(d.find_element(By.CSS_SELECTOR, "#question-3 .rank-line"))["top"] - 4)
        self.until("Nia ranked 1st", lambda: self.rank_order(3)[:2] == ["Nia=1", "|"], lambda: self.rank_order(3))
        self.drag(self.grip(3, 1), self.box(self.grip(3, 7))["top"] + 2)
        self.until("Hana 1st, Nia 2nd", lambda: self.rank_order(3)[:3] == ["Hana=1", "Nia=2", "|"], lambda: self.rank_order(3))
        d.find_element(By.CSS_SELECTOR, "main form button[type=submit]").click()

    def cast(self, token, board, motion, ranking, how):
        """One ballot cast in the booth `how` (pointer, keyboard or drag); the confirmation checked in words."""
        d = self.driver
        if how == "drag":
            d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": 360, "height": 800, "deviceScaleFactor": 1, "mobile": True})
        self.open("#/booth/1")
        d.find_element(By.ID, "token").send_keys(token)
        {"pointer": self.by_pointer, "keyboard": self.by_keyboard, "drag": self.by_dragging}[how](board, motion, ranking)
        self.until("the confirmation", lambda: "Confirm" in self.now_text("main h1"), lambda: self.now_text("main"))
        words = [", ".join(BOARD[k - 1] for k in sorted(board)) if board else "Left blank", motion.capitalize(),
                 ", ".join(f"{['1st', '2nd', '3rd'][i]}: {DELEGATES[k - 1]}" for i, k in enumerate(ranking)) if ranking else "Left blank"]
        self.assertEqual([dd.text for dd in d.find_elements(By.CSS_SELECTOR, "#confirm-answers dd")], words)
        if how == "keyboard":
            self.press(Keys.TAB, Keys.ENTER)  # from the heading to "Cast my vote"
        else:
            d.find_element(By.XPATH, "//button[text()='Cast my vote']").click()
        self.until("the receipt", lambda: "recorded" in self.now_text("main h1"), lambda: self.now_text("main"))
        if how == "drag":
            d.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})

    def test_agm_certified_and_recounted(self):
        d = self.driver
        now = this_minute()
        self.serve(0)
        admin = self.admin_token()

        # The console: the place, then its members, three of them weighted.
        self.sign_in(admin)
        self.create_place(now)
        tokens = [self.authorise(identity, weight) for identity, weight in MEMBERS]
        self.assertEqual(len(set(tokens)), len(MEMBERS))
        turnout = request(f"{self.server.url}/api/v1/places/1/tally")["turnout"]
        self.assertEqual((turnout["authorized"], turnout["authorized_weight"]), (12, 142))
        # Certifying waits for the close.
        self.shows("#certify-state", "the results can be certified after that")
        self.assertFalse(d.find_element(By.CSS_SELECTOR, "#certify button").is_enabled())

        # Voting, in the booth.
        self.serve(VOTING)
        for member, board, motion, ranking, how in BALLOTS:
            self.cast(tokens[member], board, motion, ranking, how)

        # After the close: the console certifies, and says what.
        self.serve(CLOSED)
        self.sign_in(admin)
        # The certify route's answer, kept as the console receives it (the route answers once: a second is refused).
        d.execute_script("""
            const fetched = window.fetch;
            window.fetch = async (...call) => {
                const response = await fetched(...call);
                if (String(call[0]).endsWith('/certify') && response.ok) window.certifyAnswer = await response.clone().json();
                return response;
            };""")
        said = self.certify()
        self.until("the certified outcomes", lambda: d.find_elements(By.ID, "certified-outcomes"),
                   lambda: self.now_text("#console-outcome"))
        self.shows("#certify-state", "Certified at block")
        self.assertFalse(d.find_element(By.CSS_SELECTOR, "#certify button").is_enabled())
        answer = d.execute_script("return window.certifyAnswer")
        d.execute_script("window.scrollTo(0, document.getElementById('console-outcome').offsetTop)")
        self.snap("console-certified", widths=(1280,))
        url = self.server.url
        tally = request(f"{url}/api/v1/places/1/tally")
        height = tally["certified_height"]
        self.assertEqual(height, answer["height"])
        self.assertIn(f"Results certified at block {height}.", said)
        self.assertEqual(self.text("#certified-turnout"), "Turnout: 11 of 12 members · weight 141 of 142 (99.3%)")
        self.assertEqual([dd.text for dd in d.find_elements(By.CSS_SELECTOR, "#certified-outcomes dd")],
                         [f"Elected: {names(BOARD, tally['questions'][0]['elected'])}", "Passed.",
                          f"Elected: {names(DELEGATES, tally['questions'][2]['elected'])}"])

        # The outcomes turn on the weights, the re-vote and the transfers.
        board, motion, delegates = tally["questions"]
        self.assertEqual(sorted(board["elected"]), [1, 4, 5])  # Ana, Dev, Eun; not Ben, with the most members
        self.assertEqual(max(range(7), key=lambda i: board["options"][i]["members"]), 1)
        yes, no = motion["options"][0], motion["options"][1]
        self.assertTrue(motion["passed"])
        self.assertLess(3 * yes["members"], 2 * (yes["members"] + no["members"]))  # not 2/3 of the members
        first = delegates["stages"][0]
        self.assertEqual(first["elected"], [1])  # Hana at the first count ...
        self.assertEqual(delegates["stages"][1], {**delegates["stages"][1], "action": "surplus_transferred", "option": 1,
                                                  "elected": [2]})  # ... Ivan by her surplus
        self.assertIn("excluded", [stage["action"] for stage in delegates["stages"]])
        # Only member 2's last ballot counts.
        ballots, blank, board_counts, motion_counts = counted(BALLOTS)
        self.assertEqual((board["ballots"], board["blank"], board["options"], motion["options"]),
                         (ballots, blank, board_counts, motion_counts))
        self.assertEqual((tally["turnout"]["voted"], tally["turnout"]["voted_weight"]), (11, 141))

        # The results page and its print sheet say the counts are certified, at that block.
        self.open("#/results/1")
        certified = f"Certified at block {height}"
        self.shows("#results-state", certified)
        self.assertIn("signed on the ledger", self.text("#results-state"))
        self.assertEqual(self.text("#question-1-elected"), f"Elected: {names(BOARD, board['elected'])}")
        self.snap("results-agm", widths=(1280,))
        d.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
        sheet = self.text("main")
        d.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})
        for words in (certified, "Turnout: 11 of 12 members · weight 141 of 142 (99.3%)", "Passed."):
            self.assertIn(words, sheet)
        self.check_browser_log()

        # The independent verifier recounts the ledger and agrees with the tally and the certificate.
        self.assertEqual(request(f"{url}/api/v1/places/1/tally"), tally)  # nothing moved since
        self.server.stop()
        verifier = subprocess.run(["python3", os.path.join(REPO, "Tools", "verify_ledger.py"), self.ledger],
                                  capture_output=True, text=True, timeout=300)
        self.assertEqual(verifier.returncode, 0, verifier.stderr[-2000:] or verifier.stdout[-2000:])
        report = json.loads(verifier.stdout)
        self.assertTrue(report["ok"])
        [recount] = [r for r in report["tallies"] if r["place"] == 1]
        for n, (mine, theirs) in enumerate(zip(tally["questions"], recount["questions"], strict=True), 1):
            with self.subTest(question=n):
                self.assertEqual((mine["ballots"], mine["blank"], mine["options"], mine["elected"]),
                                 (theirs["ballots"], theirs["blank"], theirs["totals"], theirs["elected"]))
                for key in ("passed", "quorum_met", "threshold_reached", "quota", "stages"):
                    self.assertEqual(mine.get(key), theirs.get(key), key)
                answered = answer["questions"][n - 1]
                self.assertEqual((answered["ballots"], answered["blank"], answered["options"], answered["elected"],
                                  answered.get("passed")),
                                 (theirs["ballots"], theirs["blank"], theirs["totals"], theirs["elected"], theirs.get("passed")))
        turnout = ("authorized", "voted", "authorized_weight", "voted_weight")
        self.assertEqual({k: recount["turnout"][k] for k in turnout}, {k: tally["turnout"][k] for k in turnout})
        self.assertEqual({k: recount["turnout"][k] for k in turnout}, answer["turnout"])


if __name__ == "__main__":
    unittest.main()
