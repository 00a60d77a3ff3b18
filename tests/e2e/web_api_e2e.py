"""End-to-end tests of the web chat API on a real nurllamad with real models, driven with curl.

- a reply from a scripted model (tests/e2e/scripted-model.cpp) arrives exactly as scripted;
- kill -9 of the daemon in the middle of a reply, then a restart: the history database opens
  (integrity_check ok), the user turn and the partial reply are there, the reply marked
  incomplete;
- access "tokens": 401 with WWW-Authenticate until a token is sent; tokens made, listed and
  revoked with the real client over the Unix socket; a revoked token is refused on the next
  request while another keeps working; a chat token cannot pull;
- the page: HTML with a CSP for browsers, plain text for curl, 304 on revalidation.

usage: web_api_e2e.py --daemon PATH/nurllamad --client PATH/nurllama --scripted PATH/nurl-scripted-model
                      --base PATH/qwen2-F16-embQ4_0.gguf
"""
import argparse
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_fixture import Daemon, curl  # noqa: E402

ARGS = None
XSS = '<img src=x onerror="window.__pwned=1"> and <script>window.__pwned=2</script> **bold**'
LOOP = "The quick brown fox jumps over the lazy dog. "


def make_models(dest):
    xss = os.path.join(dest, "xss.gguf")
    loop = os.path.join(dest, "loop.gguf")
    subprocess.run([ARGS.scripted, ARGS.base, xss, XSS], check=True, capture_output=True)
    subprocess.run([ARGS.scripted, ARGS.base, loop, LOOP, "--loop"], check=True, capture_output=True)
    return xss, loop


class Browserless:
    """A web chat client with its own cookie jar, speaking to one daemon."""

    def __init__(self, daemon, token=None):
        self.d = daemon
        self.jar = tempfile.mktemp(prefix="jar-", dir=daemon.home)
        self.token = token

    def call(self, method, path, body=None, extra=(), timeout=60):
        args = ["-X", method, "-b", self.jar, "-c", self.jar, "-H", "Origin: " + self.d.base]
        if body is not None:
            args += ["-H", "Content-Type: application/json"]
        if self.token:
            args += ["-H", "Authorization: Bearer " + self.token]
        args += list(extra) + [self.d.base + path]
        st, head, out = curl(*args, data=None if body is None else json.dumps(body), timeout=timeout)
        return st, head, out

    def json(self, method, path, body=None):
        st, _, out = self.call(method, path, body)
        return st, (json.loads(out) if out.strip().startswith(("{", "[")) else out)


def stream_lines(base, path, body, cookie_jar, stop_after_lines):
    """POSTs and reads NDJSON lines over a raw socket; returns them, leaving the socket open."""
    host, port = base.replace("http://", "").split(":")
    s = socket.create_connection((host, int(port)))
    payload = json.dumps(body).encode()
    cookies = []
    with open(cookie_jar) as f:
        for line in f:
            parts = line.strip().split("\t")
            if len(parts) == 7 and parts[5] == "nl_client":
                cookies.append("nl_client=" + parts[6])
    req = (f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nOrigin: {base}\r\nContent-Type: application/json\r\n"
           f"Cookie: {'; '.join(cookies)}\r\nConnection: close\r\nContent-Length: {len(payload)}\r\n\r\n").encode() + payload
    s.sendall(req)
    buf = b""
    while b"\r\n\r\n" not in buf:
        buf += s.recv(4096)
    head, _, rest = buf.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), head
    lines, data = [], rest
    while len(lines) < stop_after_lines:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
        # Chunked framing: pull complete JSON lines out of the chunk payloads.
        text = data.decode("utf-8", "replace")
        found = [l for l in text.split("\n") if l.startswith("{")]
        lines = [json.loads(l) for l in found if l.endswith("}")]
    return s, lines


