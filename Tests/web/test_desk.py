"""The officer's desk (issue 36) in headless Chromium against a real `vote serve` started with the relay options of
`vote voter mail`, mailing through the real test relay (aiosmtpd, Tests/mail/smtp_relay.py). The officer uploads the
members' list in the console and picks its contact columns in the preview (Unit the identity, Name, Email and Lang
guessed), so the contact book is filled as `vote voter authorize --email-column` fills it. Voting opens; members vote
at three times; the desk shows the counts from the ledger, the turnout over time as a chart the page draws itself,
and the mail figures. The reminder button sends through the relay, and the progress shown reaches done: one member
reminded, one refused by the relay; the one who has no address is told to get a letter.
Screenshot: console-desk at 1280 px and 360 px into $WEB_SCREENSHOTS (default: a new temporary directory, printed).

Time: the server runs at a DEBUG test clock (VOTE_TEST_CLOCK_OFFSET_MS), restarted at each vote's time."""

import glob
import json
import os
import subprocess
import time
import unittest

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from support import BrowserLedgerTest, MINUTE, VOTING, iso, request, this_minute

MEMBERS = ('Name,Email,Unit,Lang\n'
           'Jo Kim,jo@example.org,U-101,ko\n'
           'Min Lee,min@example.org,U-102,en\n'
           'Ada Park,ada@example.org,U-103,en\n'
           'Refused Person,refuse@example.org,U-104,\n'
           'No Mail,,U-105,\n'
           'Bad Address,not-an-address,U-106,en\n'
           'Sam Choi,sam@example.org,U-107,en\n')
RELAY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mail", "smtp_relay.py")


