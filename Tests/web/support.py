"""What the browser tests share: a headless Chromium from Debian driven by Selenium, a static file server
on a loopback port, the `vote` binary, and an RFC 9162 tree over a ledger's leaf hashes (from
`vote export --events`) that plays the server's part of handing out consistency proofs."""

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
import unittest
import urllib.error
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.support.ui import WebDriverWait

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VECTORS = os.path.join(REPO, "Ledger", "vectors")
WEB = os.path.join(REPO, "Sources", "VoteServer", "Web")  # the app `vote serve` ships as a resource


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

class Server:
    """`vote serve --listen 127.0.0.1:0` on `ledger` at a clock `offset` ms ahead; the printed line says
    where it listens (no sleep: that line is the signal)."""

    def __init__(self, vote, ledger, token_file, offset):
        env = {**os.environ, "VOTE_TEST_CLOCK_OFFSET_MS": str(offset)}
        self.process = subprocess.Popen(
            [vote, "serve", "--listen", "127.0.0.1:0", "--ledger", ledger, "--admin-token-file", token_file],
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
    printed)."""

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

    def serve(self, offset):
        """`vote serve` at a clock `offset` ms ahead (the one before it stopped, and checked to exit cleanly)."""
        if self.server:
            self.server.stop()
            self.assertEqual(self.server.exit_status, 0)
        self.server = Server(self.vote, self.ledger, self.token_file, offset)
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
