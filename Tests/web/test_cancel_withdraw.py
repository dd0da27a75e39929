"""Corrections in the console: a voter withdrawn (FORMAT.md §11.29, POST /api/v1/places/P/voters/withdraw) and a
place cancelled (§11.30, POST /api/v1/places/P/cancel). Each needs its box ticked before anything is sent; a
withdrawal the server refuses (a voter who has voted, one already withdrawn) shows the server's own message next to
its form; the withdrawn count shows next to the turnout in the console, on the place page and the results page.
The cancel form is offered only before voting opens; once a place is cancelled, the console says so with the
reason, the forms that would record something there are disabled and say why, and the public place list, place
page and results page show "Cancelled" and the reason.

Time: the server runs at a DEBUG test clock (VOTE_TEST_CLOCK_OFFSET_MS), restarted inside each window."""

import json
import unittest
import urllib.error
import urllib.request

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from support import BrowserLedgerTest, MINUTE, VOTING, iso, request, this_minute


def refused(url, body, token):
    """A POST the server refuses: its status and its error ({code, message})."""
    data = json.dumps(body).encode()
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {token}"}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=data, headers=headers)) as response:
            raise AssertionError(f"POST {url} was not refused: {response.status}")
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)["error"]


class CancelWithdrawTest(BrowserLedgerTest):
    ledger_name = "Club"

    def new_place(self, url, admin, now, name):
        """A place with one candidate, in registration at offset 0 and voting at VOTING; its id."""
        place = request(url + "/api/v1/places", {
            "name": name,
            "registration": {"start": iso(now - MINUTE), "end": iso(now + 60 * MINUTE)},
            "voting": {"start": iso(now + 60 * MINUTE), "end": iso(now + 120 * MINUTE)},
        }, admin)["place"]
        request(f"{url}/api/v1/places/{place}/candidates", {"name": "Ada", "pledge": ""}, admin)
        return place

    def choose(self, place):
        """The place chosen in the console's "Manage a place" menu, once it is there."""
        d = self.driver
        self.until(f"place {place} in the console", lambda: d.find_elements(By.CSS_SELECTOR, f"#manage-place option[value='{place}']"),
                   lambda: self.now_text("#manage-place"))
        Select(d.find_element(By.ID, "manage-place")).select_by_value(str(place))

    def submit(self, form):
        self.driver.find_element(By.CSS_SELECTOR, f"#{form} button[type=submit]").click()

    def test_withdraw_a_voter(self):
        d = self.driver
        now = this_minute()
        url = self.serve(0)
        admin = self.admin_token()
        place = self.new_place(url, admin, now, "Club board")
        tokens = {voter: request(f"{url}/api/v1/places/{place}/voters", {"voter": voter}, admin)["token"]
                  for voter in ("ana@example.org", "bo@example.org", "cy@example.org")}

        # Voting open; one voter has voted.
        url = self.serve(VOTING)
        request(f"{url}/api/v1/places/{place}/votes", {"candidate": 1, "token": tokens["ana@example.org"].replace("-", "").upper()})
        self.sign_in(admin)
        self.choose(place)
        self.shows("#voter-counts", "1 of 3 voters")
        self.assertNotIn("withdrawn", self.now_text("#voter-counts"))

        # Nothing is sent until the box is ticked.
        self.type_into("withdraw-identity", "bo@example.org")
        self.submit("withdraw-voter")
        self.assertTrue(d.execute_script("return !document.getElementById('withdraw-confirm').checkValidity()"))
        self.assertNotIn("withdrawn", request(f"{url}/api/v1/places/{place}"))
        d.find_element(By.ID, "withdraw-confirm").click()
        self.submit("withdraw-voter")
        self.shows("#console-outcome", f"Withdrew a voter from place {place} at block")
        self.shows("#console-outcome", "2 voters remain authorised")
        self.shows("#voter-counts", "1 voter withdrawn")
        self.assertIn("1 of 2 voters", self.now_text("#voter-counts"))
        self.assertEqual(request(f"{url}/api/v1/places/{place}")["withdrawn"], 1)
        tally = request(f"{url}/api/v1/places/{place}/tally")
        self.assertEqual((tally["withdrawn"], tally["turnout"]["authorized"]), (1, 2))
        # The form was reset: the box must be ticked again.
        self.assertFalse(d.find_element(By.ID, "withdraw-confirm").is_selected())

        # A voter who has voted, and one already withdrawn: refused (409), with the server's own message.
        for voter in ("ana@example.org", "bo@example.org"):
            status, error = refused(f"{url}/api/v1/places/{place}/voters/withdraw", {"identity": voter}, admin)
            self.assertEqual((status, error["code"]), (409, "withdrawal_refused"))
            self.type_into("withdraw-identity", voter)
            d.find_element(By.ID, "withdraw-confirm").click()
            self.submit("withdraw-voter")
            shown = self.shows("#withdraw-voter-error [role=alert]", error["message"])
            self.assertTrue(shown.startswith("Refused: "), shown)
            # An edit answers the refusal shown.
            self.type_into("withdraw-identity", "x")
            self.until("the refusal cleared", lambda: not self.now_text("#withdraw-voter-error"),
                       lambda: self.now_text("#withdraw-voter-error"))
            d.find_element(By.ID, "withdraw-confirm").click()  # untick: the form was not reset
        self.assertEqual(request(f"{url}/api/v1/places/{place}")["withdrawn"], 1)
        self.snap("withdraw-console")

        # The public place page and results page show the withdrawn count with the turnout.
        self.open(f"#/place/{place}")
        self.shows("main", "Turnout: 1 of 2 voters")
        self.shows("main", "1 voter withdrawn")
        self.open(f"#/results/{place}")
        self.shows("#turnout", "1 voter withdrawn")
        self.check_browser_log()

    def test_cancel_a_place(self):
        d = self.driver
        now = this_minute()
        url = self.serve(0)
        admin = self.admin_token()
        place = self.new_place(url, admin, now, "Spring board")
        other = self.new_place(url, admin, now, "Autumn board")
        request(f"{url}/api/v1/places/{place}/voters", {"voter": "ana@example.org"}, admin)

        # Before voting opens the cancel form is offered, and the other forms are open.
        self.sign_in(admin)
        self.choose(place)
        self.shows("#cancel-help", "This cannot be undone")
        self.assertTrue(d.find_element(By.ID, "cancel-place").is_displayed())
        self.assertFalse(d.find_element(By.ID, "place-cancelled").is_displayed())
        self.assertTrue(d.find_element(By.ID, "voter-identity").is_enabled())

        # Nothing is sent until the box is ticked.
        reason = "Merged into the autumn election"
        self.type_into("cancel-reason", reason)
        self.submit("cancel-place")
        self.assertTrue(d.execute_script("return !document.getElementById('cancel-confirm').checkValidity()"))
        self.assertEqual(request(f"{url}/api/v1/places/{place}")["status"], "registration")
        d.find_element(By.ID, "cancel-confirm").click()
        self.submit("cancel-place")
        self.shows("#console-outcome", f"Cancelled place {place} at block")
        self.assertNotIn("undefined", self.now_text("#console-outcome"))

        # The console: "Cancelled" with the reason, no cancel form, and every form that records something disabled,
        # saying why.
        notice = self.shows("#place-cancelled", "This place is cancelled")
        self.assertIn(f"Reason: {reason}", notice)
        self.assertFalse(d.find_element(By.ID, "cancel-place").is_displayed())
        self.assertIn(f"{place}: Spring board (Cancelled)", self.now_text("#manage-place"))
        for form in ("register-candidate", "withdraw", "authorize-one", "reissue-one", "withdraw-voter", "authorize-csv"):
            fieldset = d.find_element(By.CSS_SELECTOR, f"#{form} fieldset")
            self.assertTrue(d.execute_script("return arguments[0].disabled", fieldset), form)
            self.assertFalse(d.find_element(By.CSS_SELECTOR, f"#{form} button[type=submit]").is_enabled(), form)
            self.assertEqual(d.find_element(By.CSS_SELECTOR, f"#{form} .cancelled-why").text,
                             "Not available: this place is cancelled.", form)
        self.assertFalse(d.find_element(By.ID, "amend-name").is_enabled())
        self.assertIn("a cancelled place cannot be corrected", self.text("#amend-help"))
        self.assertIn("no results to certify", self.text("#certify-state"))
        self.snap("cancel-console")

        # Another place, not cancelled: its forms open again and it may be cancelled.
        self.choose(other)
        self.until("the other place's forms", lambda: d.find_element(By.ID, "voter-identity").is_enabled(),
                   lambda: self.now_text("#authorize-one"))
        self.assertFalse(d.find_element(By.ID, "place-cancelled").is_displayed())
        self.assertFalse(d.find_element(By.CSS_SELECTOR, "#authorize-one .cancelled-why").is_displayed())
        self.assertTrue(d.find_element(By.ID, "cancel-place").is_displayed())

        # The API: cancelled with its reason, and later commands refused.
        shown = request(f"{url}/api/v1/places/{place}")
        self.assertEqual((shown["status"], shown["cancellation_reason"]), ("cancelled", reason))
        self.assertEqual(request(f"{url}/api/v1/places/{place}/tally")["status"], "cancelled")
        status, error = refused(f"{url}/api/v1/places/{place}/voters", {"voter": "bo@example.org"}, admin)
        self.assertEqual((status, error["code"]), (409, "place_cancelled"))
        status, error = refused(f"{url}/api/v1/places/{place}/cancel", {}, admin)
        self.assertEqual((status, error["code"]), (409, "cancellation_refused"))

        # The public views: the place list (a "Cancelled" section), the place page and the results page.
        self.open("#/")
        card = self.shows("#status-cancelled + ul .card", "Spring board")
        self.assertIn(f"Reason: {reason}", card)
        self.assertIn("no voting will take place", card)
        self.assertNotIn("Autumn board", self.now_text("#status-cancelled + ul"))
        self.open(f"#/place/{place}")
        self.shows("main .badge", "Cancelled")
        self.shows("main", f"Reason: {reason}")
        self.open(f"#/results/{place}")
        self.shows("#results-status", "Cancelled")
        self.shows("#results-facts", f"Reason: {reason}")
        self.shows("#results-state", "cancelled before voting opened")
        self.assertEqual(d.find_elements(By.CSS_SELECTOR, "#results-body > *"), [])
        self.snap("cancel-results")
        self.assertEqual(d.find_elements(By.CSS_SELECTOR, "#results-body > *"), [])  # not drawn again at another width

        # Voting time: the place stays cancelled, its booth says so; the open place offers no cancellation.
        url = self.serve(VOTING)
        self.assertEqual(request(f"{url}/api/v1/places/{place}")["status"], "cancelled")
        self.open(f"#/booth/{place}")
        self.shows("main .alert", "This place was cancelled")
        self.sign_in(admin)
        self.choose(other)
        self.shows("#manage-place", "Autumn board (Voting now)")
        self.until("no cancel form once voting is open", lambda: not d.find_element(By.ID, "cancel-place").is_displayed(),
                   lambda: self.now_text("#cancel-place"))
        status, error = refused(f"{url}/api/v1/places/{other}/cancel", {"reason": "too late"}, admin)
        self.assertEqual((status, error["code"]), (409, "cancellation_refused"))
        self.check_browser_log()


if __name__ == "__main__":
    unittest.main()
