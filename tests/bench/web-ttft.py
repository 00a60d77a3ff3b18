"""Benchmark (not a test): time to first token of N web chat users who all press Enter at once.

Starts nurllamad with a temporary home, creates one conversation per user (each with its own
nl_client cookie), loads the model, then sends N POST /web/chat at the same moment and records,
per user, the seconds from sending to the first text line. Several rounds; prints the median
of each round's slowest (the Nth user's) first token, and every round's sorted figures.

usage: web-ttft.py --daemon build/daemon/nurllamad --model ../shared/testdata/models/qwen2-F16-embQ4_0.gguf
                   [--users 8] [--rounds 5] [--num-parallel 4] [--num-predict 16]
"""
import argparse
import json
import os
import socket
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from daemon_fixture import Daemon, curl  # noqa: E402


def open_chat(base, cookie, conversation, content, num_predict):
    host, port = base.replace("http://", "").split(":")
    body = json.dumps({"conversation": conversation, "content": content,
                       "options": {"num_predict": num_predict, "temperature": 0}}).encode()
    s = socket.create_connection((host, int(port)))
    s.sendall((f"POST /web/chat HTTP/1.1\r\nHost: {host}:{port}\r\nOrigin: {base}\r\n"
               f"Content-Type: application/json\r\nCookie: {cookie}\r\nContent-Length: {len(body)}\r\n"
               "Connection: close\r\n\r\n").encode() + body)
    return s


def first_token_after(s, t0):
    data = b""
    while b'"type":"text"' not in data:
        chunk = s.recv(65536)
        if not chunk:
            raise RuntimeError("stream ended before a token: " + data.decode(errors="replace")[-300:])
        data += chunk
    t = time.perf_counter() - t0
    while s.recv(65536):
        pass
    s.close()
    return t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--daemon", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--users", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--num-parallel", type=int, default=4)
    ap.add_argument("--num-predict", type=int, default=16)
    a = ap.parse_args()
    model = os.path.abspath(a.model)
    d = Daemon(a.daemon, extra_env={"NURLLAMA_NUM_PARALLEL": str(a.num_parallel), "NURLLAMA_LOG_LEVEL": "warn",
                                    "NURLLAMA_USER_MAX_GENERATIONS": "0"})
    try:
        users = []
        for i in range(a.users):
            st, head, body = curl(d.base + "/web/session")
            cookie = [l.split(":", 1)[1].strip().split(";")[0] for l in head.split("\r\n")
                      if l.lower().startswith("set-cookie:")][0]
            st, _, body = curl("-X", "POST", "-H", "Cookie: " + cookie, "-H", "Origin: " + d.base, "-H",
                               "Content-Type: application/json", d.base + "/web/conversations",
                               data=json.dumps({"model": model}))
            users.append((cookie, json.loads(body)["id"]))
        # Load the model first: the figure is about sharing a resident model, not loading it.
        curl("-H", "Content-Type: application/json", d.base + "/api/generate",
             data=json.dumps({"model": model, "prompt": "", "keep_alive": "10m"}))
        worst = []
        for r in range(a.rounds):
            socks = [None] * a.users
            times = [None] * a.users
            t0 = time.perf_counter()
            for i, (cookie, conv) in enumerate(users):
                socks[i] = open_chat(d.base, cookie, conv, f"Hello, I am user {i}, round {r}.", a.num_predict)
            threads = [threading.Thread(target=lambda i=i: times.__setitem__(i, first_token_after(socks[i], t0)))
                       for i in range(a.users)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            ordered = sorted(times)
            worst.append(ordered[-1])
            print(f"round {r + 1}: first tokens (s) " + " ".join(f"{x:.3f}" for x in ordered))
        print(f"users {a.users}, num_parallel {a.num_parallel}, num_predict {a.num_predict}: "
              f"median time to first token of the last user {statistics.median(worst):.3f} s "
              f"(rounds: {', '.join(f'{x:.3f}' for x in worst)})")
    finally:
        d.stop()
        d.cleanup()


if __name__ == "__main__":
    main()
