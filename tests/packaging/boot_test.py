"""The installed .deb under a real systemd: this system's /usr, /etc and /var under overlays (writes
go to a scratch directory), the package installed with dpkg, then booted with systemd-nspawn
(systemd as PID 1, its own journal, a private network with only loopback). A oneshot unit in the
container drives the service with systemd's own tools and writes what it saw to /out; the checks
here read that:

- the service enabled at install starts at boot as the nurllama user, Type=notify (READY only
  after its listeners accept), with a useful STATUS= line, and answers on 127.0.0.1:11434;
- a model generates llama.cpp's greedy text inside the sandbox (ProtectSystem=strict,
  SystemCallFilter, MemoryDenyWriteExecute, ...): the filters do not kill real work;
- a member of the nurllama group reaches the daemon through /run/nurllama with no configuration,
  a non-member is told to join the group;
- `systemctl reload` (ExecReload: SIGHUP → RELOADING=1 … READY=1) keeps the same process;
- the journal holds the daemon's entries with priorities and fields; `nurllama logs` reads them;
- with WatchdogSec=3 the pings keep it alive; a frozen daemon (SIGSTOP) is restarted by systemd;
- `systemctl stop` ends it cleanly; with nurllamad.socket the first request starts the service;
- `systemd-analyze security` rates the unit as run."""

import ast
import json
import os
import re
import shutil

from pycheck import check, run

HOST_SCRIPT = r"""
set -eu
root=$1; deb=$2; work=$3; out=$4; testdata=$5; guest=$6
for d in usr etc var; do
  mkdir -p "$work/$d-up" "$work/$d-wk" "$root/$d"
  mount -t overlay overlay -o "lowerdir=/$d,upperdir=$work/$d-up,workdir=$work/$d-wk" "$root/$d"
done
for l in bin sbin lib lib64; do [ -L "/$l" ] && ln -sfn "usr/$l" "$root/$l"; done
mkdir -p "$root/tmp" "$root/run" "$root/proc" "$root/dev" "$root/sys" "$root/root" "$root/out" "$root/srv/testdata"
mount -t proc proc "$root/proc"
mount --rbind /dev "$root/dev"
chroot "$root" sh -c 'dpkg -s nurllama >/dev/null 2>&1 && dpkg --purge nurllama >/dev/null; true'
cp "$deb" "$root/root/pkg.deb"
chroot "$root" dpkg -i /root/pkg.deb >/dev/null
umount -R "$root/dev" "$root/proc"
systemd-id128 new >"$root/etc/machine-id"
cp "$guest" "$root/root/boot-test.sh"
chmod 755 "$root/root/boot-test.sh"
cat >"$root/etc/systemd/system/nurl-boot-test.service" <<'UNIT'
[Unit]
Description=nurllamad under systemd
After=nurllamad.service
[Service]
Type=oneshot
ExecStart=/root/boot-test.sh
SuccessAction=exit-force
FailureAction=exit-force
[Install]
WantedBy=multi-user.target
UNIT
ln -s ../nurl-boot-test.service "$root/etc/systemd/system/multi-user.target.wants/nurl-boot-test.service"
exec timeout 300 systemd-nspawn -q --register=no --keep-unit --link-journal=no --private-network \
  -D "$root" -M nurlboot --bind="$out:/out" --bind-ro="$testdata:/srv/testdata" --boot
"""

