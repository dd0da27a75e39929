"""A voter list as the organisation keeps it (issue 36), in the console, in headless Chromium against a real
`vote serve`: the officer chooses a tenants' table (Name, Email, Unit; a byte order mark, names with accents, a
quoted name holding the comma, one tenant without an e-mail). Before anything is sent the console reads it, finds
the columns, guesses Email for the identity, previews the first rows with that column marked, counts the rows
and names the row that will obviously be refused; a file that is not UTF-8 is refused at once. Authorised with
the Email column (sent by number), two tenants are voters and one line is refused; a list of which no line is
authorised is then an error next to the form, with no success box and no tokens file.

A second test reads a shareholders' register saved as TSV, in a place that asks questions: the Shares column is
guessed as the weight, a share count of 0 is an obvious refusal, and the members are authorised with their weights.

Screenshots: console-voter-table at 1280 px (the preview) and console-voter-table-weights at 360 px into $WEB_SCREENSHOTS (default: a new temporary
directory, printed)."""

import csv
import glob
import os
import time
import unittest

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from support import BrowserLedgerTest, MINUTE, iso, request, this_minute

TENANTS = ('\ufeffName,Email,Unit\r\n'
           'José Álvarez,Jose.Alvarez@example.org,1A\r\n'
           '"Kim, Min-ji",minji.kim@example.org,2B\r\n'
           'Zoë Brontë,,3C\r\n')
NOBODY = 'Name;Email\nAna;\nBen;ben@@example.org\n'


