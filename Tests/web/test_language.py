"""The app speaks the browser's language (Korean or English) before anyone touches the switch, and it
loads under no server at all without a script error but the failed API call."""

import unittest

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from support import REPO, chromium, static_server


class LanguageTests(unittest.TestCase):
    def nav_and_lang(self, language):
        driver = chromium(language=language)
        try:
            with static_server(REPO) as base:
                driver.get(base + "/Web/index.html#/audit")
                WebDriverWait(driver, 20).until(
                    lambda d: d.execute_script("return document.getElementById('main').dataset.route") == "#/audit")
                nav = [a.text for a in driver.find_elements(By.CSS_SELECTOR, "#nav a")]
                return nav, driver.execute_script("return document.documentElement.lang"), driver.find_element(
                    By.CSS_SELECTOR, "main h1").text
        finally:
            driver.quit()

    def test_korean_browser_gets_korean(self):
        nav, lang, heading = self.nav_and_lang("ko-KR")
        self.assertEqual(lang, "ko")
        self.assertEqual(nav[0], "투표소")
        self.assertEqual(heading, "투표 영수증 확인")

    def test_other_browsers_get_english(self):
        nav, lang, heading = self.nav_and_lang("fr-FR")
        self.assertEqual(lang, "en")
        self.assertEqual(nav[0], "Places")
        self.assertEqual(heading, "Check a vote receipt")


if __name__ == "__main__":
    unittest.main()