GUEST_SCRIPT = r"""#!/bin/sh
exec >/out/guest.log 2>&1
show() { systemctl show -p "$1" --value nurllamad.service; }
echo "== boot"
echo "active=$(systemctl is-active nurllamad.service)"
echo "enabled=$(systemctl is-enabled nurllamad.service)"
echo "type=$(show Type)"
echo "status=$(show StatusText)"
echo "user=$(ps -o user= -p "$(show MainPID)")"
echo "version=$(curl -sS --max-time 10 http://127.0.0.1:11434/api/version)"
echo "== generate"
curl -sS --max-time 120 --unix-socket /run/nurllama/nurllamad.sock http://localhost/api/generate \
  -d @/out/generate-request.json >/out/generate.json
echo "generate-rc=$?"
echo "== group"
useradd -m -G nurllama alice
useradd -m bob
su alice -s /bin/sh -c 'nurllama ps'; echo "alice-rc=$?"
su bob -s /bin/sh -c 'nurllama ps'; echo "bob-rc=$?"
echo "== reload"
pid0=$(show MainPID)
systemctl reload nurllamad.service; echo "reload-rc=$?"
echo "after-reload=$(systemctl is-active nurllamad.service) samepid=$([ "$(show MainPID)" = "$pid0" ] && echo yes)"
echo "== logs"
nurllama logs -n 5; echo "logs-rc=$?"
echo "== watchdog"
mkdir -p /run/systemd/system/nurllamad.service.d
printf '[Service]\nWatchdogSec=3\nTimeoutAbortSec=1\n' >/run/systemd/system/nurllamad.service.d/watchdog.conf
systemctl daemon-reload
systemctl restart nurllamad.service
pid1=$(show MainPID)
sleep 7
echo "alive-with-pings=$(systemctl is-active nurllamad.service) samepid=$([ "$(show MainPID)" = "$pid1" ] && echo yes)"
kill -STOP "$pid1"
for _ in $(seq 1 30); do
  [ "$(show MainPID)" != "$pid1" ] && [ "$(systemctl is-active nurllamad.service)" = active ] && break
  sleep 1
done
echo "frozen: restarts=$(show NRestarts) newpid=$([ "$(show MainPID)" != "$pid1" ] && echo yes) active=$(systemctl is-active nurllamad.service)"
rm /run/systemd/system/nurllamad.service.d/watchdog.conf
systemctl daemon-reload
echo "== stop"
systemctl stop nurllamad.service
echo "stopped=$(systemctl is-active nurllamad.service) result=$(show Result)"
echo "== socket"
systemctl start nurllamad.socket
echo "socket=$(systemctl is-active nurllamad.socket) before-request=$(systemctl is-active nurllamad.service)"
echo "socket-version=$(curl -sS --max-time 30 http://127.0.0.1:11434/api/version)"
echo "after-request=$(systemctl is-active nurllamad.service)"
echo "== security"
systemd-analyze security --no-pager nurllamad.service | tail -n 1
journalctl -u nurllamad.service -o json --no-pager >/out/journal.json
echo "== done"
"""


def greedy_prefix(result):
    """llama.cpp's greedy continuation up to the first step whose choice is nearly a tie."""
    steps = result["greedy_steps"]
    if isinstance(steps, str):
        steps = ast.literal_eval(steps)
    out = ""
    for step in steps:
        if step.get("eog") or step["margin"] < 0.1:
            break
        out += step["piece"]
    return out


