"""Starts a real nurllamad on loopback for end-to-end tests: a free port, a temporary home
and control socket, model paths allowed (the test models are files). Stops it with SIGTERM and
checks it exits 0."""
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Daemon:
    def __init__(self, binary, extra_env=None, args=(), home=None):
        # home: reuse a stopped (or killed) daemon's home, as a restart does.
        self.home = home or tempfile.mkdtemp(prefix="nurl-e2e-")
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.socket = os.path.join(self.home, "run", "nurllamad.sock")
        self.log_path = os.path.join(self.home, "daemon.log")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("NURLLAMA_", "OLLAMA_"))}
        env.update({
            "HOME": self.home,
            "XDG_RUNTIME_DIR": os.path.join(self.home, "xdg"),
            "NURLLAMA_HOST": f"127.0.0.1:{self.port}",
            "NURLLAMA_SOCKET": self.socket,
            "NURLLAMA_ALLOW_MODEL_PATHS": "1",
            "NURLLAMA_LOG_LEVEL": "debug",
        })
        env.update(extra_env or {})
        self.log = open(self.log_path, "a")
        self.proc = subprocess.Popen([binary, *args], env=env, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 30
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("nurllamad exited at start:\n" + self.read_log())
            try:
                with urllib.request.urlopen(self.base + "/api/version", timeout=1) as r:
                    if r.status == 200:
                        return
            except urllib.error.HTTPError:
                return  # it answers (401: access "tokens")
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("nurllamad did not answer within 30 s:\n" + self.read_log())

    def read_log(self):
        self.log.flush()
        with open(self.log_path) as f:
            return f.read()

    def stop(self, timeout=30):
        """SIGTERM; returns the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise RuntimeError("nurllamad did not stop within %d s after SIGTERM" % timeout)
        self.log.close()
        return self.proc.returncode

    def cleanup(self):
        shutil.rmtree(self.home, ignore_errors=True)


def curl(*args, data=None, timeout=120):
    """Runs curl; returns (status, headers_text, body_text). Body is raw bytes decoded as UTF-8."""
    cmd = ["curl", "-sS", "-N", "-D", "-", "--max-time", str(timeout)]
    if data is not None:
        cmd += ["--data-binary", "@-"]
    cmd += list(args)
    p = subprocess.run(cmd, input=data.encode() if isinstance(data, str) else data, capture_output=True)
    out = p.stdout.decode("utf-8", "replace")
    # Skip "100 Continue" preambles.
    while out.startswith("HTTP/1.1 100"):
        out = out.split("\r\n\r\n", 1)[1]
    head, _, body = out.partition("\r\n\r\n")
    status = int(head.split(" ")[1]) if head.startswith("HTTP/") else 0
    return status, head, body


def post_json(base, path, obj, timeout=120):
    return curl("-H", "Content-Type: application/json", base + path, data=json.dumps(obj), timeout=timeout)


def read_to_end(sock, timeout=10):
    """Everything the peer still sends until it closes the connection."""
    sock.settimeout(timeout)
    got = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            return got
        got += chunk
