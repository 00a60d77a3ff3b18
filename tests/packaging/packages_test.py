"""The .deb and .rpm packages, built from the project's build tree by packaging/build-packages.sh,
checked with the distributions' own tools:
- lintian: no error and no warning that is not overridden (each override says why);
- rpmlint: no error;
- contents (dpkg-deb -c, rpm -qlp): the binaries, units, sysusers/tmpfiles, config, man pages,
  completions — and nothing else: no test programs, no path of the build machine inside any file;
- dependencies are the ones the binaries need: every shared library the ELF files link (objdump
  NEEDED) is covered by Depends (the Debian package that owns it, from dpkg -S) and by rpm's
  Requires (soname()(64bit)); the CPU package needs no CUDA library;
- installed with dpkg into a throwaway root (an overlay of this system, in a private mount
  namespace, so nothing touches the real one): the maintainer scripts create the user, the state
  directory, enable the service and do not start it (no systemd runs in a chroot);
  nurllamad --version and nurllama --version run from it; upgrade (reinstall) keeps the enabled
  state; remove keeps /var/lib/nurllama and the config; purge removes the config, keeps the models
  and says so."""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "support"))
from pycheck import FAILS, check, finish, run  # noqa: E402
from boot_test import boot_test  # noqa: E402


EXPECTED_DEB = {
    "./usr/bin/nurllama", "./usr/bin/nurllamad",
    "./lib/systemd/system/nurllamad.service", "./lib/systemd/system/nurllamad.socket",
    "./usr/lib/systemd/system-preset/90-nurllama.preset",
    "./usr/lib/sysusers.d/nurllama.conf", "./usr/lib/tmpfiles.d/nurllama.conf",
    "./etc/nurllama/nurllamad.conf", "./etc/default/nurllamad",
    "./usr/share/man/man1/nurllama.1.gz", "./usr/share/man/man8/nurllamad.8.gz",
    "./usr/share/bash-completion/completions/nurllama",
    "./usr/share/zsh/vendor-completions/_nurllama",
    "./usr/share/fish/vendor_completions.d/nurllama.fish",
    "./usr/share/doc/nurllama/README.md", "./usr/share/doc/nurllama/README.Debian",
    "./usr/share/doc/nurllama/changelog.gz", "./usr/share/doc/nurllama/copyright",
}
EXPECTED_RPM = {
    "/usr/bin/nurllama", "/usr/bin/nurllamad",
    "/usr/lib/systemd/system/nurllamad.service", "/usr/lib/systemd/system/nurllamad.socket",
    "/usr/lib/systemd/system-preset/90-nurllama.preset",
    "/usr/lib/sysusers.d/nurllama.conf", "/usr/lib/tmpfiles.d/nurllama.conf",
    "/etc/nurllama", "/etc/nurllama/nurllamad.conf", "/etc/default/nurllamad",
    "/usr/share/man/man1/nurllama.1.gz", "/usr/share/man/man8/nurllamad.8.gz",
    "/usr/share/bash-completion/completions/nurllama",
    "/usr/share/zsh/site-functions/_nurllama",
    "/usr/share/fish/vendor_completions.d/nurllama.fish",
    "/usr/share/doc/nurllama/README.md",
}
EXPECTED_CUDA_DEB = {"./usr/lib/nurllama/libnurllama-cuda.so", "./lib/systemd/system/nurllamad.service.d/cuda.conf",
                     "./usr/share/doc/nurllama-cuda/changelog.gz", "./usr/share/doc/nurllama-cuda/copyright"}


def deb_files(deb):
    out = run(["dpkg-deb", "-c", deb]).stdout
    return {line.split()[-1] if " -> " not in line else line.split()[-3] for line in out.splitlines()
            if not line.startswith("d")}


def needed_libs(root):
    libs = set()
    for dirpath, _, files in os.walk(root):
        for f in files:
            p = os.path.join(dirpath, f)
            if os.path.islink(p) or not open(p, "rb").read(4) == b"\x7fELF":
                continue
            libs |= set(re.findall(r"NEEDED\s+(\S+)", run(["objdump", "-p", p]).stdout))
    return libs


