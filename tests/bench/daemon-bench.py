#!/usr/bin/env python3
"""Daemon-level speed of one model (a benchmark, not a test; side-by-side.sh runs it).

Starts nurllamad on a private port and state directory with the model file, then measures:
  ttft_ms      time from sending a ~300-token /api/chat request to its first streamed line
               (median over --rounds; every prompt is new, so no cached prefix is reused)
  prompt_tokens the prompt's token count as the daemon reports it (prompt_eval_count)
  one_tps      one /api/generate stream alone: generated tokens / wall seconds
  four_tps     --streams concurrent streams: all generated tokens / wall seconds
Prints one JSON object on the last line. Stops the daemon it started, whatever happens.
"""
import argparse
import http.client
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

WORDS = ("river stone window garden paper light morning silver quiet number travel yellow story "
         "mountain little answer market winter orange friend station summer bright simple forest "
         "question letter island music table open green early circle family voice ocean").split()


def request(port, path, body, stream=False, timeout=600):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    c.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    r = c.getresponse()
    if r.status != 200:
        raise RuntimeError(f"{path}: HTTP {r.status}: {r.read()[:300]!r}")
    if stream:
        return c, r
    data = json.loads(r.read())
    c.close()
    return data


def text_of(n_words, rng):
    return f"[{rng.randrange(1 << 30)}] " + " ".join(rng.choice(WORDS) for _ in range(n_words))


def chat_ttft(port, model, content):
    body = {"model": model, "messages": [{"role": "user", "content": content}], "stream": True,
            "options": {"num_predict": 1, "temperature": 0}}
    t0 = time.perf_counter()
    c, r = request(port, "/api/chat", body, stream=True)
    first = None
    last = {}
    for line in r:
        if first is None:
            first = time.perf_counter() - t0
        if line.strip():
            last = json.loads(line)
    c.close()
    return first, last.get("prompt_eval_count", 0)


def generate(port, model, prompt, n_predict, out, i):
    body = {"model": model, "prompt": prompt, "stream": False, "raw": True,
            "options": {"num_predict": n_predict, "temperature": 0}}
    out[i] = request(port, "/api/generate", body).get("eval_count", 0)


def streams(port, model, n, n_predict, rng):
    out = [0] * n
    threads = [threading.Thread(target=generate, args=(port, model, text_of(20, rng), n_predict, out, i))
               for i in range(n)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(out) / (time.perf_counter() - t0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nurllamad", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--port", type=int, default=11534)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--streams", type=int, default=4)
    ap.add_argument("--n-predict", type=int, default=64)
    ap.add_argument("--prompt-tokens", type=int, default=300)
    a = ap.parse_args()
    model = os.path.abspath(a.model)
    rng = random.Random(7)
    with tempfile.TemporaryDirectory(prefix="nurl-daemon-bench-") as home:
        env = dict(os.environ, NURLLAMA_HOME=home, NURLLAMA_MODELS=os.path.join(home, "models"),
                   NURLLAMA_SOCKET=os.path.join(home, "sock"), NURLLAMA_HOST=f"127.0.0.1:{a.port}",
                   NURLLAMA_ALLOW_MODEL_PATHS="1", NURLLAMA_NUM_PARALLEL=str(a.streams),
                   NURLLAMA_KEEP_ALIVE="1h", NURLLAMA_CONTEXT_LENGTH="2048", NURLLAMA_CONFIG="/dev/null")
        log = open(os.path.join(home, "log"), "w")
        d = subprocess.Popen([a.nurllamad], env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            for _ in range(200):
                try:
                    c = http.client.HTTPConnection("127.0.0.1", a.port, timeout=2)
                    c.request("GET", "/")
                    if c.getresponse().status == 200:
                        break
                except OSError:
                    time.sleep(0.1)
            else:
                raise RuntimeError("nurllamad did not start")
            # Load the model, then size the chat message so the rendered prompt is ~prompt_tokens.
            n_words = a.prompt_tokens
            for _ in range(3):
                _, n_tok = chat_ttft(a.port, model, text_of(n_words, rng))
                if n_tok == 0 or abs(n_tok - a.prompt_tokens) <= 3:
                    break
                n_words = max(1, round(n_words * a.prompt_tokens / n_tok))
            ttfts, toks = [], []
            for _ in range(a.rounds):
                t, n_tok = chat_ttft(a.port, model, text_of(n_words, rng))
                ttfts.append(t)
                toks.append(n_tok)
            streams(a.port, model, 1, 8, rng)  # warm the decode path
            one = statistics.median(streams(a.port, model, 1, a.n_predict, rng) for _ in range(2))
            many = statistics.median(streams(a.port, model, a.streams, a.n_predict, rng) for _ in range(2))
        finally:
            d.send_signal(signal.SIGTERM)
            try:
                d.wait(timeout=20)
            except subprocess.TimeoutExpired:
                d.kill()
    print(json.dumps({"ttft_ms": statistics.median(ttfts) * 1000, "prompt_tokens": int(statistics.median(toks)),
                      "one_tps": one, "four_tps": many, "streams": a.streams}))


if __name__ == "__main__":
    sys.exit(main())
