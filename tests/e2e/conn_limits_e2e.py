"""Connection limits of a real nurllamad: one address that opens hundreds of idle TCP
connections cannot lock everyone else out.

- 600 idle connections from 127.0.0.1 (never sending a byte): a client from another address
  (127.0.0.2, still loopback) and the Unix socket are served at once;
- the per-address cap refuses the hog's own extra connections with a 503 that says why;
- connections that never send a whole request are closed after the short header timeout;
- at the global cap, idle keep-alive connections are closed first to make room for a new one.

usage: conn_limits_e2e.py --daemon PATH/nurllamad
"""
import argparse
import os
import socket
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_fixture import Daemon, curl  # noqa: E402

ARGS = None


def http_get(port, path="/api/version", source="127.0.0.1", keep_alive=False, timeout=5):
    """One GET on a fresh connection from `source`; returns (status, socket or None)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout, source_address=(source, 0))
    conn = "keep-alive" if keep_alive else "close"
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: {conn}\r\n\r\n".encode())
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    status = int(data.split(b" ")[1]) if data.startswith(b"HTTP/1.1 ") else 0
    if keep_alive:
        # Read the (small, Content-Length) body so the connection is idle between requests.
        head, _, body = data.partition(b"\r\n\r\n")
        n = 0
        for line in head.split(b"\r\n"):
            if line.lower().startswith(b"content-length:"):
                n = int(line.split(b":")[1])
        while len(body) < n:
            body += s.recv(4096)
        return status, s
    s.close()
    return status, None


def open_idle(port, n, source="127.0.0.1"):
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.bind((source, 0))
        s.connect(("127.0.0.1", port))
        socks.append(s)
    return socks


def wait_closed(s, timeout):
    """True when the server closes `s` within `timeout` seconds."""
    s.settimeout(timeout)
    try:
        while True:
            d = s.recv(4096)
            if not d:
                return True
    except (socket.timeout, TimeoutError):
        return False
    except ConnectionResetError:
        return True


class DaemonCase(unittest.TestCase):
    ENV = {}

    def setUp(self):
        self.d = Daemon(ARGS.daemon, extra_env=self.ENV)
        self.socks = []

    def tearDown(self):
        for s in self.socks:
            s.close()
        code = self.d.stop()
        self.d.cleanup()
        self.assertEqual(code, 0)


class ManyIdleFromOneAddress(DaemonCase):
    ENV = {"NURLLAMA_MAX_CONNECTIONS": "512"}

    def test_other_clients_still_served(self):
        self.socks = open_idle(self.d.port, 600)
        time.sleep(0.3)  # let the daemon accept them all
        t0 = time.time()
        status, _ = http_get(self.d.port, source="127.0.0.2")
        self.assertEqual(status, 200, "a client from another address is locked out by one address's idle connections")
        self.assertLess(time.time() - t0, 2)
        # The Unix socket answers too.
        st, _, body = curl("--unix-socket", self.d.socket, "http://localhost/api/version")
        self.assertEqual(st, 200, body)
        # The hog's own next connection is refused with a reason.
        st, _, body = curl(self.d.base + "/api/version", timeout=5)
        self.assertEqual(st, 503, body)
        self.assertIn("too many connections from", body)


class HeaderTimeoutAndIdleEviction(DaemonCase):
    ENV = {"NURLLAMA_MAX_CONNECTIONS": "8", "NURLLAMA_HEADER_TIMEOUT": "1s", "NURLLAMA_MAX_CONNECTIONS_PER_PEER": "4"}

    def test_half_sent_request_is_closed_after_the_header_timeout(self):
        s = socket.create_connection(("127.0.0.1", self.d.port))
        self.socks.append(s)
        s.sendall(b"GET /api/version HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # no blank line: never complete
        t0 = time.time()
        self.assertTrue(wait_closed(s, 5), "a connection that never sends a whole request stays open")
        self.assertLess(time.time() - t0, 3)

    def test_idle_keep_alive_connections_make_room(self):
        # Fill the global cap with idle keep-alive connections from 127.0.0.{2..5} (two each).
        for i in range(8):
            st, s = http_get(self.d.port, source=f"127.0.0.{2 + i // 2}", keep_alive=True)
            self.assertEqual(st, 200)
            self.socks.append(s)
        # A newcomer is served: the oldest idle keep-alive connection is closed for it.
        status, _ = http_get(self.d.port, source="127.0.0.9")
        self.assertEqual(status, 200)
        self.assertTrue(wait_closed(self.socks[0], 2), "the oldest idle keep-alive connection was not closed")

    def test_per_address_cap_closes_its_own_idle_first(self):
        for _ in range(4):
            st, s = http_get(self.d.port, source="127.0.0.3", keep_alive=True)
            self.assertEqual(st, 200)
            self.socks.append(s)
        status, _ = http_get(self.d.port, source="127.0.0.3")
        self.assertEqual(status, 200)
        # With only connections that never sent a request, the address's next one is refused.
        self.socks += open_idle(self.d.port, 4, source="127.0.0.4")
        time.sleep(0.2)
        status, _ = http_get(self.d.port, source="127.0.0.4")
        self.assertEqual(status, 503)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--daemon", required=True)
    ARGS, rest = ap.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