def owning_package(soname):
    m = re.search(r"\s" + re.escape(soname) + r" \(libc6,x86-64[^)]*\) => (\S+)", run(["ldconfig", "-p"]).stdout)
    if not m:
        return None
    r = run(["dpkg", "-S", os.path.realpath(m.group(1))])
    if r.returncode != 0:
        r = run(["dpkg", "-S", m.group(1)])
    return r.stdout.split(":")[0] if r.returncode == 0 else None


def check_deb(debs, build_dirs, tmp):
    main = [d for d in debs if os.path.basename(d).startswith("nurllama_")]
    check(len(main) == 1, f"nurllama .deb built: {[os.path.basename(d) for d in debs]}")
    if not main:
        return None
    deb = main[0]
    print(f"     size: {os.path.basename(deb)} {os.path.getsize(deb)} bytes")
    files = deb_files(deb)
    check(files == EXPECTED_DEB, "deb contents are exactly the expected files" +
          ("" if files == EXPECTED_DEB else f": extra {sorted(files - EXPECTED_DEB)}, missing {sorted(EXPECTED_DEB - files)}"))
    check(not any(re.search(r"test|bench|fuzz", f) for f in files), "no test, benchmark or fuzz programs")

    r = run(["lintian", "--allow-root", "--fail-on", "error,warning", "--display-info", *debs])
    print("     lintian:\n" + "\n".join("       " + line for line in (r.stdout + r.stderr).splitlines()))
    check(r.returncode == 0, "lintian: no error and no warning without an override")
    # The programs in /usr/bin. (Not the CUDA plugin: without a toolkit it is a stub that calls no
    # fortifiable libc function, which lintian reports as hardening-no-fortify-functions.)
    hardening = sorted(set(re.findall(r"^\w: \S+: (hardening-\S+) \[usr/bin/", r.stdout + r.stderr, re.M)))
    check(not hardening, f"lintian finds nurllamad and nurllama hardened (fortify, relro, bindnow) {hardening}")

    x = os.path.join(tmp, "deb-x")
    run(["dpkg-deb", "-x", deb, x])
    leaked = run(["grep", "-rlF", *sum((["-e", d] for d in build_dirs), []), x]).stdout.split()
    check(not leaked, f"no build-machine path inside any packaged file {leaked}")
    depends = run(["dpkg-deb", "-f", deb, "Depends"]).stdout.strip()
    print(f"     Depends: {depends}")
    dep_pkgs = {re.split(r"[ (]", d.strip())[0] for alt in depends.split(",") for d in alt.split("|")}
    for lib in sorted(needed_libs(x)):
        pkg = owning_package(lib)
        check(pkg is not None and pkg.split(":")[0] in dep_pkgs, f"{lib} (from {pkg}) is covered by Depends")
    check("cuda" not in depends, "the CPU package depends on no CUDA library")
    for b in ("nurllamad", "nurllama"):
        r = run([os.path.join(x, "usr/bin", b), "--version"])
        check(r.returncode == 0 and r.stdout.startswith(b + " "), f"dpkg -x: {b} --version → {r.stdout.strip()!r}")

    cuda = [d for d in debs if os.path.basename(d).startswith("nurllama-cuda_")]
    if cuda:
        cfiles = deb_files(cuda[0])
        print(f"     size: {os.path.basename(cuda[0])} {os.path.getsize(cuda[0])} bytes")
        check(cfiles == EXPECTED_CUDA_DEB, f"nurllama-cuda contents {sorted(cfiles)}")
        cdep = run(["dpkg-deb", "-f", cuda[0], "Depends"]).stdout.strip()
        print(f"     nurllama-cuda Depends: {cdep}")
        check("nurllama (= " in cdep and "cudart" in cdep, "nurllama-cuda depends on nurllama and the CUDA runtime")
    return deb


