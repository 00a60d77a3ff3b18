"""`nurllama start` driven through a pseudo-terminal, as a person would: answers typed, bad
answers asked again with a reason, the models directory listed (store model, .gguf file, a
Hugging Face checkpoint marked "convert first"), the network + open confirmation, the token
printed once (and only its SHA-256 stored, checked with hashlib), config.json written with
mode 0600, a second run offering the saved answers, `-y`, and a real start of nurllamad that
reads the file (then a reload of the running daemon).

usage: wizard_e2e.py --client PATH/nurllama --daemon PATH/nurllamad
"""
import argparse
import hashlib
import json
import os
import pty
import re
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

ARGS = None


class Pty:
    """A child on a pseudo-terminal, with expect/send."""

    def __init__(self, argv, env):
        pid, fd = pty.fork()
        if pid == 0:
            os.execve(argv[0], argv, env)
        self.pid, self.fd, self.buf, self.all = pid, fd, "", ""

    def _read(self, timeout):
        r, _, _ = select.select([self.fd], [], [], timeout)
        if not r:
            return False
        try:
            data = os.read(self.fd, 4096).decode("utf-8", "replace")
        except OSError:  # EIO: the child closed the terminal
            return None
        if not data:
            return None
        self.buf += data
        self.all += data
        return True

    def expect(self, text, timeout=15):
        deadline = time.time() + timeout
        while text not in self.buf:
            left = deadline - time.time()
            if left <= 0 or self._read(left) is None:
                raise AssertionError("expected %r, got:\n%s" % (text, self.all))
        i = self.buf.index(text) + len(text)
        seen, self.buf = self.buf[:i], self.buf[i:]
        return seen

    def send(self, line):
        os.write(self.fd, (line + "\n").encode())

    def wait(self, timeout=15):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self._read(0.1) is None:
                break
        _, status = os.waitpid(self.pid, 0)
        os.close(self.fd)
        return os.waitstatus_to_exitcode(status)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Wizard(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="nurl-wizard-")
        self.home = os.path.join(self.tmp, "state")
        self.models = os.path.join(self.tmp, "models")
        os.makedirs(os.path.join(self.models, "manifests", "registry.ollama.ai", "library", "tiny"))
        with open(os.path.join(self.models, "manifests", "registry.ollama.ai", "library", "tiny", "latest"), "w") as f:
            json.dump({"name": "tiny:latest", "size": 1185376, "details": {"family": "llama"}}, f)
        with open(os.path.join(self.models, "story.gguf"), "wb") as f:
            f.write(b"GGUF" + b"\0" * 2000)
        os.makedirs(os.path.join(self.models, "hf-model"))
        for name in ("config.json", "model.safetensors"):
            with open(os.path.join(self.models, "hf-model", name), "w") as f:
                f.write("{}")
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("NURLLAMA_", "OLLAMA_"))}
        self.env.update({"HOME": self.tmp, "NURLLAMA_HOME": self.home, "XDG_RUNTIME_DIR": os.path.join(self.tmp, "xdg"),
                         "NURLLAMA_SOCKET": os.path.join(self.tmp, "run", "d.sock"), "TERM": "dumb"})

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def start(self, *args):
        return Pty([ARGS.client, "start", *args], self.env)

    def config(self):
        path = os.path.join(self.home, "config.json")
        self.assertEqual(os.stat(path).st_mode & 0o777, 0o600)
        with open(path) as f:
            return json.load(f)

    def test_first_run_asks_again_until_the_answers_are_valid(self):
        w = self.start("--no-start")
        w.expect("Models directory")
        w.send("/no/such/place/models")
        w.expect("no such directory")
        w.expect("Models directory")
        w.send(self.models)
        listing = w.expect("Default model")
        self.assertRegex(listing, r"1\. tiny:latest\s+1\.2 MB\s+store, llama")
        self.assertRegex(listing, r"2\. story\.gguf\s+2(\.0)? kB|2\. story\.gguf\s+2 KB|2\. story\.gguf")
        self.assertRegex(listing, r"3\. hf-model/.*convert first")
        w.send("3")
        w.expect("convert it first")
        w.expect("Default model")
        w.send("9")
        w.expect("choose 1 to 3")
        w.expect("Default model")
        w.send("2")
        w.expect("Who may connect?")
        w.send("everyone")
        w.expect("answer 1 (localhost) or 2 (network)")
        w.send("2")
        w.expect("Access: 1) open  2) bearer tokens [2]")  # network suggests tokens
        w.send("1")
        w.expect("WARNING: with network access and no tokens")
        w.expect("Type yes to allow open access from the network")
        w.send("no")
        w.expect("keeping it closed")
        w.expect("Access:")
        w.send("2")
        w.expect("Press Enter to generate an access token, or paste your own")
        w.send("short")
        w.expect("at least 24 characters")
        w.expect("Press Enter")
        w.send("")
        w.expect("Port [11434]")
        w.send("70000")
        w.expect("a port is a number from 1 to 65535")
        w.send("18080")
        w.expect("Saved " + os.path.join(self.home, "config.json"))
        out = w.expect("Start the daemon with")
        self.assertEqual(w.wait(), 0)
        token = re.search(r"\b(nl_[A-Za-z0-9_-]{43})\b", out).group(1)
        self.assertEqual(self.config(), {"models": self.models, "default_model": os.path.join(self.models, "story.gguf"),
                                         "bind": "network", "access": "tokens", "port": 18080})
        tokens_path = os.path.join(self.home, "tokens.json")
        self.assertEqual(os.stat(tokens_path).st_mode & 0o777, 0o600)
        with open(tokens_path) as f:
            text = f.read()
        self.assertNotIn(token, text)
        stored = json.loads(text)["tokens"]
        self.assertEqual(stored[0]["name"], "default")
        self.assertEqual(stored[0]["scope"], "admin")
        self.assertEqual(stored[0]["sha256"], hashlib.sha256(token.encode()).hexdigest())

        # A second run offers the saved answers; Enter takes them.
        w = self.start("--no-start")
        shown = w.expect("Use it? (y/n) [y]")
        self.assertIn("the network, access tokens, port 18080", shown)
        w.send("")
        w.expect("Saved")
        self.assertEqual(w.wait(), 0)
        self.assertEqual(self.config()["port"], 18080)

        # "n" asks again, with the saved answers as the defaults.
        w = self.start("--no-start")
        w.expect("Use it?")
        w.send("n")
        w.expect("Models directory [" + self.models + "]")
        w.send("")
        w.expect("Default model")
        w.send("1")
        w.expect("Who may connect? 1) this computer only  2) the network [2]")
        w.send("1")
        w.expect("Access: 1) open  2) bearer tokens [2]")
        w.send("1")
        w.expect("Port [18080]")
        w.send("")
        w.expect("Saved")
        self.assertEqual(w.wait(), 0)
        self.assertEqual(self.config()["default_model"], "tiny:latest")
        self.assertEqual(self.config()["bind"], "localhost")
        self.assertEqual(self.config()["access"], "open")

        # -y reuses without asking anything.
        before = self.config()
        w = self.start("-y", "--no-start")
        self.assertEqual(w.wait(), 0)
        self.assertNotIn("?", w.all)
        self.assertEqual(self.config(), before)

    def test_network_open_needs_confirmation_or_insecure_open(self):
        w = self.start("-y", "--no-start", "--models", self.models, "--bind", "network", "--access", "open")
        self.assertEqual(w.wait(), 2)
        self.assertIn("--insecure-open", w.all)
        self.assertFalse(os.path.exists(os.path.join(self.home, "config.json")))
        w = self.start("-y", "--no-start", "--models", self.models, "--bind", "network", "--access", "open",
                       "--insecure-open", "--port", "18181")
        self.assertEqual(w.wait(), 0)
        self.assertIn("WARNING", w.all)
        self.assertEqual(self.config()["access"], "open")
        self.assertEqual(self.config()["bind"], "network")

        # Interactively, "yes" confirms it (flags answer the other questions).
        os.remove(os.path.join(self.home, "config.json"))
        w = self.start("--no-start", "--models", self.models, "--model", "tiny:latest", "--port", "18182")
        w.expect("Who may connect?")
        w.send("2")
        w.expect("Access:")
        w.send("open")
        w.expect("Type yes")
        w.send("yes")
        w.expect("Saved")
        self.assertEqual(w.wait(), 0)
        self.assertEqual(self.config()["access"], "open")

        # A bad flag is refused before anything is written.
        w = self.start("-y", "--no-start", "--port", "0")
        self.assertEqual(w.wait(), 2)
        self.assertIn("--port", w.all)

    def test_start_runs_the_daemon_with_the_file_then_reloads_it(self):
        port = free_port()
        w = self.start("-y", "--models", self.models, "--model", "tiny:latest", "--port", str(port))
        base = "http://127.0.0.1:%d" % port
        try:
            w.expect("Starting nurllamad on http://127.0.0.1:%d/" % port)
            deadline = time.time() + 30
            session = None
            while time.time() < deadline and session is None:
                try:
                    with urllib.request.urlopen(base + "/web/session", timeout=1) as r:
                        session = json.load(r)
                except OSError:
                    time.sleep(0.1)
            self.assertIsNotNone(session, "nurllamad did not start:\n" + w.all)
            self.assertEqual(session["default_model"], "tiny:latest")

            # With the daemon running, start asks it to reload.
            r = subprocess.run([ARGS.client, "start", "-y", "--model", "story.gguf"], env=self.env,
                               capture_output=True, text=True, timeout=30)
            self.assertEqual(r.returncode, 0, r.stderr + r.stdout)
            self.assertIn("reloaded its configuration", r.stdout)
            with urllib.request.urlopen(base + "/web/session", timeout=5) as resp:
                self.assertEqual(json.load(resp)["default_model"], os.path.join(self.models, "story.gguf"))
        finally:
            subprocess.run(["curl", "-s", "-X", "POST", "--unix-socket", self.env["NURLLAMA_SOCKET"],
                            "http://localhost/control/shutdown"], capture_output=True, timeout=30)
            self.assertEqual(w.wait(30), 0)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--client", required=True)
    ap.add_argument("--daemon", required=True)
    ARGS, rest = ap.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
