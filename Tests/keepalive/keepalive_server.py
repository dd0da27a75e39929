#!/usr/bin/env python3
"""A loopback HTTP/1.1 server (or TCP proxy) for BlockingHTTP's keep-alive tests, that counts what a client costs it.

    keepalive_server.py --log FILE [--cert PEM --key PEM] [--proxy PORT]

Prints "listening PORT" once it listens on 127.0.0.1, then appends a line to FILE for each accepted connection
("connection"), each TLS handshake ("handshake") and each request ("request PATH"). As a server it keeps every
connection alive and answers by path:

    /sized      200, the body framed by Content-Length
    /chunked    200, the body in chunks (with a chunk extension and a trailer)
    /close      200 with Connection: close, then closes
    /unsized    200 with no length, the body ending with the connection
    /hang-up    200, then closes the connection without saying so (as a server's idle timeout does)
    /drop-next  200; the next request on a connection that has carried one before is not answered: the connection
                is closed as it comes (the race a server's idle timeout makes)
    /huge-chunk, /bad-chunk, /both-framings, /two-lengths, /garbage-after, /not-http: hostile answers

With --proxy PORT it forwards each connection to 127.0.0.1:PORT unchanged (TLS passes through, so connections
are handshakes) and, on SIGUSR1, closes every connection it holds and logs "closed N".
"""

import argparse
import signal
import socket
import ssl
import sys
import threading

lock = threading.Lock()
drop_next = False
held = []


def log(path, line):
    with lock:
        with open(path, "a") as f:
            f.write(line + "\n")


def read_request(conn, pending):
    """A request (path, rest of the bytes) read whole from conn, or None at its end."""
    while b"\r\n\r\n" not in pending:
        data = conn.recv(65536)
        if not data:
            return None
        pending += data
    head, _, rest = pending.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    while len(rest) < length:
        data = conn.recv(65536)
        if not data:
            return None
        rest += data
    return lines[0].split(" ")[1], rest[length:]


def sized(body, extra=""):
    return ("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n%s\r\n" % (len(body), extra)).encode() + body


ANSWERS = {
    "/sized": sized(b"sized\n"),
    "/chunked": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;note=x\r\nchu\r\n5\r\nnked\n\r\n0\r\nX-Trailer: y\r\n\r\n",
    "/huge-chunk": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n7fffffffffffffff\r\nabc",
    "/bad-chunk": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcdef\r\n0\r\n\r\n",
    "/both-framings": b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
    "/two-lengths": b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd",
    "/garbage-after": sized(b"sized\n") + b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nforged",
    "/not-http": b"SSH-2.0-OpenSSH_9.6\r\n\r\n",
}


def serve(conn, args):
    global drop_next
    pending = b""
    served = 0
    try:
        while True:
            request = read_request(conn, pending)
            if request is None:
                return
            path, pending = request
            with lock:
                drop = drop_next and served > 0
                if drop:
                    drop_next = False
            log(args.log, "request " + path + (" dropped" if drop else ""))
            if drop:
                return
            served += 1
            if path == "/close":
                conn.sendall(sized(b"closing\n", "Connection: close\r\n"))
                return
            if path == "/unsized":
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nunsized\n")
                return
            if path == "/hang-up":
                conn.sendall(sized(b"sized\n"))
                return
            if path == "/drop-next":
                with lock:
                    drop_next = True
                conn.sendall(sized(b"armed\n"))
                continue
            conn.sendall(ANSWERS.get(path, b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"))
    except (OSError, ssl.SSLError):
        return
    finally:
        conn.close()


def pump(source, sink):
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            sink.sendall(data)
    except OSError:
        pass
    for s in (source, sink):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def proxy(conn, args):
    upstream = socket.create_connection(("127.0.0.1", args.proxy))
    with lock:
        held.append(conn)
    threading.Thread(target=pump, args=(upstream, conn), daemon=True).start()
    pump(conn, upstream)


def close_held(signum, frame):
    with lock:
        closing = list(held)
        held.clear()
    for conn in closing:
        try:
            conn.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
    log(arguments.log, "closed %d" % len(closing))


def handle(conn, args, context):
    log(args.log, "connection")
    if context is not None:
        try:
            conn = context.wrap_socket(conn, server_side=True)
        except (OSError, ssl.SSLError):
            conn.close()
            return
        log(args.log, "handshake")
    (proxy if args.proxy else serve)(conn, args)


parser = argparse.ArgumentParser()
parser.add_argument("--log", required=True)
parser.add_argument("--cert")
parser.add_argument("--key")
parser.add_argument("--proxy", type=int)
arguments = parser.parse_args()
tls = None
if arguments.cert:
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(arguments.cert, arguments.key)
# A test runner's thread may have spawned this process with signals blocked: SIGTERM stops it, SIGUSR1 closes.
signal.signal(signal.SIGTERM, signal.SIG_DFL)
signal.signal(signal.SIGUSR1, close_held)
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGUSR1})
listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen(64)
print("listening %d" % listener.getsockname()[1], flush=True)
while True:
    client, _ = listener.accept()
    threading.Thread(target=handle, args=(client, arguments, tls), daemon=True).start()
