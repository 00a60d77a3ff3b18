#!/usr/bin/env python3
"""Benchmark, not a test: generation speed of a chat while a quantisation job runs beside it.

Starts a real nurllamad (loopback, temporary home), then for several rounds measures the
tokens/s of one greedy generation (the daemon's own eval_count / eval_duration) alone, and again
while a quantize job (SCHED_BATCH, nice 10, job_threads threads) converts --quantize-input to
--type. Prints per-round figures and medians. On a shared machine the figures are noisy: run it
when the machine is otherwise idle and report the spread.

usage: job-contention.py --daemon build/daemon/nurllamad --chat-model M.gguf
                         --quantize-input IN.gguf [--type Q4_K_M] [--rounds 5] [--tokens 64]
                         [--job-threads N]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from daemon_fixture import Daemon, curl, post_json  # noqa: E402


def generate(d, model, tokens):
    req = {"model": model, "prompt": "Once upon a time", "stream": False,
           "options": {"temperature": 0, "num_predict": tokens, "seed": 1}}
    status, _, body = post_json(d.base, "/api/generate", req, timeout=600)
    if status != 200:
        raise RuntimeError("generate: %d %s" % (status, body))
    j = json.loads(body)
    return j["eval_count"] / (j["eval_duration"] / 1e9)


def control(d, method, path, obj=None):
    args = ["--unix-socket", d.socket, "-X", method, "http://localhost" + path]
    if obj is not None:
        args = ["-H", "Content-Type: application/json"] + args
    return curl(*args, data=None if obj is None else json.dumps(obj), timeout=30)


def start_quantize(d, src, out, qtype):
    # stream:false would wait for the end: read the id from the first streamed line instead.
    p = subprocess.Popen(["curl", "-sS", "-N", "--unix-socket", d.socket, "-H", "Content-Type: application/json",
                          "--data-binary", json.dumps({"kind": "quantize", "source": src, "output": out,
                                                       "type": qtype}),
                          "http://localhost/api/jobs"], stdout=subprocess.PIPE)
    line = json.loads(p.stdout.readline())
    return p, line["job"]


def job_state(d, job):
    status, _, body = control(d, "GET", "/api/jobs/" + job)
    return json.loads(body).get("state") if status == 200 else "gone"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--daemon", required=True)
    ap.add_argument("--chat-model", required=True)
    ap.add_argument("--quantize-input", required=True)
    ap.add_argument("--type", default="Q4_K_M")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--job-threads", type=int, default=0)
    a = ap.parse_args()
    env = {"NURLLAMA_JOB_THREADS": str(a.job_threads)} if a.job_threads else {}
    d = Daemon(a.daemon, extra_env=env)
    chat = os.path.abspath(a.chat_model)
    alone, beside = [], []
    try:
        generate(d, chat, 8)  # load the model
        for r in range(a.rounds):
            alone.append(generate(d, chat, a.tokens))
            out = os.path.join(d.home, "q-%d.gguf" % r)
            p, job = start_quantize(d, os.path.abspath(a.quantize_input), out, a.type)
            deadline = time.time() + 60
            while job_state(d, job) != "running" and time.time() < deadline:
                time.sleep(0.05)
            t = generate(d, chat, a.tokens)
            still = job_state(d, job)
            control(d, "DELETE", "/api/jobs/" + job)
            p.wait(timeout=60)
            if still != "running":
                print("round %d: the job ended (%s) before the chat did; use a larger --quantize-input" % (r, still))
                continue
            beside.append(t)
            print("round %d: alone %.1f tok/s, beside a %s quantisation %.1f tok/s" % (r, alone[-1], a.type, t))
    finally:
        d.stop()
        d.cleanup()
    if alone and beside:
        ma, mb = statistics.median(alone), statistics.median(beside)
        print("median: alone %.1f tok/s (%.1f-%.1f), beside a job %.1f tok/s (%.1f-%.1f): %.0f%%" %
              (ma, min(alone), max(alone), mb, min(beside), max(beside), 100 * mb / ma))
    return 0


if __name__ == "__main__":
    sys.exit(main())
