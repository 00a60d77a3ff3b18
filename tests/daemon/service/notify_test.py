"""nurllamad as a systemd service, checked the way systemd sees it: the daemon runs with
NOTIFY_SOCKET pointing at a datagram socket of this test (what systemd listens on for
Type=notify services), and listeners handed over as systemd does (systemd-socket-activate, and
LISTEN_FDS without names). Asserts the sd_notify protocol (sd_notify(3)):
- READY=1 arrives only once the TCP port and the control socket accept connections, with a
  STATUS= line that names the listeners and the model/queue counts;
- SIGHUP: RELOADING=1 with MONOTONIC_USEC (a CLOCK_MONOTONIC time within the reload), then READY=1;
- SIGTERM: STOPPING=1, exit 0;
- WATCHDOG_USEC=W: WATCHDOG=1 every W/2 (between W/4 and 3W/4 apart, never W), none without it;
- socket activation: the first connection to a socket systemd-socket-activate holds starts the
  daemon, which answers on the inherited TCP and Unix sockets (named http/control) and also
  when they come unnamed (matched by family)."""
import argparse
import fcntl
import os
import re
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "e2e"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "support"))
from pycheck import FAILS, check, finish, run  # noqa: E402
from daemon_fixture import free_port  # noqa: E402


class NotifySocket:
    """The service manager's end: a datagram socket collecting sd_notify messages."""

    def __init__(self, path):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.msgs = []  # (monotonic time, {key: value})

    def wait_for(self, key, value=None, timeout=30):
        deadline = time.monotonic() + timeout
        while True:
            for t, m in self.msgs:
                if key in m and (value is None or m[key] == value):
                    return t, m
            left = deadline - time.monotonic()
            if left <= 0:
                return None, None
            self.sock.settimeout(left)
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                return None, None
            fields = dict(line.split("=", 1) for line in data.decode().split("\n") if "=" in line)
            self.msgs.append((time.monotonic(), fields))

    def drain(self, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.sock.settimeout(max(0.01, end - time.monotonic()))
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                break
            fields = dict(line.split("=", 1) for line in data.decode().split("\n") if "=" in line)
            self.msgs.append((time.monotonic(), fields))

    def clear(self):
        self.msgs = []


def accepts_tcp(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
            s.sendall(b"GET /api/version HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            return s.recv(64).startswith(b"HTTP/1.1 200")
    except OSError:
        return False


def accepts_unix(path):
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(2)
            s.connect(path)
            s.sendall(b"GET /api/version HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            return s.recv(64).startswith(b"HTTP/1.1 200")
    except OSError:
        return False


def service_env(home, port, sock_path, notify_path, extra=None):
    """The environment systemd gives the service (NOTIFY_SOCKET, STATE/RUNTIME_DIRECTORY)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("NURLLAMA_", "OLLAMA_", "LISTEN_", "WATCHDOG_", "JOURNAL_"))}
    env.update({
        "HOME": home,
        "NOTIFY_SOCKET": notify_path,
        "STATE_DIRECTORY": os.path.join(home, "state"),
        "RUNTIME_DIRECTORY": os.path.join(home, "run"),
        "NURLLAMA_HOST": f"127.0.0.1:{port}",
        "NURLLAMA_SOCKET": sock_path,
        "NURLLAMA_LOG_LEVEL": "debug",
    })
    env.update(extra or {})
    return env


def lifecycle(daemon, home):
    port = free_port()
    sock_path = os.path.join(home, "run", "nurllamad.sock")
    ns = NotifySocket(os.path.join(home, "notify.sock"))
    log = open(os.path.join(home, "lifecycle.log"), "w")
    proc = subprocess.Popen([daemon], env=service_env(home, port, sock_path, ns.path), stdout=log, stderr=log)
    try:
        t_ready, ready = ns.wait_for("READY", "1")
        check(ready is not None, "READY=1 arrives")
        if ready is None:
            return
        # Connect right after READY: both listeners must already accept.
        check(accepts_tcp(port), "the TCP port answers right after READY=1")
        check(accepts_unix(sock_path), "the control socket answers right after READY=1")
        status = ready.get("STATUS", "")
        check(f"127.0.0.1:{port}" in status and "unix:" + sock_path in status,
              f"STATUS names both listeners: {status!r}")
        check("0 models resident" in status and "0 queued" in status, f"STATUS counts models and queue: {status!r}")
        check(not any("WATCHDOG" in m for _, m in ns.msgs), "no WATCHDOG=1 without WATCHDOG_USEC")

        ns.clear()
        before = time.clock_gettime(time.CLOCK_MONOTONIC)
        proc.send_signal(signal.SIGHUP)
        _, rel = ns.wait_for("RELOADING", "1")
        after = time.clock_gettime(time.CLOCK_MONOTONIC)
        check(rel is not None, "SIGHUP: RELOADING=1")
        if rel is not None:
            usec = int(rel.get("MONOTONIC_USEC", "0"))
            check(before * 1e6 <= usec <= after * 1e6, "RELOADING=1 carries MONOTONIC_USEC of the reload")
        _, rdy = ns.wait_for("READY", "1")
        check(rdy is not None, "READY=1 after the reload")
        order = [k for _, m in ns.msgs for k in m if k in ("RELOADING", "READY")]
        check(order[:2] == ["RELOADING", "READY"], f"RELOADING before READY: {order}")
        check(accepts_tcp(port), "still serving after the reload")

        ns.clear()
        proc.send_signal(signal.SIGTERM)
        _, stop = ns.wait_for("STOPPING", "1")
        check(stop is not None, "SIGTERM: STOPPING=1")
        rc = proc.wait(timeout=30)
        check(rc == 0, f"exit status 0 after SIGTERM (got {rc})")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()


def watchdog(daemon, home):
    port = free_port()
    period_us = 1_000_000
    ns = NotifySocket(os.path.join(home, "notify-wd.sock"))
    log = open(os.path.join(home, "watchdog.log"), "w")
    env = service_env(home, port, os.path.join(home, "run", "wd.sock"), ns.path,
                      {"WATCHDOG_USEC": str(period_us)})
    proc = subprocess.Popen([daemon], env=env, stdout=log, stderr=log)
    try:
        _, ready = ns.wait_for("READY", "1")
        check(ready is not None, "watchdog run: READY=1")
        ns.drain(3.2)
        pings = [t for t, m in ns.msgs if m.get("WATCHDOG") == "1"]
        gaps = [b - a for a, b in zip(pings, pings[1:])]
        check(len(pings) >= 4, f"WATCHDOG=1 keeps coming ({len(pings)} in ~3 s at a 1 s watchdog)")
        check(all(0.25 <= g <= 0.75 for g in gaps), f"WATCHDOG=1 every half period (gaps {[round(g, 3) for g in gaps]})")
        proc.send_signal(signal.SIGTERM)
        check(proc.wait(timeout=30) == 0, "watchdog run exits 0")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()


def socket_activate_named(daemon, home, fdnames):
    """systemd-socket-activate holds the sockets and starts the daemon on the first connection.
    fdnames: "http:control" (a socket unit per listener, each with its FileDescriptorName=), or
    "nurllamad.socket:nurllamad.socket" — what systemd passes for the shipped nurllamad.socket,
    one unit holding both listeners under the unit's own name: matched by family."""
    tool = subprocess.run(["sh", "-c", "command -v systemd-socket-activate"], capture_output=True, text=True).stdout.strip()
    if not tool:
        check(False, "systemd-socket-activate is installed (package systemd)")
        return
    port = free_port()
    sock_path = os.path.join(home, "sa-" + fdnames.split(":")[0], "nurllamad.sock")
    os.makedirs(os.path.dirname(sock_path), exist_ok=True)
    env = service_env(home, port, os.path.join(home, "run", "unused.sock"), "")
    # The daemon's own defaults would bind elsewhere: an inherited socket must be what answers.
    env["NURLLAMA_HOST"] = "127.0.0.1:1"
    del env["NOTIFY_SOCKET"]
    cmd = [tool, "-l", f"127.0.0.1:{port}", "-l", sock_path, "--fdname=" + fdnames]
    for k, v in env.items():
        cmd += ["-E", f"{k}={v}"]
    log_path = os.path.join(home, "activate-" + fdnames.split(":")[0] + ".log")
    log = open(log_path, "w")
    proc = subprocess.Popen(cmd + [daemon], stdout=log, stderr=log)
    try:
        deadline = time.time() + 10
        while not os.path.exists(sock_path) and time.time() < deadline:
            time.sleep(0.05)
        # The first request is what starts the daemon.
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/version", timeout=60) as r:
                first = r.status
        except OSError as e:
            first = str(e)
        check(first == 200, f"[{fdnames}] the first request to the activated port starts the daemon and is answered ({first})")
        check(accepts_unix(sock_path), "the inherited control socket answers")
        proc.send_signal(signal.SIGTERM)
        check(proc.wait(timeout=30) == 0, "socket-activated daemon exits 0 on SIGTERM")
        log.close()
        text = open(log_path).read()
        check("cannot listen" not in text and not re.search(r"listening on 127\.0\.0\.1:1(?!\d)", text),
              "it bound nothing itself")
        check(os.path.exists(sock_path), "the inherited socket file is left to its owner on stop")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def socket_activate_unnamed(daemon, home):
    """LISTEN_FDS without LISTEN_FDNAMES: the sockets are matched by family."""
    port = free_port()
    tcp = socket.socket()
    tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    tcp.bind(("127.0.0.1", port))
    tcp.listen(16)
    sock_path = os.path.join(home, "unnamed.sock")
    uni = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    uni.bind(sock_path)
    uni.listen(16)
    env = service_env(home, 1, os.path.join(home, "run", "unused2.sock"), "")
    del env["NOTIFY_SOCKET"]
    env["LISTEN_FDS"] = "2"
    tcp_fd, uni_fd = tcp.fileno(), uni.fileno()

    def place_fds():  # the unix socket first, to show the order does not matter
        u, t = fcntl.fcntl(uni_fd, fcntl.F_DUPFD, 10), fcntl.fcntl(tcp_fd, fcntl.F_DUPFD, 10)
        os.dup2(u, 3)
        os.dup2(t, 4)

    log = open(os.path.join(home, "unnamed.log"), "w")
    # LISTEN_PID must be the daemon's pid: the shell exports its own and execs the daemon.
    # close_fds=False: Python would close 3 and 4 after place_fds otherwise; every other fd of
    # this process is close-on-exec.
    proc = subprocess.Popen(["sh", "-c", 'LISTEN_PID=$$ exec "$0"', daemon], env=env, stdout=log, stderr=log,
                            close_fds=False, preexec_fn=place_fds)
    try:
        deadline = time.time() + 30
        ok = False
        while time.time() < deadline and proc.poll() is None and not ok:
            ok = accepts_tcp(port)
            time.sleep(0.05)
        check(ok, "unnamed inherited TCP socket serves the API")
        check(accepts_unix(sock_path), "unnamed inherited Unix socket serves the control routes")
        proc.send_signal(signal.SIGTERM)
        check(proc.wait(timeout=30) == 0, "exits 0")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()
        tcp.close()
        uni.close()


def parse_journal(data):
    """The journal's native protocol: KEY=VALUE lines, or KEY\n<le64 size><bytes>\n."""
    fields, i = {}, 0
    while i < len(data):
        nl = data.index(b"\n", i)
        line = data[i:nl]
        if b"=" in line:
            k, v = line.split(b"=", 1)
            fields[k.decode()] = v.decode()
            i = nl + 1
        else:
            size = int.from_bytes(data[nl + 1:nl + 9], "little")
            fields[line.decode()] = data[nl + 9:nl + 9 + size].decode()
            i = nl + 9 + size + 1
    return fields


def journal_child(daemon, home, model):
    """Runs inside a private mount namespace: a tmpfs over /run/systemd, where this process is the
    journal (/run/systemd/journal/socket); the daemon's stderr is 'the journal stream'."""
    subprocess.run(["mount", "-t", "tmpfs", "tmpfs", "/run/systemd"], check=True)
    os.makedirs("/run/systemd/journal")
    j = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    j.bind("/run/systemd/journal/socket")
    port = free_port()
    conf = os.path.join(home, "j.conf")
    open(conf, "w").write("keep_alive = 5m\n")
    stream_path = os.path.join(home, "journal-stream")
    stream = open(stream_path, "w")
    st = os.fstat(stream.fileno())
    env = service_env(home, port, os.path.join(home, "run", "j.sock"), "",
                      {"JOURNAL_STREAM": f"{st.st_dev}:{st.st_ino}", "NURLLAMA_CONFIG": conf,
                       "NURLLAMA_ALLOW_MODEL_PATHS": "1", "STATE_DIRECTORY": os.path.join(home, "jstate")})
    del env["NOTIFY_SOCKET"]
    proc = subprocess.Popen([daemon], env=env, stdout=stream, stderr=stream)
    entries = []

    def collect(until, timeout=30):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(until(e) for e in entries):
                return True
            j.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                entries.append(parse_journal(j.recv(1 << 20)))
            except socket.timeout:
                break
        return any(until(e) for e in entries)

    try:
        check(collect(lambda e: e.get("MESSAGE") == "ready"), "journal: entries arrive on the journal socket")
        req = urllib.request.Request(f"http://127.0.0.1:{port}/api/version", headers={"X-Request-Id": "abc-123"})
        urllib.request.urlopen(req, timeout=10).read()
        got = collect(lambda e: e.get("REQUEST_ID") == "abc-123")
        acc = [e for e in entries if e.get("REQUEST_ID") == "abc-123"]
        check(got and acc[0].get("PRIORITY") == "6" and acc[0].get("CLIENT", "").startswith("127.0.0.1:"),
              f"journal: the access entry has REQUEST_ID, CLIENT and priority info {acc[:1]}")
        if model:
            body = ('{"model": "%s", "prompt": "", "keep_alive": "1m"}' % model).encode()
            urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{port}/api/generate", data=body,
                                                          headers={"Content-Type": "application/json"}), timeout=60).read()
            got = collect(lambda e: "MODEL" in e)
            check(got, "journal: the model load is logged with MODEL=")
        open(conf, "w").write("no such line\n")
        proc.send_signal(signal.SIGHUP)
        got = collect(lambda e: e.get("MESSAGE", "").startswith("config reload:"))
        err = [e for e in entries if e.get("MESSAGE", "").startswith("config reload:")]
        check(got and err[0].get("PRIORITY") == "3", f"journal: a failed reload is logged as err (3) {err[:1]}")
        check(all(e.get("SYSLOG_IDENTIFIER") == "nurllamad" for e in entries), "journal: SYSLOG_IDENTIFIER=nurllamad")
        check(not any("CODE_FILE" in e for e in entries), "journal: no CODE_FILE of the sink itself")
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
        stream.close()
        check(os.path.getsize(stream_path) == 0, "journal: nothing duplicated on the stderr stream")
        check(not os.path.exists(os.path.join(home, "jstate", "logs", "nurllamad.log")),
              "journal: no log file when the journal is the log")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def journal(daemon, home, model):
    if os.geteuid() != 0:
        print("skip journal: needs root for a private mount namespace")
        return
    r = subprocess.run(["unshare", "--mount", "--propagation", "private", sys.executable, __file__,
                        "--daemon", daemon, "--journal-child", home] + (["--model", model] if model else []),
                       capture_output=True, text=True)
    print(r.stdout, end="")
    if r.returncode != 0:
        FAILS.append("journal: " + (r.stderr.strip().splitlines() or ["failed"])[-1])


def log_file(daemon, home, model, client=""):
    """Not under the journal: stderr plus <state>/logs/nurllamad.log, which `nurllama logs` reads."""
    port = free_port()
    env = service_env(home, port, os.path.join(home, "run", "lf.sock"), "")
    for k in ("NOTIFY_SOCKET", "STATE_DIRECTORY", "RUNTIME_DIRECTORY"):
        del env[k]
    env["NURLLAMA_HOME"] = os.path.join(home, "user-state")
    log = open(os.path.join(home, "logfile.log"), "w")
    proc = subprocess.Popen([daemon], env=env, stdout=log, stderr=log)
    try:
        deadline = time.time() + 30
        while time.time() < deadline and not accepts_tcp(port):
            time.sleep(0.05)
        path = os.path.join(home, "user-state", "logs", "nurllamad.log")
        access = re.compile(r"http: GET /api/version 200 \d+ms 127\.0\.0\.1:\d+ request=\d+-1")
        text = ""
        deadline = time.time() + 10  # the access line is written after the reply
        while time.time() < deadline and not access.search(text):
            text = open(path).read() if os.path.exists(path) else ""
            time.sleep(0.05)
        check(" INFO  ready" in text, f"log file {path} has the daemon's lines")
        check(access.search(text) is not None, "log file: the access line with its request id")
        if client:
            # `nurllama logs` finds this file from the same NURLLAMA_HOME, with no other setting.
            cenv = {k: v for k, v in env.items() if k != "NURLLAMA_HOST"}
            r = subprocess.run([client, "logs", "-n", "2"], env=cenv, capture_output=True, text=True, timeout=30)
            last = open(path).read().splitlines()[-2:]
            check(r.returncode == 0 and r.stdout.splitlines() == last, f"nurllama logs -n 2 prints the last 2 lines {r.stdout!r}")
            follow = subprocess.Popen([client, "logs", "-f", "-n", "0"], env=cenv, stdout=subprocess.PIPE)
            time.sleep(0.5)
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/tags", timeout=10).read()
            got = ""
            fd = follow.stdout.fileno()
            deadline = time.time() + 10
            while time.time() < deadline and "/api/tags" not in got:
                if select.select([fd], [], [], 0.2)[0]:
                    got += os.read(fd, 65536).decode(errors="replace")
            follow.kill()
            follow.wait()
            check("/api/tags" in got, f"nurllama logs -f prints a line logged after it started {got!r}")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
        log.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--daemon", required=True)
    ap.add_argument("--model", default="", help="a small .gguf, for the MODEL= journal field")
    ap.add_argument("--journal-child", default="")
    ap.add_argument("--client", default="", help="nurllama, for `nurllama logs`")
    args = ap.parse_args()
    if args.journal_child:
        journal_child(args.daemon, args.journal_child, args.model)
        sys.exit(1 if FAILS else 0)
    with tempfile.TemporaryDirectory(prefix="nurl-notify-") as home:
        for test in (lifecycle, watchdog,
                     lambda d, h: socket_activate_named(d, h, "http:control"),
                     lambda d, h: socket_activate_named(d, h, "nurllamad.socket:nurllamad.socket"),
                     socket_activate_unnamed):
            print(f"--- {getattr(test, '__name__', 'socket_activate_named')}", flush=True)
            test(args.daemon, home)
        print("--- journal", flush=True)
        journal(args.daemon, home, args.model)
        print("--- log_file", flush=True)
        log_file(args.daemon, home, args.model, args.client)
        if FAILS:
            for name in ("lifecycle", "watchdog", "activate-http", "activate-nurllamad.socket", "unnamed", "logfile",
                         "journal-stream"):
                p = os.path.join(home, name + ".log")
                if os.path.exists(p):
                    print(f"--- {p}\n" + open(p).read()[-3000:])
    finish()


if __name__ == "__main__":
    main()
