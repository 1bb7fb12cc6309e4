#!/usr/bin/env python3
"""bench/http/bad_request_check.py SERVER: an HTTP server of bench/http
(strata-http, asio-http) meets bad requests the way HTTP/1.1 says: the
requests before a bad one are answered, in order, then a 400, then the
connection closes; nothing after the bad request is answered, and the
server goes on serving other connections. Every read has a deadline, so a
server that hangs fails the check instead of holding it.

Cases, each on its own connection: a method other than GET or HEAD; bytes
that are no request at all; a header over 8 KiB with no end; two good
requests, a bad one and a good one pipelined in one write; a request with
CPU work (answered after its tasks) and a bad one pipelined. Then a good
request on a fresh connection, and at SIGINT the server's own count of
answers and bad requests must match what was sent."""
import re
import signal
import socket
import subprocess
import sys

OK = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n\r\nok\n"
BAD = b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
GET = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"


def fail(why):
    print(f"bad_request_check: FAIL: {why}")
    sys.exit(1)


def exchange(port, data, expect, what):
    """Sends data, reads until the server closes (deadline 10 s), compares."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(data)
        got = b""
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                got += chunk
        except socket.timeout:
            fail(f"{what}: no close within 10 s (got {got!r})")
        except ConnectionResetError:
            fail(f"{what}: connection reset after {got!r}")
    if got != expect:
        fail(f"{what}: expected {expect!r}, got {got!r}")
    print(f"bad_request_check: {what}: {len(expect)} bytes as expected, then closed")


def main():
    server = sys.argv[1]
    proc = subprocess.Popen([server, "--workers", "2", "--delay-us", "1000"], stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        m = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
        if not m:
            fail(f"the server did not start: {line!r}")
        port = int(m.group(1))
        exchange(port, b"BREW /pot HTTP/1.1\r\n\r\n", BAD, "a method other than GET or HEAD")
        exchange(port, b"\x00\xff\xfe\x16\x03\x01\r\n\r\n", BAD, "bytes that are no request")
        exchange(port, b"GET /" + b"a" * 9000, BAD, "a header over 8 KiB")
        exchange(port, GET + GET + b"DELETE / HTTP/1.1\r\n\r\n" + GET, OK + OK + BAD,
                 "two good requests, a bad one, a good one, pipelined")
        exchange(port, b"GET /?cpu=300&tasks=3 HTTP/1.1\r\n\r\nPUT / HTTP/1.1\r\n\r\n", OK + BAD,
                 "a request with CPU work, then a bad one, pipelined")
        # A good request on a fresh connection: the server still serves (keep-alive: read one answer).
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(GET)
            got = b""
            try:
                while len(got) < len(OK):
                    chunk = s.recv(65536)
                    if not chunk:
                        break
                    got += chunk
            except socket.timeout:
                fail(f"a good request after the bad ones: no answer within 10 s (got {got!r})")
            if got != OK:
                fail(f"a good request after the bad ones: got {got!r}")
        print("bad_request_check: a good request on a fresh connection is answered")
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            out, _ = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            fail("the server did not stop within 20 s of SIGINT")
    m = re.search(r"(\d+) requests answered, (\d+) bad", out)
    if proc.returncode != 0 or not m:
        fail(f"the server exited {proc.returncode}: {out[:500]!r}")
    answered, bad = int(m.group(1)), int(m.group(2))
    if (answered, bad) != (4, 5):
        fail(f"the server counted {answered} answered and {bad} bad; sent 4 good requests that come before a "
             "bad one or alone, and 5 bad")
    print(f"bad_request_check: PASS: the server counted {answered} answered, {bad} bad")


if __name__ == "__main__":
    main()
