#!/usr/bin/env python3
"""A real SMTP relay for the mail tests (aiosmtpd): STARTTLS required with the given certificate, AUTH PLAIN
required (over TLS only) with one user and password. It refuses for good (550) any recipient whose local part
starts with "refuse", for now (451) one starting with "defer", and accepts the rest: each accepted message is
written, decoded with Python's own e-mail parser, as one JSON file in the output directory (recipient, From,
To, Subject, the plain text and the HTML). With --die-after N it exits while receiving message N+1 (the
connection drops mid-message). Writes its port to --port-file once it accepts connections.
"""
import argparse
import email
import email.policy
import json
import os
import signal
import socket
import ssl
import sys
import time

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult

parser = argparse.ArgumentParser()
parser.add_argument("--cert", required=True)
parser.add_argument("--key", required=True)
parser.add_argument("--out", required=True)
parser.add_argument("--user", required=True)
parser.add_argument("--password", required=True)
parser.add_argument("--die-after", type=int, default=None)
parser.add_argument("--port-file", required=True)
args = parser.parse_args()
# A test process's threads may block signals, and a child inherits the mask: SIGTERM must stop the relay.
signal.pthread_sigmask(signal.SIG_UNBLOCK, set(signal.Signals))


class Handler:
    async def handle_RCPT(self, server, session, envelope, address, options):
        local = address.split("@")[0]
        if local.startswith("refuse"):
            return "550 5.1.1 no such user here"
        if local.startswith("defer"):
            return "451 4.3.0 try again later"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        accepted = len([n for n in os.listdir(args.out) if n.endswith(".json")])
        if args.die_after is not None and accepted >= args.die_after:
            os._exit(3)
        message = email.message_from_bytes(envelope.content, policy=email.policy.default)
        parts = {part.get_content_type(): part.get_content() for part in message.walk() if not part.is_multipart()}
        record = {
            "envelope_from": envelope.mail_from,
            "recipients": envelope.rcpt_tos,
            "from": str(message["From"]),
            "to": str(message["To"]),
            "subject": str(message["Subject"]),
            "date": str(message["Date"]),
            "message_id": str(message["Message-ID"]),
            "text": parts.get("text/plain", ""),
            "html": parts.get("text/html", ""),
            "tls": session.ssl is not None,
            "authenticated": session.authenticated,
        }
        name = os.path.join(args.out, "%03d.json" % accepted)
        with open(name + ".tmp", "w") as f:
            json.dump(record, f, ensure_ascii=False)
        os.rename(name + ".tmp", name)
        return "250 2.0.0 queued as %03d" % accepted


def authenticator(server, session, envelope, mechanism, auth_data):
    ok = auth_data.login.decode() == args.user and auth_data.password.decode() == args.password
    return AuthResult(success=ok)


context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
context.load_cert_chain(args.cert, args.key)
for attempt in range(20):
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    controller = Controller(
        Handler(), hostname="127.0.0.1", port=port, tls_context=context, require_starttls=True,
        authenticator=authenticator, auth_require_tls=True, auth_required=True)
    try:
        controller.start()
        break
    except Exception as error:  # the port was taken between the probe and the bind: another one
        last = error
else:
    sys.exit("cannot listen: %s" % last)
with open(args.port_file + ".tmp", "w") as f:
    f.write("%d\n" % port)
os.rename(args.port_file + ".tmp", args.port_file)
while True:
    time.sleep(3600)
