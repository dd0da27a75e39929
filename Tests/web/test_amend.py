"""A place corrected in the console (FORMAT.md §11.28, POST /api/v1/places/P/amend): its name before voting
opens, its voting window extended by a day once voting is open (the start then fixed), a shortening refused with
the server's own message, nothing offered once it has ended; the public results page and place list say how many
times it was amended, and the API counts the amendments.

Time: the server runs at a DEBUG test clock (VOTE_TEST_CLOCK_OFFSET_MS), restarted inside each window."""

import unittest
from datetime import datetime

from selenium.webdriver.common.by import By

from support import BrowserLedgerTest, CLOSED, MINUTE, VOTING, iso, request, this_minute

DAY = 24 * 60 * MINUTE



class AmendTest(BrowserLedgerTest):
    ledger_name = "Club"

    def correct(self):
        """Sends the correction form (the place chosen in the console)."""
        self.driver.find_element(By.CSS_SELECTOR, "#amend-place button[type=submit]").click()

    def test_correct_a_place(self):
        d = self.driver
        now = this_minute()
        url = self.serve(0)
        admin = self.admin_token()
        made = request(url + "/api/v1/places", {
            "name": "Club board 2025", "description": "The board",
            "registration": {"start": iso(now - MINUTE), "end": iso(now + 60 * MINUTE)},
            "voting": {"start": iso(now + 60 * MINUTE), "end": iso(now + 120 * MINUTE)},
        }, admin)
        place = made["place"]

        # Before voting: the form holds the place as it is; the name is corrected, only it is sent.
        self.sign_in(admin)
        self.wait.until(lambda d: d.find_element(By.ID, "amend-name").get_attribute("value") == "Club board 2025")
        self.assertEqual(d.find_element(By.ID, "amend-description").get_attribute("value"), "The board")
        self.assertTrue(d.find_element(By.ID, "amend-vote-start").is_enabled())
        self.assertIn("may move or shrink", self.text("#amend-help"))
        # Nothing changed: nothing sent.
        self.correct()
        self.assertIn("Nothing to record", self.text("#amend-place-error .alert"))
        self.type_into("amend-name", "Club board 2026")
        self.correct()
        self.shows("#console-outcome", f"Corrected place {place} at block")
        self.shows("#manage-place", "Club board 2026")
        shown = request(f"{url}/api/v1/places/{place}")
        self.assertEqual((shown["name"], shown["description"], shown["amendments"]), ("Club board 2026", "The board", 1))
        self.assertEqual(datetime.fromisoformat(shown["voting"]["end"]).timestamp() * 1000, now + 120 * MINUTE)

        # Voting open: only a later end; the start cannot be edited.
        url = self.serve(VOTING)
        self.sign_in(admin)
        self.wait.until(lambda d: d.find_element(By.ID, "amend-name").get_attribute("value") == "Club board 2026")
        self.assertIn("may only be extended", self.text("#amend-help"))
        self.assertFalse(d.find_element(By.ID, "amend-vote-start").is_enabled())
        self.set_time("amend-vote-end", now + 120 * MINUTE + DAY)
        self.correct()
        self.shows("#console-outcome", f"Corrected place {place} at block")
        shown = request(f"{url}/api/v1/places/{place}")
        self.assertEqual(datetime.fromisoformat(shown["voting"]["end"]).timestamp() * 1000, now + 120 * MINUTE + DAY)
        self.assertEqual(datetime.fromisoformat(shown["voting"]["start"]).timestamp() * 1000, now + 60 * MINUTE)
        self.assertEqual(shown["amendments"], 2)
        # The form shows the new end; a shortening is refused with the server's message, next to the form.
        self.wait.until(lambda d: d.find_element(By.ID, "amend-vote-end").get_attribute("value")
                        == d.execute_script("const ms = arguments[0]; return new Date(ms - new Date(ms).getTimezoneOffset() * 60000).toISOString().slice(0, 16)",
                                            now + 120 * MINUTE + DAY))
        self.set_time("amend-vote-end", now + 100 * MINUTE)
        self.correct()
        refusal = self.shows("#amend-place-error [role=alert]", "extended but not shortened")
        self.assertIn(f"place {place} cannot be amended", refusal)
        self.assertEqual(request(f"{url}/api/v1/places/{place}")["amendments"], 2)
        self.snap("amend-console-voting")

        # The public views say it was amended, next to its windows.
        self.open(f"#/results/{place}")
        self.shows("#results-facts", "Amended 2 times")
        self.snap("amend-results")
        self.open("#/")
        self.shows("main .card", "Amended 2 times")
        self.assertEqual(request(f"{url}/api/v1/places/{place}/tally").get("amendments"), 2)
        self.assertEqual(request(f"{url}/api/v1/places")[0]["amendments"], 2)

        # Ended: the form is there but disabled, and says why.
        self.serve(CLOSED + DAY)
        self.sign_in(admin)
        self.shows("#amend-help", "an ended place cannot be corrected")
        self.assertFalse(d.find_element(By.ID, "amend-name").is_enabled())
        self.assertFalse(d.find_element(By.CSS_SELECTOR, "#amend-place button[type=submit]").is_enabled())
        self.check_browser_log()


if __name__ == "__main__":
    unittest.main()
