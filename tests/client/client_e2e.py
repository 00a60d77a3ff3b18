"""End-to-end: the `nurllama` client against a real nurllamad on loopback, checked against
llama.cpp's goldens (shared/testdata/golden): `tokenize` prints the recorded prompt ids, `logits`
the recorded final-position logits (within the README's tolerance), `run` on a non-TTY stdout
prints exactly the recorded greedy text (up to the first near-tie or end-of-generation token),
`detok` the recorded pieces, `ps`/`stop` the residency, and a missing daemon gives a clear error."""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from daemon_fixture import Daemon  # noqa: E402

TOL = 0.1  # F32 model: the README's tolerance for unquantised files
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def client(args, env, timeout=120, input_bytes=b"", cwd=None):
    p = subprocess.run(args, env=env, capture_output=True, timeout=timeout, input=input_bytes, cwd=cwd)
    return p.returncode, p.stdout, p.stderr.decode(errors="replace")


def greedy_prefix(result, hidden_ids=()):
    """The recorded greedy text up to (not including) the first step that is a near-tie or an
    end-of-generation token: both engines must agree on that much. Control tokens (hidden_ids)
    are not printed by `run`, as ollama hides them too."""
    out = b""
    for step in result["greedy_steps"]:
        if step.get("eog") or step["margin"] < TOL:
            break
        if step["id"] in hidden_ids:
            continue
        piece = bytes(step["piece_bytes"]) if "piece_bytes" in step else step["piece"].encode()
        out += piece
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--daemon", required=True)
    ap.add_argument("--client", required=True)
    ap.add_argument("--testdata", required=True)
    a = ap.parse_args()
    a.client = os.path.abspath(a.client)  # one check runs in another directory
    golden_path = os.path.join(a.testdata, "golden", "stories260K.json")
    if not os.path.exists(golden_path):
        print("FAIL golden test data not found at " + a.testdata)
        return 1
    golden = json.load(open(golden_path))
    model = os.path.join(a.testdata, "models", "stories260K.gguf")
    qwen_golden = json.load(open(os.path.join(a.testdata, "golden", "qwen2-F16-embQ4_0.json")))
    qwen = os.path.join(a.testdata, "models", "qwen2-F16-embQ4_0.gguf")

    # No daemon: a clear message and a non-zero exit.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NURLLAMA_", "OLLAMA_"))}
    env["NURLLAMA_SOCKET"] = "/nonexistent/nurllamad.sock"
    rc, _, err = client([a.client, "list"], env)
    check(rc != 0 and "nurllama serve" in err and "systemctl start nurllamad" in err,
          "no daemon: exit %d, message says how to start one" % rc)

    d = Daemon(a.daemon)
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("NURLLAMA_", "OLLAMA_"))}
        env["NURLLAMA_SOCKET"] = d.socket  # the Unix socket, the client's default transport
        env["XDG_RUNTIME_DIR"] = os.path.join(d.home, "xdg")

        rc, out, err = client([a.client, "version"], env)
        check(rc == 0 and b"daemon version is" in out, "version reaches the daemon over the socket")

        for m, g in ((model, golden), (qwen, qwen_golden)):
            for r in g["results"]:
                rc, out, err = client([a.client, "tokenize", m, r["text"]], env)
                ok = rc == 0 and json.loads(out) == r["prompt_tokens"]
                check(ok, "tokenize %s/%s equals llama.cpp's prompt ids" % (os.path.basename(m), r["id"]))

        rc, out, err = client([a.client, "vocab", model], env)
        vocab = [line.split("\t") for line in out.decode().splitlines()]
        control = {int(v[0]) for v in vocab if len(v) >= 2 and v[1] == "control"}
        check(rc == 0 and len(vocab) == 512 and control == {1, 2}, "vocab lists 512 pieces, <s> and </s> as control")

        for r in golden["results"]:
            if r["id"] == "chat":
                continue  # stories260K has no template; its chat prompt is ChatML text
            rc, out, err = client([a.client, "logits", model, r["text"]], env)
            logits = [float(x) for x in out.split()]
            full = r["final_logits"]["full"]
            diff = max(abs(x - y) for x, y in zip(logits, full)) if len(logits) == len(full) else float("inf")
            check(rc == 0 and diff <= TOL, "logits %s: max |dlogit| %.4f <= %.2f" % (r["id"], diff, TOL))

            want = greedy_prefix(r, control)
            rc, out, err = client([a.client, "run", model, r["text"], "-n", "32", "--temp", "0",
                                   "--repeat-penalty", "1"], env)
            check(rc == 0 and out.startswith(want) and len(want) > 0,
                  "run %s prints llama.cpp's greedy text (%d bytes agreed)" % (r["id"], len(want)))

            ids = [s["id"] for s in r["greedy_steps"][:8]]
            rc, out, err = client([a.client, "detok", model] + [str(i) for i in ids], env)
            want_bytes = b"".join(bytes(s["piece_bytes"]) if "piece_bytes" in s else s["piece"].encode()
                                  for s in r["greedy_steps"][:8])
            check(rc == 0 and out == want_bytes, "detok %s gives the recorded pieces" % r["id"])

        # stdin is prepended to the prompt when piped.
        r = golden["results"][0]
        rc, out, err = client([a.client, "run", model, "-n", "32", "--temp", "0", "--repeat-penalty", "1"], env,
                              input_bytes=r["text"].encode())
        check(rc == 0 and out.startswith(greedy_prefix(r, control)), "run with the prompt on stdin")

        rc, out, err = client([a.client, "ps"], env)
        check(rc == 0 and b"stories260K.gguf" in out and b"100% CPU" in out, "ps lists the resident model")
        rc, out, err = client([a.client, "stop", model], env)
        rc2, out2, _ = client([a.client, "ps"], env)
        check(rc == 0 and rc2 == 0 and b"stories260K.gguf" not in out2, "stop unloads the model")

        rc, out, err = client([a.client, "show", model], env)
        check(rc == 0 and b"architecture        llama" in out and b"embedding length    64" in out,
              "show prints the model's metadata")

        # The store through the client: create from a Modelfile, list, cp, show, verify, run, rm, pull.
        modelfile = os.path.join(d.home, "Modelfile")
        with open(modelfile, "w") as f:
            f.write('FROM %s\nPARAMETER temperature 0\nPARAMETER repeat_penalty 1\n' % model)
        rc, out, err = client([a.client, "create", "stories", "-f", modelfile], env)
        check(rc == 0 and "success" in err, "create from a Modelfile (%s)" % err.strip().splitlines()[-1:])
        digest = golden["model"]["sha256"][:12]
        rc, out, err = client([a.client, "list"], env)
        check(rc == 0 and b"stories:latest" in out and digest.encode() in out, "list shows the model with its digest")
        rc, out, err = client([a.client, "cp", "stories", "team/stories:v1"], env)
        rc2, out2, _ = client([a.client, "list"], env)
        check(rc == 0 and b"team/stories:v1" in out2, "cp adds a second name")
        rc, out, err = client([a.client, "show", "stories", "--parameters"], env)
        check(rc == 0 and b"temperature 0" in out and b"repeat_penalty 1" in out, "show --parameters gives the Modelfile's")
        rc, out, err = client([a.client, "verify", "stories"], env)
        check(rc == 0 and b"stories: ok" in out and golden["model"]["sha256"].encode() in out,
              "verify re-hashes the blob to its sha256")
        r = golden["results"][0]
        rc, out, err = client([a.client, "run", "stories", r["text"], "-n", "32"], env)
        check(rc == 0 and out.startswith(greedy_prefix(r, control)),
              "run a store model: its PARAMETERs (temperature 0, no penalty) give the greedy text")
        rc, out, err = client([a.client, "rm", "stories"], env)
        rc2, out2, _ = client([a.client, "list"], env)
        rc3, out3, _ = client([a.client, "verify", "team/stories:v1"], env)
        check(rc == 0 and b"stories:latest" not in out2 and b"team/stories:v1" in out2 and rc3 == 0,
              "rm keeps the blob another name still uses")
        rc, out, err = client([a.client, "pull", model, "--name", "local/st"], env)
        rc2, out2, _ = client([a.client, "list"], env)
        check(rc == 0 and "success" in err and b"local/st:latest" in out2, "pull of a local .gguf")

        # Names are case-insensitive, as in ollama: the pull stores the file's stem in lower case
        # (stories260k:latest) and every command finds it by any spelling.
        rc, out, err = client([a.client, "pull", "./stories260K.gguf"], env, cwd=os.path.dirname(model))
        rc2, out2, _ = client([a.client, "list"], env)
        check(rc == 0 and b"stories260k:latest" in out2, "pull ./stories260K.gguf stores stories260k:latest")
        r = golden["results"][0]
        rc, out, err = client([a.client, "run", "stories260K", r["text"], "-n", "32", "--temp", "0",
                               "--repeat-penalty", "1"], env)
        check(rc == 0 and out.startswith(greedy_prefix(r, control)), "run stories260K finds stories260k:latest")
        rc, out, err = client([a.client, "show", "STORIES260K"], env)
        check(rc == 0 and b"architecture        llama" in out, "show STORIES260K finds it too")
        # (stories:latest, created above from the same file, may be the resident name: one blob.)
        rc, out, err = client([a.client, "ps"], env)
        check(rc == 0 and digest.encode() in out, "ps shows the resident model's ID (its digest, as list does)")
        rc, out, err = client([a.client, "rm", "Stories260k"], env)
        rc2, out2, _ = client([a.client, "list"], env)
        check(rc == 0 and b"stories260k:latest" not in out2, "rm Stories260k removes stories260k:latest")

        rc, out, err = client([a.client, "run", "no-such-model", "hi"], env)
        check(rc != 0 and "not found" in err, "unknown model: exit %d, %s" % (rc, err.strip()))
    finally:
        if failures:
            print(d.read_log()[-3000:])
        code = d.stop()
        check(code == 0, "daemon exits 0 on SIGTERM")
        d.cleanup()
    print("client e2e: %d checks failed" % len(failures) if failures else "client e2e: all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
