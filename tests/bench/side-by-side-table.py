#!/usr/bin/env python3
"""The table of side-by-side.sh: one JSON object per round (argv), medians per (file, load).

Each ratio is the median of the per-round ratios, printed with its goal (issue targets):
pp512 and pp512 at depth ours/llama.cpp, tg128 ours/llama.cpp, TTFT ours/llama.cpp's prompt
time for the same tokens (lower is better), 4 streams / 1 stream through the daemon, busy
tg128 / idle tg128 (ours) beside its ceiling on this machine (the same ratio for THREADS
independent one-thread runs: no synchronisation loss at all), peak RSS ours/llama.cpp (lower is
better).
"""
import json
import statistics
import sys
from collections import OrderedDict

med = statistics.median


def llama(rows, **want):
    """avg tokens/s and avg ns of the llama-bench test with these n_prompt/n_gen/n_depth."""
    for r in rows if isinstance(rows, list) else []:
        if all(r.get(k, 0) == v for k, v in want.items()):
            return r["avg_ts"], r["avg_ns"]
    return 0.0, 0.0


def parse(s, empty):
    try:
        return json.loads(s) if s.strip() else empty
    except json.JSONDecodeError:
        return empty


rounds = OrderedDict()
for arg in sys.argv[1:]:
    r = json.loads(arg)
    o, t = parse(r["ours"], {}), parse(r["theirs"], [])
    od, td = parse(r["ours_d"], {}), parse(r["theirs_d"], [])
    os_, tp = parse(r["ours_s"], {}), parse(r["theirs_p"], [])
    depth = od.get("depth", 0)
    n_tok = os_.get("prompt_tokens", 0)
    row = {
        "pp": (o.get("pp512", 0), llama(t, n_prompt=512, n_gen=0, n_depth=0)[0]),
        "tg": (o.get("tg", 0), llama(t, n_prompt=0, n_gen=o.get("n_gen", 128))[0]),
        "ppd": (od.get("pp512_depth", 0), llama(td, n_prompt=512, n_gen=0, n_depth=depth)[0]),
        "ttft": (os_.get("ttft_ms", 0), llama(tp, n_prompt=n_tok, n_gen=0)[1] / 1e6),
        "streams": (os_.get("four_tps", 0), os_.get("one_tps", 0)),
        "rss": (float(r["ours_rss"] or 0), float(r["theirs_rss"] or 0)),
        "load": f'{r["la0"]} → {r["la1"]}',
        "depth": depth,
        "n_tok": n_tok,
        "n_gen": o.get("n_gen", 128),
        "ceiling": float(r.get("ceiling") or 0),
    }
    rounds.setdefault((r["file"], r["load"]), []).append(row)


def cell(rows, k, fmt="{:.1f}"):
    a = med(x[k][0] for x in rows)
    b = med(x[k][1] for x in rows)
    rs = [x[k][0] / x[k][1] for x in rows if x[k][1]]
    return fmt.format(a), fmt.format(b), (f"{med(rs):.2f}" if rs else "–")


print("| file | load | rounds | pp512 ours / llama.cpp | ratio (≥1.3) | tg ours / llama.cpp | ratio (≥1.25) | "
      "pp512@d ours / llama.cpp | ratio (≥1.0) | TTFT ms ours / llama.cpp prompt | ratio (≤0.8) | "
      "4-stream / 1-stream tok/s | ratio (≥2.5) | busy tg / idle tg (≥0.75) | ceiling of that ratio | "
      "peak RSS MiB ours / llama.cpp | ratio (≤1.0) |")
print("|" + "---|" * 18)
idle_tg = {f: med(x["tg"][0] for x in rows) for (f, load), rows in rounds.items() if load == "idle"}
idle_ceiling = {f: med(x["ceiling"] for x in rows) for (f, load), rows in rounds.items() if load == "idle"}
for (f, load), rows in rounds.items():
    pp, tg, ppd, ttft, st, rss = (cell(rows, k) for k in ("pp", "tg", "ppd", "ttft", "streams", "rss"))
    busy = ceiling = "–"
    if load != "idle" and idle_tg.get(f):
        busy = f"{med(x['tg'][0] for x in rows) / idle_tg[f]:.2f}"
    if load != "idle" and idle_ceiling.get(f):
        ceiling = f"{med(x['ceiling'] for x in rows) / idle_ceiling[f]:.2f}"
    print(f"| {f} | {load} | {len(rows)} | {pp[0]} / {pp[1]} | {pp[2]} | {tg[0]} / {tg[1]} | {tg[2]} | "
          f"{ppd[0]} / {ppd[1]} | {ppd[2]} | {ttft[0]} / {ttft[1]} | {ttft[2]} | {st[0]} / {st[1]} | {st[2]} | "
          f"{busy} | {ceiling} | {rss[0]} / {rss[1]} | {rss[2]} |")
print()
for (f, load), rows in rounds.items():
    print(f"{f} {load}: load average per round (before → after): " + "; ".join(x["load"] for x in rows) +
          f"; depth {rows[0]['depth']}, TTFT prompt {rows[0]['n_tok']} tokens, tg of {rows[0]['n_gen']} tokens")
print("Figures are medians over rounds; each ratio is the median of the per-round ratios. "
      "RSS: peak of the pp512/tg128 run of each (nurl-bench, llama-bench). Ceiling of busy/idle: the same "
      "ratio for as many independent one-thread tg runs at once as the threads compared (summed tokens/s).")
