"""What the browser tests share: a headless Chromium from Debian driven by Selenium, a static file server
on a loopback port, the `vote` binary, and an RFC 9162 tree over a ledger's leaf hashes (from
`vote export --events`) that plays the server's part of handing out consistency proofs; for the tests that run
`vote serve`, its API as JSON, and a test class with the steps they take in the console and the booth alike."""

import base64
import contextlib
import hashlib
import http.server
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.request

from selenium import webdriver
from selenium.webdriver import ActionChains
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.actions import interaction
from selenium.webdriver.common.actions.action_builder import ActionBuilder
from selenium.webdriver.common.actions.pointer_input import PointerInput
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VECTORS = os.path.join(REPO, "Ledger", "vectors")
WEB = os.path.join(REPO, "Sources", "VoteServer", "Web")  # the app `vote serve` ships as a resource

MINUTE = 60_000  # ms
# The clock offsets (ms) at which `serve` stands inside the voting window that `fill_windows` gives a place, and
# after its close: the tests step the server's clock through a place's life rather than wait for it.
VOTING = 61 * MINUTE
CLOSED = 121 * MINUTE


def iso(ms):
    """A time in ms since the epoch as the API's windows take it: ISO 8601 in UTC, to the second."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ms / 1000))


def this_minute():
    """Now in ms since the epoch, down to the minute (a datetime-local field holds minutes): where a test that
    serves at offset 0 lays out its windows from."""
    return int(time.time() * 1000) // MINUTE * MINUTE


def vote_binary():
    """The `vote` binary under test: $VOTE_BIN, else the debug build of this checkout."""
    path = os.environ.get("VOTE_BIN") or os.path.join(REPO, ".build", "debug", "vote")
    if not os.access(path, os.X_OK):
        raise SystemExit(f"no vote binary at {path} (swift build, or set VOTE_BIN)")
    return path


def chromium(width=1280, height=900, language="en-US", extra=()):
    """Headless Debian Chromium through Debian's chromedriver (no downloaded browser), with `extra` switches."""
    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     f"--window-size={width},{height}", f"--lang={language}", "--no-first-run", *extra):
        options.add_argument(argument)
    options.add_experimental_option("prefs", {"intl.accept_languages": language})
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})  # CSP violations show up here
    service = Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver"))
    driver = webdriver.Chrome(options=options, service=service)
    driver.set_script_timeout(60)
    return driver


@contextlib.contextmanager
def static_server(root):
    """`root` over HTTP on an ephemeral loopback port (the standard library's http.server)."""
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=root, **kwargs)

        def log_message(self, *args):
            pass

    Quiet.extensions_map = {**Quiet.extensions_map, ".js": "text/javascript"}
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _node(left, right):
    return hashlib.sha256(b"\x01" + left + right).digest()


def _split(n):
    k = 1
    while k * 2 < n:
        k *= 2
    return k


class Tree:
    """RFC 9162 §2.1 over the leaf hashes of a ledger, read with the real binary."""

    def __init__(self, vote, ledger):
        lines = subprocess.run([vote, "export", "--events", "--ledger", ledger], check=True,
                               capture_output=True, text=True).stdout.splitlines()
        events = [json.loads(line) for line in lines]
        self.leaves = [bytes.fromhex(e["hash"]) for e in events]
        genesis = events[0]["event"]
        self.origin = "voteledger/" + genesis["ledger_id"].replace("-", "").lower()
        self.authority_key = bytes.fromhex(genesis["authority_key"])

    def root(self, size):
        return self._mth(self.leaves[:size])

    def _mth(self, leaves):
        if len(leaves) == 1:
            return leaves[0]
        k = _split(len(leaves))
        return _node(self._mth(leaves[:k]), self._mth(leaves[k:]))

    def consistency(self, first, second):
        """PROOF(first, D[second]) (RFC 9162 §2.1.4.1)."""
        def subproof(m, leaves, whole):
            n = len(leaves)
            if m == n:
                return [] if whole else [self._mth(leaves)]
            k = _split(n)
            if m <= k:
                return subproof(m, leaves[:k], whole) + [self._mth(leaves[k:])]
            return subproof(m - k, leaves[k:], False) + [self._mth(leaves[:k])]
        return subproof(first, self.leaves[:second], True)

    def verifier_key(self):
        """The authority's C2SP verifier key line, computed here from the genesis event's key."""
        key_id = hashlib.sha256(self.origin.encode() + b"\n\x01" + self.authority_key).digest()[:4]
        encoded = base64.b64encode(b"\x01" + self.authority_key).decode()
        return f"{self.origin}+{key_id.hex()}+{encoded}"


