"""The systemd files as systemd's own tools judge them, on the CMake install tree (what both
packages ship): `systemd-analyze verify` on every unit, `systemd-analyze security --offline`
(exposure at most 2.0, for the unit alone and with the CUDA drop-in), systemd-sysusers and
systemd-tmpfiles applied to a scratch root (the nurllama user and group exist, the state
directory belongs to them with mode 0750). No running systemd is needed for any of these."""
import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "support"))
from pycheck import FAILS, check, finish, run  # noqa: E402


def verify(stage, units, unit_path=None):
    """systemd-analyze verify with the staged /usr laid over the real one (a read-only overlay in a
    private mount namespace), so that ExecStart= and the man pages of Documentation= resolve to
    what is installed, and the rest (sysinit.target, /bin/kill) to this system's."""
    env = dict(os.environ)
    if unit_path:
        env["SYSTEMD_UNIT_PATH"] = unit_path + ":"
    script = 'mount -t overlay overlay -o "lowerdir=$0/usr:/usr" /usr && exec systemd-analyze verify --man=yes "$@"'
    r = run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script, stage, *units], env=env)
    return (r.stdout + r.stderr).strip(), r.returncode


def exposure(unit_path, root):
    r = run(["systemd-analyze", "security", "--offline=yes", f"--root={root}", "--no-pager", unit_path])
    m = re.search(r"Overall exposure level for \S+: ([0-9.]+)", r.stdout + r.stderr)
    return float(m.group(1)) if m else None, r.stdout + r.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="nurl-units-") as tmp:
        stage = os.path.join(tmp, "stage")
        r = run(["cmake", "--install", args.build, "--prefix", "/usr"], env={**os.environ, "DESTDIR": stage})
        check(r.returncode == 0, "cmake --install into a staging root" + ("" if r.returncode == 0 else ": " + r.stderr))
        unitdir = os.path.join(stage, "usr/lib/systemd/system")
        units = sorted(glob.glob(os.path.join(unitdir, "*.service")) + glob.glob(os.path.join(unitdir, "*.socket")))
        check({os.path.basename(u) for u in units} == {"nurllamad.service", "nurllamad.socket"},
              f"units installed: {[os.path.basename(u) for u in units]}")
        for u in units:
            out, rc = verify(stage, [u])
            check(rc == 0 and out == "", f"systemd-analyze verify {os.path.basename(u)}" + ("" if not out else ":\n" + out))
        score, text = exposure(os.path.join(unitdir, "nurllamad.service"), stage)
        print(f"     systemd-analyze security: {score}")
        check(score is not None and score <= 2.0, f"exposure of nurllamad.service {score} <= 2.0")
        if score is None:
            print(text)
        dropin = os.path.join(unitdir, "nurllamad.service.d", "cuda.conf")
        if os.path.exists(dropin):
            # Drop-ins are read from the unit's directory only when it is on the unit path.
            out, rc = verify(stage, ["nurllamad.service"], unit_path=unitdir)
            check(rc == 0 and out == "", "nurllamad.service verifies with the CUDA drop-in" + ("" if not out else ":\n" + out))
            score, _ = exposure(os.path.join(unitdir, "nurllamad.service"), stage)
            print(f"     systemd-analyze security with the CUDA drop-in: {score}")
            check(score is not None and score <= 2.5, f"exposure with the CUDA drop-in {score} <= 2.5")

        # sysusers + tmpfiles, applied to an empty root as the packages' scripts do.
        root = os.path.join(tmp, "root")
        os.makedirs(os.path.join(root, "etc"))
        r = run(["systemd-sysusers", f"--root={root}", os.path.join(stage, "usr/lib/sysusers.d/nurllama.conf")])
        check(r.returncode == 0, "systemd-sysusers accepts nurllama.conf" + ("" if r.returncode == 0 else ": " + r.stderr))
        passwd = open(os.path.join(root, "etc/passwd")).read() if os.path.exists(os.path.join(root, "etc/passwd")) else ""
        group = open(os.path.join(root, "etc/group")).read() if os.path.exists(os.path.join(root, "etc/group")) else ""
        user = [line.split(":") for line in passwd.splitlines() if line.startswith("nurllama:")]
        grp = [line.split(":") for line in group.splitlines() if line.startswith("nurllama:")]
        check(len(user) == 1 and len(grp) == 1, "user and group nurllama created")
        if user and grp:
            check(user[0][3] == grp[0][2], "the user's primary group is nurllama")
            check(user[0][5] == "/var/lib/nurllama" and user[0][6].endswith("nologin"), "home /var/lib/nurllama, no login shell")
            check(int(user[0][2]) < 1000, "a system uid")
        r = run(["systemd-tmpfiles", f"--root={root}", "--create", os.path.join(stage, "usr/lib/tmpfiles.d/nurllama.conf")])
        check(r.returncode == 0, "systemd-tmpfiles --create nurllama.conf" + ("" if r.returncode == 0 else ": " + r.stderr))
        st = os.stat(os.path.join(root, "var/lib/nurllama")) if os.path.exists(os.path.join(root, "var/lib/nurllama")) else None
        check(st is not None and user and st.st_uid == int(user[0][2]) and (st.st_mode & 0o777) == 0o750,
              "/var/lib/nurllama belongs to nurllama, mode 0750")
    finish()


if __name__ == "__main__":
    main()
