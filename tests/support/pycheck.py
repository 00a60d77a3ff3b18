"""What the Python tests share: check() prints an ok/FAIL line and remembers failures, run()
captures a command's output as text, finish() prints the failure count and exits with it."""
import subprocess
import sys

FAILS = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        FAILS.append(what)


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def finish():
    print(f"{len(FAILS)} failed")
    sys.exit(1 if FAILS else 0)