class DeskTest(BrowserLedgerTest):
    ledger_name = "Tenants' association"

    def start_relay(self):
        """The test relay on a free port, with a certificate of the test's own; its port."""
        cert, key = os.path.join(self.work, "relay-cert.pem"), os.path.join(self.work, "relay-key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                        "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=localhost",
                        "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"], check=True, capture_output=True)
        with open(os.path.join(self.work, "smtp-password"), "w") as file:
            file.write("s3cret pass\n")
        self.relay_out = os.path.join(self.work, "relay-out")
        os.makedirs(self.relay_out)
        port_file = os.path.join(self.work, "relay-port")
        relay = subprocess.Popen(["python3", RELAY, "--cert", cert, "--key", key, "--out", self.relay_out,
                                  "--user", "officer", "--password", "s3cret pass", "--port-file", port_file],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.addCleanup(relay.wait)
        self.addCleanup(relay.terminate)
        def read():
            if not os.path.exists(port_file):
                return ""
            with open(port_file) as file:
                return file.read()
        written = self.until("the relay to listen", lambda: read().endswith("\n") or relay.poll() is not None,
                             lambda: (read(), relay.poll()))
        self.assertIsNone(relay.poll(), "the relay (python3 with aiosmtpd) exited")
        return int(read())

    def relay_arguments(self, port):
        return ["--base-url", "https://vote.example.org", "--help-contact", "secretary@example.org",
                "--from", "vote@example.org", "--smtp-host", "127.0.0.1", "--smtp-port", str(port),
                "--smtp-cacert", os.path.join(self.work, "relay-cert.pem"), "--smtp-user", "officer",
                "--smtp-password-file", os.path.join(self.work, "smtp-password"), "--rate", "100000"]

    def relayed(self):
        """The messages the relay accepted, decoded."""
        messages = []
        for path in sorted(glob.glob(os.path.join(self.relay_out, "*.json"))):
            with open(path, encoding="utf-8") as file:
                messages.append(json.load(file))
        return messages

    def test_desk_counts_charts_and_reminds(self):
        d = self.driver
        now = this_minute()
        port = self.start_relay()
        url = self.serve(0)
        admin = self.admin_token()
        request(f"{url}/api/v1/places", {
            "name": "Building committee",
            "registration": {"start": iso(now - MINUTE), "end": iso(now + 60 * MINUTE)},
            "voting": {"start": iso(now + 60 * MINUTE), "end": iso(now + 120 * MINUTE)}}, admin)
        request(f"{url}/api/v1/places/1/candidates", {"name": "Ada", "pledge": ""}, admin)

        # The members' list in the console: Unit picked as the identity, the contact columns guessed and shown.
        self.sign_in(admin)
        self.until("the place in the console", lambda: d.find_elements(By.CSS_SELECTOR, "#manage-place option"),
                   lambda: self.now_text("main"))
        path = os.path.join(self.work, "members.csv")
        with open(path, "w", encoding="utf-8") as file:
            file.write(MEMBERS)
        d.find_element(By.ID, "voters-csv").send_keys(path)
        self.shows("#voters-csv-count", "7 rows under the header")
        Select(d.find_element(By.ID, "voters-csv-identity")).select_by_visible_text("3. Unit")
        chosen = {kind: Select(d.find_element(By.ID, f"voters-csv-{kind}")).first_selected_option.text
                  for kind in ("name", "email", "language", "address")}
        self.assertEqual(chosen, {"name": "1. Name", "email": "2. Email", "language": "4. Lang", "address": "None"})
        marked = [th.text.replace("\n", " ") for th in d.find_elements(By.CSS_SELECTOR, "#voters-csv-table th.chosen")]
        self.assertEqual(marked, ["Name name", "Email e-mail", "Unit identity", "Lang language"])
        self.shows("#voters-csv-refusals", "line 7: the e-mail address is not one")
        d.find_element(By.CSS_SELECTOR, "#authorize-csv button[type=submit]").click()
        self.shows("#console-outcome", "6 voters authorised")
        tokens_file = self.until("the tokens file", lambda: next(iter(
            p for p in glob.glob(os.path.join(self.downloads, "*.csv"))), None), lambda: os.listdir(self.downloads))
        time.sleep(0.5)  # the download's last bytes
        with open(tokens_file, encoding="utf-8") as file:
            tokens = dict(line.split(",")[:2] for line in file.read().split("\n")[1:] if line)

        # Voting: two members at its first minute, one twenty minutes on; the desk is opened forty minutes in.
        for offset, voters in ((VOTING, ["U-101", "U-102"]), (VOTING + 20 * MINUTE, ["U-107"])):
            url = self.serve(offset)
            for voter in voters:
                request(f"{url}/api/v1/places/1/votes", {"candidate": 1, "token": tokens[voter]})
        url = self.serve(VOTING + 40 * MINUTE, self.relay_arguments(port))
        self.sign_in(admin)
        self.until("the place in the console", lambda: d.find_elements(By.CSS_SELECTOR, "#manage-place option"),
                   lambda: self.now_text("main"))
        d.find_element(By.ID, "open-desk").click()
        self.until("the desk", lambda: d.execute_script("return document.getElementById('main').dataset.route") == "#/desk/1",
                   lambda: self.now_text("main"))
        self.shows("h1", "Desk: Building committee")
        self.assertEqual(self.text("#desk-authorized"), "6")
        self.assertEqual(self.text("#desk-voted"), "3")
        self.assertEqual(self.text("#desk-turnout"), "50%")
        self.assertEqual(self.text("#desk-withdrawn"), "0")
        chart = d.find_element(By.ID, "desk-chart")
        self.assertEqual(chart.get_attribute("data-total"), "3")
        buckets = int(chart.get_attribute("data-buckets"))
        self.assertTrue(10 <= buckets <= 48, buckets)
        points = d.find_elements(By.CSS_SELECTOR, "#desk-chart circle.point")
        self.assertEqual([p.get_attribute("data-total") for p in points][-1], "3")
        self.assertEqual(len(d.find_element(By.CSS_SELECTOR, "#desk-chart polyline").get_attribute("points").split()), buckets + 1)
        self.assertIn("Turnout over time, 50%", d.find_element(By.CSS_SELECTOR, "#desk-chart title").get_attribute("textContent"))
        self.assertEqual(self.text("#desk-in-book"), "6")
        self.assertEqual(self.text("#desk-without-email"), "1")
        self.assertEqual(self.text("#desk-not-mailed"), "5")
        self.assertEqual(self.text("#desk-last-reminder"), "never")

        # The reminder: the relay takes one (Refused Person is refused by it); progress reaches done.
        d.find_element(By.ID, "desk-remind").click()
        self.shows("#desk-progress-text", "Reminders done: 1 sent, 1 failed")
        self.assertEqual(d.find_element(By.ID, "desk-progress").get_attribute("data-state"), "done")
        self.shows("#desk-progress", "1 member has no e-mail address")
        self.shows("#desk-reminders", "1 sent, 1 failed")
        self.assertNotEqual(self.text("#desk-last-reminder"), "never")
        messages = self.relayed()
        self.assertEqual([m["recipients"] for m in messages], [["ada@example.org"]])
        self.assertIn("https://vote.example.org", messages[0]["text"])
        self.assertNotIn("null", self.now_text("main"))
        self.snap("console-desk")
        self.check_browser_log()


if __name__ == "__main__":
    unittest.main()