INSTALL_SCRIPT = r"""
set -eu
root=$1; deb=$2; work=$3
# A throwaway root: this system's /usr (and /etc) under overlays, writes go to $work.
for d in usr etc var; do
  mkdir -p "$work/$d-up" "$work/$d-wk" "$root/$d"
  mount -t overlay overlay -o "lowerdir=/$d,upperdir=$work/$d-up,workdir=$work/$d-wk" "$root/$d"
done
for l in bin sbin lib lib64; do [ -L "/$l" ] && ln -sfn "usr/$l" "$root/$l"; done
mkdir -p "$root/tmp" "$root/run" "$root/proc" "$root/dev"
mount -t proc proc "$root/proc"
mount --rbind /dev "$root/dev"
# Our own package must not be known to this root's dpkg before the test installs it.
chroot "$root" dpkg -s nurllama >/dev/null 2>&1 && chroot "$root" dpkg --purge nurllama >/dev/null
chroot "$root" sh -c 'getent passwd nurllama >/dev/null && userdel nurllama; getent group nurllama >/dev/null && groupdel nurllama; rm -rf /var/lib/nurllama /etc/nurllama /etc/default/nurllamad; true'
cp "$deb" "$root/tmp/pkg.deb"
echo "== install"; chroot "$root" dpkg -i /tmp/pkg.deb
echo "== state"
chroot "$root" getent passwd nurllama
chroot "$root" stat -c '%U:%G %a' /var/lib/nurllama
[ -L "$root/etc/systemd/system/multi-user.target.wants/nurllamad.service" ] && echo enabled
[ -L "$root/etc/systemd/system/sockets.target.wants/nurllamad.socket" ] && echo socket-enabled
echo "== versions"; chroot "$root" nurllamad --version; chroot "$root" nurllama --version
echo "== usermodel"; echo model > "$root/var/lib/nurllama/models/mine.gguf"
echo "== upgrade"; chroot "$root" dpkg -i /tmp/pkg.deb
[ -L "$root/etc/systemd/system/multi-user.target.wants/nurllamad.service" ] && echo enabled-after-upgrade
echo "== remove"; chroot "$root" dpkg -r nurllama
[ -f "$root/var/lib/nurllama/models/mine.gguf" ] && echo models-kept-after-remove
[ -f "$root/etc/nurllama/nurllamad.conf" ] && echo config-kept-after-remove
[ -e "$root/usr/bin/nurllamad" ] || echo binary-gone
echo "== purge"; chroot "$root" dpkg -P nurllama
[ -f "$root/var/lib/nurllama/models/mine.gguf" ] && echo models-kept-after-purge
[ -e "$root/etc/nurllama/nurllamad.conf" ] || echo config-gone-after-purge
[ -e "$root/etc/systemd/system/multi-user.target.wants/nurllamad.service" ] || echo disabled-after-purge
echo "== done"
"""


def install_test(deb, tmp):
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        print("skip install into a throwaway root: needs root and unshare(1)")
        return
    root = os.path.join(tmp, "root")
    work = os.path.join(tmp, "overlay")
    os.makedirs(root)
    os.makedirs(work)
    r = run(["unshare", "--mount", "--propagation", "private", "sh", "-c", INSTALL_SCRIPT, "sh", root, deb, work])
    out = r.stdout + r.stderr
    print("     " + out.replace("\n", "\n     "))
    check(r.returncode == 0 and "== done" in out, "install, upgrade, remove, purge in a throwaway root")
    check(re.search(r"^nurllama:x:\d+:\d+:[^:]*:/var/lib/nurllama:/usr/sbin/nologin$", out, re.M) is not None,
          "install created the system user nurllama")
    check("nurllama:nurllama 750" in out, "install created /var/lib/nurllama for nurllama, mode 0750")
    check("\nenabled\n" in out, "install enabled nurllamad.service")
    check("socket-enabled" not in out, "the socket unit is left disabled")
    check("Failed to connect" not in out and "not been booted" not in out,
          "nothing tried to start a service in the chroot")
    check(re.search(r"^nurllamad \d", out, re.M) is not None and re.search(r"^nurllama \d", out, re.M) is not None,
          "nurllamad --version and nurllama --version run from the installed root")
    check("enabled-after-upgrade" in out, "upgrade keeps the service enabled")
    check("models-kept-after-remove" in out and "config-kept-after-remove" in out and "binary-gone" in out,
          "remove: binaries gone, config and models kept")
    check("models-kept-after-purge" in out and "config-gone-after-purge" in out, "purge: config gone, models kept")
    check("kept /var/lib/nurllama" in out, "purge says the models were kept")
    check("disabled-after-purge" in out, "purge removes the enablement")


