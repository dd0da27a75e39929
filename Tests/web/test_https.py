"""The booth and the audit page over https:// in headless Chromium, two ways an operator serves them: `vote
serve --tls-cert --tls-key` itself, and plain `vote serve` behind nginx terminating TLS (the README's setup).

The certificate is self-signed, made here by the openssl command line for the name vote.test, which
Chromium resolves to 127.0.0.1 (--host-resolver-rules): not a loopback name, so the page is a secure
context only because of TLS, as on a real server. Chromium trusts exactly this certificate's key
(--ignore-certificate-errors-spki-list with its SPKI hash), no other. A voter votes in the booth, downloads
the receipt, and the audit page checks it with WebCrypto (which exists only in a secure context)."""

import base64
import glob
import hashlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
import unittest

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from support import chromium, iso, vote_binary

HOUR = 3_600_000
NAME = "vote.test"



def self_signed(directory):
    """A certificate and key for vote.test and 127.0.0.1; returns (cert, key, SPKI SHA-256 in base64)."""
    cert, key = os.path.join(directory, "cert.pem"), os.path.join(directory, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-days", "2", "-subj", f"/CN={NAME}",
                    "-addext", f"subjectAltName=DNS:{NAME},IP:127.0.0.1", "-keyout", key, "-out", cert],
                   check=True, capture_output=True)
    public = subprocess.run(["openssl", "x509", "-in", cert, "-noout", "-pubkey"], check=True,
                            capture_output=True).stdout
    der = subprocess.run(["openssl", "pkey", "-pubin", "-outform", "der"], input=public, check=True,
                         capture_output=True).stdout
    return cert, key, base64.b64encode(hashlib.sha256(der).digest()).decode()