class WebApi(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.models_dir = tempfile.mkdtemp(prefix="nurl-web-models-")
        cls.xss, cls.loop = make_models(cls.models_dir)

    def start(self, **env):
        d = Daemon(ARGS.daemon, extra_env=env)
        self.addCleanup(d.cleanup)
        return d

    def test_scripted_reply_is_exact(self):
        d = self.start()
        try:
            c = Browserless(d)
            st, conv = c.json("POST", "/web/conversations", {"model": self.xss})
            self.assertEqual(st, 201, conv)
            st, _, out = c.call("POST", "/web/chat", {"conversation": conv["id"], "content": "say it"})
            self.assertEqual(st, 200, out)
            lines = [json.loads(l) for l in out.split("\n") if l.strip()]
            self.assertEqual("".join(l["text"] for l in lines if l["type"] == "text"), XSS)
            self.assertEqual(lines[-1]["type"], "done")
            self.assertEqual(lines[-1]["message"]["content"], XSS)
            self.assertEqual(lines[-1]["message"]["state"], "complete")
        finally:
            self.assertEqual(d.stop(), 0)

    def test_kill_9_mid_reply_keeps_the_partial_reply(self):
        d = self.start()
        c = Browserless(d)
        st, conv = c.json("POST", "/web/conversations", {"model": self.loop})
        self.assertEqual(st, 201)
        sock, lines = stream_lines(d.base, "/web/chat", {"conversation": conv["id"], "content": "go on forever"},
                                   c.jar, 20)
        streamed = "".join(l.get("text", "") for l in lines)
        self.assertGreater(len(streamed), 10)
        time.sleep(0.3)  # a save happens at least every 100 ms
        d.proc.send_signal(signal.SIGKILL)
        d.proc.wait()
        d.log.close()
        sock.close()
        db = os.path.join(d.home, ".nurllama", "history.db")
        con = sqlite3.connect(db)
        self.assertEqual(con.execute("PRAGMA integrity_check").fetchone()[0], "ok")
        con.close()
        # Restart on the same home: the database opens and the reply is there, incomplete.
        d2 = Daemon(ARGS.daemon, extra_env={"HOME": d.home, "NURLLAMA_SOCKET": d.socket + "2"})
        try:
            c.d = d2
            # The cookie jar names the old port's host; curl sends it to any port of 127.0.0.1.
            st, msgs = c.json("GET", f"/web/conversations/{conv['id']}/messages")
            self.assertEqual(st, 200, msgs)
            m = msgs["messages"]
            self.assertEqual([x["role"] for x in m], ["user", "assistant"])
            self.assertEqual(m[0]["content"], "go on forever")
            self.assertEqual(m[1]["state"], "incomplete")
            saved = m[1]["content"]
            self.assertTrue(saved, "nothing of the reply was saved")
            self.assertTrue(saved.startswith(streamed[:len(saved)]) or streamed.startswith(saved), (saved, streamed))
            self.assertTrue((LOOP * 100).startswith(saved))
        finally:
            self.assertEqual(d2.stop(), 0)
            d2.cleanup()

    def client(self, *args, env=None):
        e = {k: v for k, v in os.environ.items() if not k.startswith(("NURLLAMA_", "OLLAMA_"))}
        e.update(env or {})
        return subprocess.run([ARGS.client, *args], env=e, capture_output=True, text=True, timeout=60)

    def test_tokens_guard_the_api_and_revoke_at_once(self):
        d = self.start(NURLLAMA_ACCESS="tokens")
        try:
            env = {"NURLLAMA_SOCKET": d.socket}
            st, head, body = curl(d.base + "/web/session")
            self.assertEqual(st, 401, body)
            self.assertIn("www-authenticate: bearer", head.lower())
            st, _, _ = curl(d.base + "/api/tags")
            self.assertEqual(st, 401)
            for path in ("/", "/health"):
                st, _, _ = curl(d.base + path)
                self.assertIn(st, (200, 404), path)  # open (404: /health is another part's route)
                self.assertNotEqual(st, 401, path)
            made = self.client("token", "create", "phone", env=env)
            self.assertEqual(made.returncode, 0, made.stderr)
            phone = [w for w in made.stdout.split() if w.startswith("nl_")][0]
            made = self.client("token", "create", "owner", "--scope", "admin", env=env)
            owner = [w for w in made.stdout.split() if w.startswith("nl_")][0]
            listed = self.client("token", "list", env=env)
            self.assertIn("phone", listed.stdout)
            self.assertIn("admin", listed.stdout)
            self.assertNotIn(phone, listed.stdout)
            with open(os.path.join(d.home, ".nurllama", "tokens.json")) as f:
                self.assertNotIn(phone, f.read())
            self.assertEqual(os.stat(os.path.join(d.home, ".nurllama", "tokens.json")).st_mode & 0o777, 0o600)

            st, _, body = curl("-H", "Authorization: Bearer " + phone, d.base + "/web/session")
            self.assertEqual(st, 200, body)
            self.assertEqual(json.loads(body)["token"], "phone")
            st, _, _ = curl("-H", "Authorization: Bearer " + phone, d.base + "/api/tags")
            self.assertEqual(st, 200)
            st, _, body = curl("-X", "POST", "-H", "Authorization: Bearer " + phone, "-H", "Content-Type: application/json",
                               d.base + "/api/pull", data='{"model":"x"}')
            self.assertEqual(st, 403, body)
            st, _, _ = curl("-H", "Authorization: Bearer wrong-" + phone, d.base + "/api/tags")
            self.assertEqual(st, 401)
            # The web chat with a token: no Origin needed (the token proves intent).
            st, _, body = curl("-X", "POST", "-H", "Authorization: Bearer " + phone, "-H", "Content-Type: application/json",
                               d.base + "/web/conversations", data='{"title":"t"}')
            self.assertEqual(st, 201, body)

            revoked = self.client("token", "revoke", "phone", env=env)
            self.assertEqual(revoked.returncode, 0, revoked.stderr)
            st, _, _ = curl("-H", "Authorization: Bearer " + phone, d.base + "/api/tags")
            self.assertEqual(st, 401, "a revoked token still works")
            st, _, _ = curl("-H", "Authorization: Bearer " + owner, d.base + "/api/tags")
            self.assertEqual(st, 200, "revoking one token disturbed another")
            # The CLI over the Unix socket needs no token.
            ls = self.client("list", env=env)
            self.assertEqual(ls.returncode, 0, ls.stderr)
            # Over TCP the client sends NURLLAMA_TOKEN.
            ls = self.client("list", env={"NURLLAMA_HOST": d.base, "NURLLAMA_TOKEN": owner})
            self.assertEqual(ls.returncode, 0, ls.stderr)
            ls = self.client("list", env={"NURLLAMA_HOST": d.base})
            self.assertNotEqual(ls.returncode, 0)
        finally:
            self.assertEqual(d.stop(), 0)

    def test_first_tokens_arrive_round_robin_by_user(self):
        # The blocker must still be generating when the six others have queued behind it: a reply
        # as long as the model's whole context (32768), since the scripted model decodes thousands
        # of tokens a second.
        d = self.start(NURLLAMA_NUM_PARALLEL="1", NURLLAMA_CONTEXT_LENGTH="32768")
        try:
            def ps_active():
                st, _, body = curl(d.base + "/api/ps")
                return sum(m.get("active_requests", 0) for m in json.loads(body)["models"])

            users = {u: Browserless(d) for u in ("blocker", "alice", "bob", "carol")}
            convs = {}
            for u, c in users.items():
                st, conv = c.json("POST", "/web/conversations", {"model": self.loop})
                self.assertEqual(st, 201, conv)
                convs[u] = conv["id"]
            first_token = {}
            threads = []
            lock = threading.Lock()

            blocker = {}

            def run(user, n, key):
                def go():
                    c = users[user]
                    sock, lines = stream_lines(d.base, "/web/chat", {"conversation": convs[user], "content": "go",
                                                                     "options": {"num_predict": n}}, c.jar, 1)
                    with lock:
                        first_token[key] = time.monotonic()
                    if key == "blocker":  # holds the only slot until the main thread hangs up
                        blocker["sock"] = sock
                        return
                    while sock.recv(65536):
                        pass
                    sock.close()
                t = threading.Thread(target=go)
                before = ps_active()
                t.start()
                threads.append(t)
                deadline = time.time() + 10
                while ps_active() <= before and time.time() < deadline:  # queued: keep the order
                    time.sleep(0.005)

            run("blocker", 30000, "blocker")
            threads[0].join(30)
            order = ["alice", "alice", "bob", "bob", "carol", "carol"]
            for i, u in enumerate(order):
                run(u, 10, (u, i))
            self.assertEqual(ps_active(), 7, "the blocker ended before the others were queued")
            blocker["sock"].close()  # the client hangs up: the slot frees, the queue drains
            for t in threads:
                t.join(60)
            got = [k[0] for k in sorted((k for k in first_token if k != "blocker"), key=lambda k: first_token[k])]
            self.assertEqual(got, ["alice", "bob", "carol", "alice", "bob", "carol"])
        finally:
            self.assertEqual(d.stop(), 0)

    def test_the_page_for_browsers(self):
        d = self.start()
        try:
            st, _, body = curl(d.base + "/")
            self.assertEqual((st, body), (200, "nurllama is running"))
            st, head, body = curl("-H", "Accept: text/html", d.base + "/")
            self.assertEqual(st, 200)
            h = head.lower()
            self.assertIn("content-security-policy: default-src 'none'", h)
            self.assertIn("<!doctype html>", body.lower())
            etag = [l.split(":", 1)[1].strip() for l in head.split("\r\n") if l.lower().startswith("etag:")][0]
            st, _, body = curl("-H", "Accept: text/html", "-H", "If-None-Match: " + etag, d.base + "/")
            self.assertEqual((st, body), (304, ""))
        finally:
            self.assertEqual(d.stop(), 0)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--daemon", required=True)
    ap.add_argument("--client", required=True)
    ap.add_argument("--scripted", required=True)
    ap.add_argument("--base", required=True)
    ARGS, rest = ap.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