# WCAG 2.1 AA (1.4.3): every visible element with text of its own, against the first opaque background behind
# it, has a contrast ratio of at least 4.5:1, or 3:1 for large text (24 px, or 18.66 px bold). Returns the
# elements that fail, each with its ratio.
CONTRAST = """
const rgb = (text) => { const m = /rgba?\\(([^)]+)\\)/.exec(text); return m ? m[1].split(',').map(Number) : null; };
const luminance = ([r, g, b]) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
};
const background = (element) => {
    for (let e = element; e; e = e.parentElement) {
        const c = rgb(getComputedStyle(e).backgroundColor);
        if (c && (c.length < 4 || c[3] > 0)) return c;
    }
    return [255, 255, 255];
};
const failures = [];
for (const element of document.querySelectorAll('body *')) {
    if (!element.checkVisibility()) continue;
    if (![...element.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim())) continue;
    const style = getComputedStyle(element);
    const fg = rgb(element instanceof SVGElement ? style.fill : style.color);
    if (!fg) continue;
    const [a, b] = [luminance(fg), luminance(background(element))];
    const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    const size = parseFloat(style.fontSize), bold = parseInt(style.fontWeight) >= 700;
    const needed = size >= 24 || (bold && size >= 18.66) ? 3 : 4.5;
    if (ratio < needed) {
        failures.push(element.tagName + ' "' + element.textContent.trim().slice(0, 40) + '" ' + ratio.toFixed(2) + ' < ' + needed);
    }
}
return failures;
"""

def request(url, body=None, token=None):
    """A JSON GET, or POST of `body`, with the admin `token` if given (a client of the API other than the browser)."""
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = None if body is None else json.dumps(body).encode()
    with urllib.request.urlopen(urllib.request.Request(url, data=data, headers=headers)) as response:
        return json.load(response)


def call(url, body=None, token=None, csv=None):
    """A JSON answer of the API, its status and body whatever the status (a refusal is an answer too), for set-up
    and checks beside the browser: `body` is POSTed as JSON, `csv` as a voter list."""
    headers = {}
    data = None
    if body is not None:
        headers["Content-Type"] = "application/json"
        data = json.dumps(body).encode()
    if csv is not None:
        headers["Content-Type"] = "text/csv"
        data = csv.encode()
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, data=data, headers=headers, method="POST" if data else "GET")
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


