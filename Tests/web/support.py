"""What the browser tests share: a headless Chromium from Debian driven by Selenium, a static file server
on a loopback port, the `vote` binary, and an RFC 9162 tree over a ledger's leaf hashes (from
`vote export --events`) that plays the server's part of handing out consistency proofs."""

import base64
import contextlib
import hashlib
import http.server
import json
import os
import subprocess
import threading

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

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