def check_rpm(rpms, build_dirs, tmp, rpmlint_config):
    main = [r for r in rpms if re.match(r"nurllama-\d", os.path.basename(r))]
    check(len(main) == 1, f"nurllama .rpm built: {[os.path.basename(r) for r in rpms]}")
    if not main:
        return
    rpm = main[0]
    print(f"     size: {os.path.basename(rpm)} {os.path.getsize(rpm)} bytes")
    files = set(run(["rpm", "-qlp", rpm]).stdout.split())
    check(files == EXPECTED_RPM, "rpm -qlp lists exactly the expected files" +
          ("" if files == EXPECTED_RPM else f": extra {sorted(files - EXPECTED_RPM)}, missing {sorted(EXPECTED_RPM - files)}"))
    reqs = set(run(["rpm", "-qRp", rpm]).stdout.splitlines())
    print("     Requires: " + ", ".join(sorted(reqs)))
    x = os.path.join(tmp, "rpm-x")
    os.makedirs(x)
    subprocess.run(f"rpm2cpio {rpm} | cpio -idm --quiet", shell=True, cwd=x, check=False)
    for lib in sorted(needed_libs(x)):
        check(f"{lib}()(64bit)" in reqs, f"rpm requires {lib}()(64bit)")
    check(not any("cuda" in r for r in reqs), "the CPU rpm requires no CUDA library")
    scripts = run(["rpm", "-qp", "--scripts", rpm]).stdout
    check("systemctl" in scripts and "useradd" in scripts and "systemd-tmpfiles" in scripts,
          "rpm scriptlets create the user, the directories and handle the unit")
    leaked = run(["grep", "-rlF", *sum((["-e", d] for d in build_dirs), []), x]).stdout.split()
    check(not leaked, f"no build-machine path inside any rpm file {leaked}")
    cuda = [r for r in rpms if os.path.basename(r).startswith("nurllama-cuda-")]
    if cuda:
        print(f"     size: {os.path.basename(cuda[0])} {os.path.getsize(cuda[0])} bytes")
        cfiles = set(run(["rpm", "-qlp", cuda[0]]).stdout.split())
        check(cfiles == {"/usr/lib/nurllama", "/usr/lib/nurllama/libnurllama-cuda.so",
                         "/usr/lib/systemd/system/nurllamad.service.d",
                         "/usr/lib/systemd/system/nurllamad.service.d/cuda.conf"}, f"nurllama-cuda rpm files {sorted(cfiles)}")
        creqs = run(["rpm", "-qRp", cuda[0]]).stdout
        print("     nurllama-cuda Requires: " + ", ".join(sorted(creqs.splitlines())))
        check(re.search(r"^libcudart\.so\.\d+\(\)\(64bit\)$", creqs, re.M) is not None and "nurllama(x86-64) = " in creqs,
              "nurllama-cuda requires nurllama and the CUDA runtime")
    r = run(["rpmlint", "-c", rpmlint_config, *rpms])
    print("     rpmlint:\n" + "\n".join("       " + line for line in (r.stdout + r.stderr).splitlines()))
    m = re.search(r"(\d+) errors?, (\d+) warnings?", r.stdout)
    check(m is not None and m.group(1) == "0", "rpmlint: no errors")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--testdata", required=True)
    args = ap.parse_args()
    build = os.path.realpath(args.build)
    source = os.path.realpath(args.source)
    with tempfile.TemporaryDirectory(prefix="nurl-pkg-") as tmp:
        out = os.path.join(tmp, "out")
        # No -dbgsym package: it is large and slow to make, and nothing here checks it.
        env = {**os.environ, "DEB_BUILD_OPTIONS": "noautodbgsym"}
        r = subprocess.run([os.path.join(source, "packaging/build-packages.sh"), "--out", out, build], env=env)
        check(r.returncode == 0, "packaging/build-packages.sh builds the .deb and the .rpm")
        if r.returncode != 0:
            sys.exit(1)
        build_dirs = [build, source]
        deb = check_deb(sorted(glob.glob(os.path.join(out, "*.deb"))), build_dirs, tmp)
        if deb:
            install_test(deb, tmp)
            boot_test(deb, tmp, args.testdata)
        check_rpm(sorted(glob.glob(os.path.join(out, "*.rpm"))), build_dirs, tmp,
                  os.path.join(source, "packaging/rpm/rpmlint.toml"))
    finish()


if __name__ == "__main__":
    main()