def boot_test(deb, tmp, testdata):
    if os.geteuid() != 0 or not shutil.which("systemd-nspawn") or not shutil.which("unshare"):
        print("skip the boot under systemd: needs root, unshare(1) and systemd-nspawn (systemd-container)")
        return
    golden = json.load(open(os.path.join(testdata, "golden", "stories260K.json")))["results"][0]
    root, work, out = (os.path.join(tmp, "boot-" + d) for d in ("root", "work", "out"))
    for d in (root, work, out):
        os.makedirs(d)
    guest = os.path.join(tmp, "boot-test.sh")
    with open(guest, "w") as f:
        f.write(GUEST_SCRIPT)
    with open(os.path.join(out, "generate-request.json"), "w") as f:
        json.dump({"model": "/srv/testdata/models/stories260K.gguf", "prompt": golden["text"], "raw": True,
                   "stream": False, "options": {"temperature": 0, "repeat_penalty": 1, "num_predict": 32}}, f)
    r = run(["unshare", "--mount", "--propagation", "private", "sh", "-c", HOST_SCRIPT, "sh",
             root, deb, work, out, os.path.realpath(testdata), guest])
    log_path = os.path.join(out, "guest.log")
    log = open(log_path).read() if os.path.exists(log_path) else ""
    print("     systemd-nspawn: exit " + str(r.returncode) + "\n     " + log.replace("\n", "\n     "))
    if "== done" not in log:
        print("     " + (r.stdout + r.stderr)[-4000:].replace("\n", "\n     "))
    if not log:
        # The test unit never ran: this machine cannot boot a container (no cgroup or namespace
        # support for systemd-nspawn), which says nothing about the package. Loud, not a failure.
        print("SKIPPED the boot under systemd: systemd-nspawn could not boot a container here (output above)")
        return
    check("== done" in log, "the container booted and the test unit ran to its end")

    def field(name):
        m = re.search(r"(?:^|\s)" + re.escape(name) + r"=(.*?)(?:\s\w[\w-]*=|$)", log, re.M)
        return m.group(1).strip() if m else None

    check(field("active") == "active" and field("enabled") == "enabled", "enabled at install, started at boot")
    check(field("type") == "notify", "Type=notify")
    check(re.search(r"^status=listening on .*127\.0\.0\.1:11434", log, re.M) is not None,
          f"STATUS= says where it listens: {field('status')}")
    check(field("user") == "nurllama", "runs as the nurllama user")
    check('"version"' in (field("version") or ""), "answers /api/version on 127.0.0.1:11434")
    gen_path = os.path.join(out, "generate.json")
    reply = {}
    if os.path.exists(gen_path) and os.path.getsize(gen_path) > 0:
        try:
            reply = json.load(open(gen_path))
        except ValueError:
            reply = {"unparsable": open(gen_path).read()[:500]}
    prefix = greedy_prefix(golden)
    check(len(prefix) > 10 and reply.get("response", "").startswith(prefix),
          f"inside the sandbox stories260K generates llama.cpp's greedy text: {reply.get('response', reply)!r}")
    check(re.search(r"^alice-rc=0$", log, re.M) is not None, "a nurllama group member reaches the daemon's socket")
    check(re.search(r"^bob-rc=[1-9]", log, re.M) is not None and "usermod -aG nurllama" in log,
          "a non-member is refused and told to join the nurllama group")
    check(field("reload-rc") == "0" and field("after-reload") == "active" and field("samepid") == "yes",
          "systemctl reload: same process, active again")
    check(field("logs-rc") == "0", "nurllama logs reads the service's journal")
    check(re.search(r"^alive-with-pings=active samepid=yes$", log, re.M) is not None,
          "with WatchdogSec=3 the watchdog pings keep it running")
    m = re.search(r"^frozen: restarts=(\d+) newpid=(\w*) active=(\w+)$", log, re.M)
    check(m is not None and int(m.group(1)) >= 1 and m.group(2) == "yes" and m.group(3) == "active",
          "a frozen daemon misses its pings and systemd restarts it")
    check(field("stopped") == "inactive" and field("result") == "success", "systemctl stop ends it cleanly")
    check(field("socket") == "active" and field("before-request") == "inactive" and
          '"version"' in (field("socket-version") or "") and field("after-request") == "active",
          "nurllamad.socket: the first request starts the service on the inherited listener")
    m = re.search(r"Overall exposure level for nurllamad\.service: ([\d.]+)", log)
    print(f"     systemd-analyze security (online, in the container): {m.group(1) if m else '?'}")
    check(m is not None, "systemd-analyze security rates the running unit")
    entries = []
    jpath = os.path.join(out, "journal.json")
    if os.path.exists(jpath):
        entries = [json.loads(line) for line in open(jpath) if line.startswith("{")]
    ours = [e for e in entries if e.get("SYSLOG_IDENTIFIER") == "nurllamad"]
    check(len(ours) > 0 and all("PRIORITY" in e for e in ours), f"the daemon's journal entries carry priorities ({len(ours)})")
    check(any(e.get("MODEL", "").endswith("stories260K.gguf") for e in ours), "a request's entries carry MODEL=")
    check(any(e.get("MESSAGE", "").startswith("Reloading") or "RELOADING" in e.get("MESSAGE", "").upper()
              for e in entries), "the journal records the reload")