class Serve:
    """`vote serve` on a loopback port at a clock `offset` ms ahead, with `extra` arguments; its printed
    line says where it listens."""

    def __init__(self, vote, ledger, token_file, offset, extra=()):
        env = {**os.environ, "VOTE_TEST_CLOCK_OFFSET_MS": str(offset)}
        self.process = subprocess.Popen(
            [vote, "serve", "--listen", "127.0.0.1:0", "--ledger", ledger, "--admin-token-file", token_file,
             *extra], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
        for line in self.process.stdout:
            if line.startswith("listening on "):
                self.url = line.split()[-1]
                self.port = int(self.url.rsplit(":", 1)[1])
                break
        else:
            raise AssertionError(f"vote serve exited ({self.process.wait()}) before listening")

    def stop(self):
        self.process.terminate()
        status = self.process.wait(timeout=120)
        self.process.stdout.close()
        return status


class Nginx:
    """nginx from Debian in the foreground on a loopback port, terminating TLS with `cert` and passing
    requests to `upstream` as the README shows; its own nginx.conf in `directory`."""

    def __init__(self, directory, cert, key, upstream):
        # nginx cannot listen on port 0 and say which port it got: take a free port from the kernel first.
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        conf_path = os.path.join(directory, "nginx.conf")
        with open(conf_path, "w") as conf:
            conf.write(f"""
daemon off;
pid {directory}/nginx.pid;
error_log {directory}/error.log;
events {{}}
http {{
    access_log off;
    client_body_temp_path {directory}/body;
    proxy_temp_path {directory}/proxy;
    fastcgi_temp_path {directory}/fastcgi;
    uwsgi_temp_path {directory}/uwsgi;
    scgi_temp_path {directory}/scgi;
    server {{
        listen 127.0.0.1:{self.port} ssl http2;
        server_name {NAME};
        ssl_certificate {cert};
        ssl_certificate_key {key};
        location / {{
            proxy_pass {upstream};
            proxy_http_version 1.1;
            proxy_set_header Host $host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Proto $scheme;
        }}
    }}
}}
""")
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        self.process = subprocess.Popen([nginx, "-p", directory, "-c", conf_path, "-e", f"{directory}/error.log"],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # Ready when it accepts a TLS connection (curl retries refused connections; no fixed sleep).
        subprocess.run(["curl", "--silent", "--retry", "100", "--retry-connrefused", "--retry-delay", "1",
                        "--cacert", cert, "--resolve", f"{NAME}:{self.port}:127.0.0.1", "-o", "/dev/null",
                        f"https://{NAME}:{self.port}/"], check=True)

    def stop(self):
        self.process.terminate()
        return self.process.wait(timeout=60)


class HTTPSTest(unittest.TestCase):
    def setUp(self):
        self.vote = vote_binary()
        self.work = tempfile.mkdtemp(prefix="vote-https-")
        self.addCleanup(shutil.rmtree, self.work, True)
        self.cert, self.key, self.spki = self_signed(self.work)
        self.downloads = os.path.join(self.work, "downloads")
        os.makedirs(self.downloads)
        self.ledger = os.path.join(self.work, "ledger")
        self.token_file = os.path.join(self.work, "admin-token")
        run = lambda *a: subprocess.run([self.vote, *a, "--ledger", self.ledger], check=True,
                                        capture_output=True, text=True).stdout
        run("init", "--name", "HTTPS union", "--no-passphrase")
        now = int(time.time() * 1000)
        self.opens = now + HOUR
        run("place", "create", "--name", "Board", "--registration", f"{iso(now)}/{iso(self.opens)}",
            "--voting", f"{iso(self.opens)}/{iso(self.opens + HOUR)}")
        run("candidate", "register", "--place", "1", "--name", "Ada Park")
        run("candidate", "register", "--place", "1", "--name", "Sofia Rossi")
        self.tokens = [run("voter", "authorize", "--place", "1", "--voter", f"m-{100 + i}").strip()
                       for i in range(2)]
        # Voting is open on the server's clock (a DEBUG build's test offset), a minute in.
        self.offset = HOUR + 60_000
        self.driver = chromium(1280, 900, "en-US", extra=(
            f"--host-resolver-rules=MAP {NAME} 127.0.0.1", f"--ignore-certificate-errors-spki-list={self.spki}",
            f"--user-data-dir={os.path.join(self.work, 'profile')}"))
        self.addCleanup(self.driver.quit)
        self.driver.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow",
                                                                    "downloadPath": self.downloads})
        self.wait = WebDriverWait(self.driver, 60)

    def open(self, base, route):
        self.driver.get(f"{base}/{route}")
        self.wait.until(lambda d: d.execute_script("return document.getElementById('main').dataset.route") == route)

    def vote_and_audit(self, base, token):
        """Votes with `token` in the booth at `base`, downloads the receipt, and checks it on the audit page."""
        d = self.driver
        self.open(base, "#/booth/1")
        self.assertTrue(d.execute_script("return window.isSecureContext && !!crypto.subtle"),
                        f"{base} is not a secure context")
        field = d.find_element(By.ID, "token")
        field.clear()
        field.send_keys(token)
        d.find_element(By.XPATH, "//label[contains(@class,'choice')][.//strong[text()='Ada Park']]").click()
        d.find_element(By.CSS_SELECTOR, "main form button[type=submit]").click()
        self.wait.until(lambda d: d.find_elements(By.XPATH, "//button[text()='Cast my vote']"))
        d.find_element(By.XPATH, "//button[text()='Cast my vote']").click()
        self.wait.until(lambda d: d.find_elements(By.ID, "download-receipt"))
        before = set(glob.glob(os.path.join(self.downloads, "*.tlog-proof")))
        d.find_element(By.ID, "download-receipt").click()

        def downloaded(_):
            names = set(glob.glob(os.path.join(self.downloads, "*.tlog-proof"))) - before
            busy = glob.glob(os.path.join(self.downloads, "*.crdownload"))
            return next(iter(names)) if names and not busy else None
        receipt = self.wait.until(downloaded)

        self.open(base, "#/audit")
        self.wait.until(lambda d: d.find_element(By.ID, "key").get_attribute("value"))
        d.find_element(By.ID, "receipt-file").send_keys(receipt)
        self.wait.until(lambda d: d.find_element(By.ID, "receipt").get_attribute("value").startswith("c2sp.org"))
        d.find_element(By.XPATH, "//button[text()='Verify']").click()
        self.wait.until(lambda d: d.find_elements(By.ID, "audit-verdict"))
        self.assertEqual(d.find_element(By.ID, "audit-verdict").text, "The receipt is valid.")

    def test_vote_serve_over_https(self):
        server = Serve(self.vote, self.ledger, self.token_file, self.offset,
                       ("--tls-cert", self.cert, "--tls-key", self.key))
        try:
            self.assertTrue(server.url.startswith("https://127.0.0.1:"), server.url)
            self.vote_and_audit(f"https://{NAME}:{server.port}", self.tokens[0])
        finally:
            self.assertEqual(server.stop(), 0)

    def test_behind_nginx_terminating_tls(self):
        if not (shutil.which("nginx") or os.path.exists("/usr/sbin/nginx")):
            self.fail("nginx missing (apt-get install nginx-light or nginx)")
        # As the README's nginx section says: the proxy on loopback is trusted for X-Forwarded-For.
        server = Serve(self.vote, self.ledger, self.token_file, self.offset, ("--trusted-proxy", "127.0.0.1"))
        proxy_dir = os.path.join(self.work, "nginx")
        os.makedirs(proxy_dir)
        try:
            self.assertTrue(server.url.startswith("http://127.0.0.1:"), server.url)
            proxy = Nginx(proxy_dir, self.cert, self.key, server.url)
            try:
                self.vote_and_audit(f"https://{NAME}:{proxy.port}", self.tokens[1])
            finally:
                proxy.stop()
        finally:
            self.assertEqual(server.stop(), 0)


if __name__ == "__main__":
    unittest.main()