class VoterTableTest(BrowserLedgerTest):
    ledger_name = "Tenants' association"

    def write(self, name, data):
        path = os.path.join(self.work, name)
        with open(path, "wb") as file:
            file.write(data if isinstance(data, bytes) else data.encode())
        return path

    def downloaded(self):
        return set(glob.glob(os.path.join(self.downloads, "*")))

    def test_tenants_table_previewed_then_authorised(self):
        d = self.driver
        now = this_minute()
        url = self.serve(0)
        admin = self.admin_token()

        request(f"{url}/api/v1/places", {
            "name": "Building committee",
            "registration": {"start": iso(now - MINUTE), "end": iso(now + 60 * MINUTE)},
            "voting": {"start": iso(now + 60 * MINUTE), "end": iso(now + 120 * MINUTE)}}, admin)
        self.sign_in(admin)
        self.until("the place in the console", lambda: d.find_elements(By.CSS_SELECTOR, "#manage-place option"),
                   lambda: self.now_text("main"))

        # A file that is not UTF-8 (Latin-1) is refused before anything is sent.
        d.find_element(By.ID, "voters-csv").send_keys(self.write("latin1.csv", "Name,Email\nJosé,jose@example.org\n".encode("latin-1")))
        self.assertIn("is not UTF-8 text: nothing was sent", self.shows("#voters-csv-error", "not UTF-8"))
        self.assertEqual(self.driver.find_element(By.CSS_SELECTOR, "#voters-csv-error .alert").get_attribute("role"), "alert")
        self.assertFalse(d.find_element(By.ID, "voters-csv-columns").is_displayed())

        # The tenants' table: its columns in the menu, Email guessed, the preview before anything is sent.
        d.find_element(By.ID, "voters-csv").send_keys(self.write("tenants.csv", TENANTS))
        self.shows("#voters-csv-count", "3 rows under the header (comma separated)")
        self.assertEqual(self.now_text("#voters-csv-error"), "")
        identity = Select(d.find_element(By.ID, "voters-csv-identity"))
        self.assertEqual([o.text for o in identity.options],
                         ["1. Name", "2. Email", "3. Unit", "None: one identity per line (no header table)"])
        self.assertEqual(identity.first_selected_option.text, "2. Email")
        self.assertFalse(d.find_element(By.ID, "voters-csv-weight").is_displayed())  # no weights in this place
        caption = d.find_element(By.CSS_SELECTOR, "#voters-csv-table caption").text
        self.assertIn("The first 3 rows of tenants.csv", caption)
        rows = [[c.text for c in tr.find_elements(By.CSS_SELECTOR, "th, td")]
                for tr in d.find_elements(By.CSS_SELECTOR, "#voters-csv-table tr")]
        self.assertEqual(rows[0][0], "Line")
        self.assertEqual([cell.split("\n")[0] for cell in rows[0][1:]], ["Name", "Email", "Unit"])  # no BOM
        self.assertEqual(rows[1:], [["2", "José Álvarez", "Jose.Alvarez@example.org", "1A"],
                                    ["3", "Kim, Min-ji", "minji.kim@example.org", "2B"],
                                    ["4", "Zoë Brontë", "", "3C"]])
        marked = d.find_elements(By.CSS_SELECTOR, "#voters-csv-table th.chosen")
        self.assertEqual([th.text.replace("\n", " ") for th in marked], ["Name name", "Email identity"])  # Name: contact book
        refusals = self.text("#voters-csv-refusals")
        self.assertIn("1 row will obviously be refused. The server decides", refusals)
        self.assertIn("line 4: the identity is empty", refusals)

        # The Name column as identity would refuse nothing obvious; back to Email, by keyboard.
        identity.select_by_visible_text("1. Name")
        self.shows("#voters-csv-refusals", "No row is obviously refused")
        self.assertEqual([th.text.replace("\n", " ") for th in d.find_elements(By.CSS_SELECTOR, "#voters-csv-table th.chosen")],
                         ["Name identity", "Email e-mail"])  # the e-mail column stays the address
        d.find_element(By.ID, "voters-csv-identity").click()
        identity.select_by_visible_text("2. Email")
        self.shows("#voters-csv-refusals", "line 4: the identity is empty")
        d.execute_script("document.getElementById('authorize-csv').scrollIntoView()")
        self.snap("console-voter-table", widths=(1280,))

        # Authorised with the Email column: two tenants, one line refused, the tokens file downloaded.
        before = self.downloaded()
        d.find_element(By.CSS_SELECTOR, "#authorize-csv button[type=submit]").click()
        outcome = self.shows("#console-outcome", "2 voters authorised")
        self.assertIn("1 line was refused", outcome)
        self.assertIn("line 4:", outcome)
        self.assertEqual(d.find_element(By.CSS_SELECTOR, "#console-outcome .ok").get_attribute("role"), "status")
        turnout = request(f"{url}/api/v1/places/1/tally")["turnout"]
        self.assertEqual(turnout["authorized"], 2)
        tokens_file = self.until("the tokens file", lambda: next(iter(
            {p for p in self.downloaded() - before if not p.endswith(".crdownload")}), None), self.downloaded)
        with open(tokens_file, encoding="utf-8") as file:
            voters = sorted(row["voter"] for row in csv.DictReader(file))
        self.assertEqual(voters, ["Jose.Alvarez@example.org", "minji.kim@example.org"])  # as listed
        self.assertFalse(d.find_element(By.ID, "voters-csv-columns").is_displayed())  # the form is cleared

        # A list of which no line is authorised (semicolons): an error next to the form, no success, no file.
        d.find_element(By.ID, "voters-csv").send_keys(self.write("nobody.csv", NOBODY))
        self.shows("#voters-csv-count", "2 rows under the header (semicolon separated)")
        self.shows("#voters-csv-refusals", "2 rows will obviously be refused")
        before = self.downloaded()
        d.find_element(By.CSS_SELECTOR, "#authorize-csv button[type=submit]").click()
        error = self.shows("#voters-csv-error", "Refused:")
        self.assertIn("line 2", error)
        self.assertEqual(d.find_element(By.CSS_SELECTOR, "#voters-csv-error .alert").get_attribute("role"), "alert")
        self.assertEqual(d.find_elements(By.CSS_SELECTOR, "#console-outcome .ok"), [])
        time.sleep(1)  # a download, had one been started, would show by now
        self.assertEqual(self.downloaded() - before, set())
        self.assertEqual(request(f"{url}/api/v1/places/1/tally")["turnout"]["authorized"], 2)
        self.check_browser_log()

    def test_members_table_with_shares(self):
        """A shareholders' register saved as TSV, in a place that asks questions: the weight column is guessed
        (Shares), a share count of 0 is named as an obvious refusal, and the members are authorised with their
        weights (weight_column sent by number)."""
        d = self.driver
        now = this_minute()
        url = self.serve(0)
        admin = self.admin_token()

        motion = {"title": "Approve the accounts", "method": "yes-no", "options": [], "blank": False,
                  "threshold": "2/3 of yes-and-no"}
        request(f"{url}/api/v1/places", {
            "name": "General meeting", "questions": [motion],
            "registration": {"start": iso(now - MINUTE), "end": iso(now + 60 * MINUTE)},
            "voting": {"start": iso(now + 60 * MINUTE), "end": iso(now + 120 * MINUTE)}}, admin)
        self.sign_in(admin)
        self.until("the place in the console", lambda: d.find_elements(By.CSS_SELECTOR, "#manage-place option"),
                   lambda: self.now_text("main"))
        register = "Member id\tFull name\tShares\nM-001\tAnna Schmidt\t120\nM-002\tLee Jun-ho\t30\nM-003\tOla Nordmann\t0\n"
        d.find_element(By.ID, "voters-csv").send_keys(self.write("register.tsv", register))
        self.shows("#voters-csv-count", "3 rows under the header (tab separated)")
        self.assertEqual(Select(d.find_element(By.ID, "voters-csv-identity")).first_selected_option.text, "1. Member id")
        weight = Select(d.find_element(By.ID, "voters-csv-weight"))
        self.assertEqual(weight.first_selected_option.text, "3. Shares")
        self.assertEqual([th.text.replace("\n", " ") for th in d.find_elements(By.CSS_SELECTOR, "#voters-csv-table th.chosen")],
                         ["Member id identity", "Full name name", "Shares weight"])
        self.assertIn("line 4: the weight is not a whole number from 1 to 1000000", self.text("#voters-csv-refusals"))
        self.snap("console-voter-table-weights", widths=(360,))
        d.find_element(By.CSS_SELECTOR, "#authorize-csv button[type=submit]").click()
        outcome = self.shows("#console-outcome", "2 voters authorised")
        self.assertIn("1 line was refused", outcome)
        turnout = request(f"{url}/api/v1/places/1/tally")["turnout"]
        self.assertEqual((turnout["authorized"], turnout["authorized_weight"]), (2, 150))
        self.check_browser_log()


if __name__ == "__main__":
    unittest.main()