class Server:
    """`vote serve --listen 127.0.0.1:0` on `ledger` at a clock `offset` ms ahead; the printed line says
    where it listens (no sleep: that line is the signal)."""

    def __init__(self, vote, ledger, token_file, offset, arguments=()):
        env = {**os.environ, "VOTE_TEST_CLOCK_OFFSET_MS": str(offset)}
        self.process = subprocess.Popen(
            [vote, "serve", "--listen", "127.0.0.1:0", "--ledger", ledger, "--admin-token-file", token_file,
             *arguments],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
        for line in self.process.stdout:
            if line.startswith("listening on "):
                self.url = line.split()[-1]
                break
        else:
            raise AssertionError(f"vote serve exited ({self.process.wait()}) before listening")

    def check_app(self):
        """The app itself is at /, with the headers that keep it safe (the issue's quality bar)."""
        try:
            with urllib.request.urlopen(self.url + "/") as response:
                page = response.read().decode()
                headers = response.headers
        except urllib.error.HTTPError as error:
            raise AssertionError(f"vote serve does not serve the web app (Sources/VoteServer/Web/) at /: {error}") from None
        assert 'src="app.js"' in page, "GET / is not the web app's index.html"
        policy = headers.get("Content-Security-Policy", "")
        for directive in ("script-src 'self'", "style-src 'self'", "frame-ancestors 'none'"):
            assert directive in policy, f"GET / has no {directive} in its Content-Security-Policy: {policy!r}"
        assert headers.get("X-Content-Type-Options") == "nosniff", "GET / lacks X-Content-Type-Options: nosniff"

    def stop(self):
        self.process.terminate()
        self.exit_status = self.process.wait(timeout=60)
        self.process.stdout.close()


class BrowserLedgerTest(unittest.TestCase):
    """A new ledger named `ledger_name`, `vote serve` on it (`serve`), and a headless Chromium that downloads
    into the test's directory and takes screenshots into $WEB_SCREENSHOTS (default: a new temporary directory,
    printed); and the steps that more than one test takes on the app's pages, written once so that the tests
    agree on them (the console's sign-in, a place's windows and questions, certifying, dragging a ranking)."""

    ledger_name = "Test election"

    def setUp(self):
        self.vote = vote_binary()
        self.work = tempfile.mkdtemp(prefix="vote-web-")
        self.addCleanup(shutil.rmtree, self.work, True)
        self.ledger = os.path.join(self.work, "ledger")
        self.downloads = os.path.join(self.work, "downloads")
        os.makedirs(self.downloads)
        self.shots = os.environ.get("WEB_SCREENSHOTS") or tempfile.mkdtemp(prefix="vote-web-shots-")
        os.makedirs(self.shots, exist_ok=True)
        print(f"screenshots in {self.shots}")
        subprocess.run([self.vote, "init", "--ledger", self.ledger, "--name", self.ledger_name, "--no-passphrase"],
                       check=True, capture_output=True)
        self.token_file = os.path.join(self.work, "admin-token")
        self.server = None
        self.driver = chromium(1280, 900, "en-US")
        self.addCleanup(self.driver.quit)
        self.driver.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": self.downloads})
        self.wait = WebDriverWait(self.driver, 30)
        self.addCleanup(lambda: self.server and self.server.stop())

    def admin_token(self):
        """The admin token the served ledger's `vote serve` wrote for the console."""
        with open(self.token_file) as file:
            return file.read().strip()

    def serve(self, offset, arguments=()):
        """`vote serve` at a clock `offset` ms ahead, with `arguments` besides (the one before it stopped, and checked
        to exit cleanly)."""
        if self.server:
            self.server.stop()
            self.assertEqual(self.server.exit_status, 0)
        self.server = Server(self.vote, self.ledger, self.token_file, offset, arguments)
        self.server.check_app()
        return self.server.url

    def open(self, route, shown=None):
        """The page at `route`, once the app has rendered it (main's data-route names it: `shown`, else `route`)."""
        url = self.server.url + "/" + route
        if self.driver.current_url == url:
            self.driver.refresh()  # the same hash again: no hashchange, so load the page anew
        else:
            self.driver.get(url)
        shown = shown or route
        self.wait.until(lambda d: d.execute_script("return document.getElementById('main').dataset.route") == shown)

    def text(self, selector):
        """The visible text of `selector` once it is shown (read in one script: pages re-render often)."""
        return self.wait.until(lambda d: d.execute_script(
            "const e = document.querySelector(arguments[0]); return e && e.offsetParent !== null ? e.innerText : null",
            selector))

    def now_text(self, selector):
        """The text of `selector` right now ('' if absent), for waits."""
        return self.driver.execute_script(
            "const e = document.querySelector(arguments[0]); return e ? e.innerText : ''", selector)

    def snap(self, name, widths=(360, 1280)):
        """The page at each of `widths` (phone and desktop), full height (the device metrics, not the window,
        which the headless screen would clip), checked for WCAG AA contrast."""
        for width in widths:
            metrics = {"width": width, "height": 800, "deviceScaleFactor": 1, "mobile": width < 600}
            self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
            height = self.driver.execute_script("return document.documentElement.scrollHeight")
            metrics["height"] = min(max(height, 640), 6000)
            self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
            self.driver.save_screenshot(os.path.join(self.shots, f"{name}-{width}.png"))
            self.assertEqual(self.driver.execute_script(CONTRAST), [], f"WCAG AA contrast on {name} at {width} px")
        self.driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})

    def check_browser_log(self):
        """Nothing the Content-Security-Policy refused, no script error: the browser logged nothing SEVERE but the
        HTTP 4xx answers that a test provokes on purpose ("status of 4")."""
        problems = [entry["message"] for entry in self.driver.get_log("browser")
                    if entry["level"] == "SEVERE" and "status of 4" not in entry["message"]]
        self.assertEqual(problems, [])

    # Waiting on the page, with what it showed when the wait ran out.

    def until(self, what, check, seen):
        """Waits (30 s) for `check()` and returns what it gave; on time out fails saying `what` was awaited and what
        `seen()` last showed (more than a bare TimeoutException)."""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if result := check():
                return result
            time.sleep(0.1)
        self.fail(f"waited 30 s for {what}; last saw: {seen()!r}")

    def shows(self, selector, words):
        """Waits until the text of `selector` holds `words`, and returns that text; fails with the text it last had."""
        return self.until(f"{words!r} in {selector}", lambda: words in (text := self.now_text(selector)) and text,
                          lambda: self.now_text(selector))

    # Typing, by keyboard and into forms.

    def press(self, *keys):
        """Keys typed into whatever has the focus, as a keyboard user types them."""
        ActionChains(self.driver).send_keys(*keys).perform()

    def focused(self):
        """What has the focus: its id, else its value (a radio), else the start of its text (a button)."""
        return self.driver.execute_script(
            "const e = document.activeElement; return e.id || e.value || e.textContent.trim().slice(0, 40)")

    def type_into(self, field_id, text):
        """The field `field_id` holding `text` alone (what was in it cleared)."""
        field = self.driver.find_element(By.ID, field_id)
        field.clear()
        field.send_keys(text)

    def set_time(self, field_id, ms):
        """A datetime-local field set to the instant `ms`, written in the browser's own time zone."""
        self.driver.execute_script("""
            const [id, ms] = arguments;
            const at = new Date(ms - new Date(ms).getTimezoneOffset() * 60000);
            document.getElementById(id).value = at.toISOString().slice(0, 16);
        """, field_id, ms)

    # The console.

    def sign_in(self, admin):
        """The console, signed in with the admin token, once it is shown (its places load after)."""
        self.open("#/authority")
        self.type_into("admin-token", admin)
        self.driver.find_element(By.XPATH, "//button[text()='Sign in']").click()
        self.until("the console", lambda: self.driver.find_elements(By.ID, "kind-questions"), lambda: self.now_text("main"))

    def fill_windows(self, now):
        """The new place's windows in the console's form: registration from a minute before `now` (this_minute())
        for an hour, then voting for an hour, so that the server at VOTING stands inside voting and at CLOSED after
        the close (and at 0, in registration)."""
        for field_id, ms in (("reg-start", now - MINUTE), ("reg-end", now + 60 * MINUTE),
                             ("vote-start", now + 60 * MINUTE), ("vote-end", now + 120 * MINUTE)):
            self.set_time(field_id, ms)

    def fill_question(self, n, question):
        """Question `n` of the console's editor, fresh (as "Add question" makes it: choose, not blank), filled in
        from `question` in the questions file's form: title, description, method, options, the numbers of its
        method, threshold and quorum, rule, and the blank box. A description, quorum or rule it lacks is left as
        the editor has it, so that a test can check the editor's default."""
        d = self.driver
        method = question["method"]
        self.type_into(f"qe{n}-title", question["title"])
        if question.get("description"):
            self.type_into(f"qe{n}-description", question["description"])
        Select(d.find_element(By.ID, f"qe{n}-method")).select_by_value(method)
        if method == "choose":
            self.type_into(f"qe{n}-options", "\n".join(question["options"]))
            for field in ("min", "max", "seats"):
                self.type_into(f"qe{n}-{field}", str(question[field]))
        elif method == "rank":
            self.type_into(f"qe{n}-options", "\n".join(question["options"]))
            self.type_into(f"qe{n}-rank-seats", str(question["seats"]))
            if "rule" in question:
                Select(d.find_element(By.ID, f"qe{n}-rule")).select_by_value(question["rule"])
        else:  # yes-no: a threshold with a fraction is "2/3 of yes-and-no", one without is its kind alone
            fraction, _, kind = question["threshold"].rpartition(" of ")
            Select(d.find_element(By.ID, f"qe{n}-threshold")).select_by_value(kind)
            if fraction:
                self.type_into(f"qe{n}-fraction", fraction)
            if question.get("quorum"):
                self.type_into(f"qe{n}-quorum", question["quorum"])
        if question["blank"]:
            d.find_element(By.ID, f"qe{n}-blank").click()

    def certify(self):
        """Certifies the results of the place chosen in the console, once the console offers it (voting has ended,
        not yet certified); the console's outcome line, which names the block."""
        self.shows("#certify-state", "Voting has ended")
        self.driver.find_element(By.CSS_SELECTOR, "#certify button").click()
        return self.shows("#console-outcome", "Results certified at block")

    # A ranked question in the booth, ranked by dragging.

    def rank_order(self, question):
        """The rows of a ranked question as shown: "name=rank" each, and "|" for the line above the unranked."""
        return self.driver.execute_script("""
            return [...document.querySelectorAll(`#question-${arguments[0]} .rank-list > *`)].map((e) =>
                e.classList.contains('rank-line') ? '|' : `${e.querySelector('label').textContent}=${e.querySelector('select').value}`);
        """, question)

    def box(self, element):
        """The centre of `element` in the viewport, and its top."""
        return self.driver.execute_script(
            "const b = arguments[0].getBoundingClientRect(); return {x: b.x + b.width / 2, y: b.y + b.height / 2, top: b.y}",
            element)

    def grip(self, question, option):
        """The grip that drags `option` of the ranked `question`."""
        return self.driver.find_element(By.CSS_SELECTOR, f"#question-{question} .rank-row:has(#q{question}-o{option}) .grip")

    def drag(self, grip, to_y):
        """A finger presses `grip`, moves in small steps to the viewport height `to_y`, and lifts."""
        start = self.box(grip)
        finger = PointerInput(interaction.POINTER_TOUCH, "finger")
        actions = ActionBuilder(self.driver, mouse=finger)
        actions.pointer_action.move_to_location(int(start["x"]), int(start["y"])).pointer_down()
        for step in range(1, 11):
            y = start["y"] + (to_y - start["y"]) * step / 10
            actions.pointer_action.move_to_location(int(start["x"]), int(y)).pause(0.03)
        actions.pointer_action.pointer_up()
        actions.perform()
