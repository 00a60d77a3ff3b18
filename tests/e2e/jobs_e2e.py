"""End-to-end tests of the job queue and the fixed pulls and creates, against a real nurllamad
and the real `nurllama` client:

- blob uploads stream to disk: a body of hundreds of MB (a sparse file made at test time) is
  stored under its sha256 (Python's hashlib is the oracle) while the daemon's peak RSS (VmHWM)
  stays far below the body; a digest mismatch is a 400 and leaves nothing; a full disk (a small
  tmpfs as the store, when this process may mount one) is a 507 and leaves nothing;
- `nurllama create NAME -f Modelfile` FROM a local .gguf: over the Unix socket the daemon is
  handed the path (no upload in its log), over TCP the file is uploaded; both give the model
  whose digest is the golden sha256;
- a re-pull of an unchanged URL costs one conditional request and no body bytes (a loopback
  HTTP server written here counts them), a changed one is downloaded again;
- `nurllama jobs` lists the jobs, `--follow` replays a finished job, `--cancel` of an unknown id
  fails clearly;
- conversions and quantisations as jobs (EngineJobsE2E): kill -9 of the daemon in the middle of
  each, and after the restart the job finishes from the tensor it had reached with a result
  byte-identical to an uninterrupted run; cancel leaves nothing (no .partial, no blob, no
  manifest); two requests for one source attach to one job; a chat keeps streaming while a job
  runs; `nurllama quantize` of the F32 master gives llama-quantize's own Q4_K_M file (its golden
  sha256); `nurllama convert` over TCP (an upload) and over the socket (a path) agree.

usage: jobs_e2e.py --daemon PATH/nurllamad --client PATH/nurllama --testdata DIR
"""
import argparse
import hashlib
import http.server
import json
import os
import subprocess
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_fixture import Daemon, curl  # noqa: E402

ARGS = None


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return "sha256:" + h.hexdigest()


def vm_hwm_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def blob_files(home):
    d = os.path.join(home, ".nurllama", "models", "blobs")
    return sorted(os.listdir(d)) if os.path.isdir(d) else []


def stop_daemon(d):
    """Stops the daemon and removes its home; its exit status must be 0 (the log tail if not)."""
    code = d.stop()
    if code != 0:
        print(d.read_log()[-4000:])
    d.cleanup()
    assert code == 0, "nurllamad exited with %s" % code


class ModelServer:
    """Serves one file with an ETag, answers If-None-Match with 304, counts body bytes sent."""

    def __init__(self, path):
        self.path, self.etag, self.body_bytes, self.not_modified = path, '"v1"', 0, 0
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_GET(self):
                if self.headers.get("If-None-Match") == outer.etag:
                    outer.not_modified += 1
                    self.send_response(304)
                    self.send_header("ETag", outer.etag)
                    self.end_headers()
                    return
                with open(outer.path, "rb") as f:
                    data = f.read()
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.send_header("ETag", outer.etag)
                self.end_headers()
                self.wfile.write(data)
                outer.body_bytes += len(data)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d/model.gguf" % self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


class JobsE2E(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.d = Daemon(ARGS.daemon, extra_env={"NURLLAMA_MAX_BODY": "1MiB"})
        cls.model = os.path.join(ARGS.testdata, "models", "stories260K.gguf")
        with open(os.path.join(ARGS.testdata, "golden", "stories260K.json")) as f:
            golden = json.load(f)
        cls.golden = "sha256:" + golden["model"]["sha256"]
        cls.env = {k: v for k, v in os.environ.items() if not k.startswith(("NURLLAMA_", "OLLAMA_"))}
        cls.env["NURLLAMA_SOCKET"] = cls.d.socket
        cls.tcp_env = dict(cls.env, NURLLAMA_HOST="127.0.0.1:%d" % cls.d.port)

    @classmethod
    def tearDownClass(cls):
        stop_daemon(cls.d)

    def client(self, *args, env=None, timeout=120):
        p = subprocess.run([ARGS.client, *args], env=env or self.env, capture_output=True, timeout=timeout)
        return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")

    def test_large_upload_streams_with_bounded_memory(self):
        size = 400 << 20
        path = os.path.join(self.d.home, "big.bin")
        with open(path, "wb") as f:  # sparse, with marks so a misplaced chunk changes the digest
            f.truncate(size)
            for off in range(0, size, 7 << 20):
                f.seek(off)
                f.write(b"mark%d" % off)
        digest = sha256_file(path)
        before = set(blob_files(self.d.home))
        status, head, body = curl("-X", "POST", "-T", path, self.d.base + "/api/blobs/" + digest, timeout=300)
        self.assertEqual(status, 201, body)
        blob = os.path.join(self.d.home, ".nurllama", "models", "blobs", "sha256-" + digest[7:])
        self.assertEqual(sha256_file(blob), digest)
        self.assertEqual(set(blob_files(self.d.home)) - before, {"sha256-" + digest[7:]})
        hwm = vm_hwm_kib(self.d.proc.pid)
        self.assertLess(hwm, 96 << 10, "daemon peak RSS %d KiB for a %d MiB upload" % (hwm, size >> 20))
        os.unlink(path)
        os.unlink(blob)

    def test_digest_mismatch_is_400_and_keeps_nothing(self):
        path = os.path.join(self.d.home, "small.bin")
        with open(path, "wb") as f:
            f.write(os.urandom(3 << 20))
        before = blob_files(self.d.home)
        status, _, body = curl("-X", "POST", "-T", path, self.d.base + "/api/blobs/sha256:" + "0" * 64)
        self.assertEqual(status, 400, body)
        self.assertIn("digest mismatch", body)
        self.assertIn(sha256_file(path), body)
        self.assertEqual(blob_files(self.d.home), before)

    def test_full_disk_is_507_and_keeps_nothing(self):
        if os.geteuid() != 0:
            self.skipTest("mounting a small tmpfs needs root")
        mnt = os.path.join(self.d.home, "small-disk")
        os.makedirs(mnt)
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", mnt], capture_output=True).returncode:
            self.skipTest("cannot mount a tmpfs here")
        try:
            d2 = Daemon(ARGS.daemon, extra_env={"NURLLAMA_MODELS": mnt})
            try:
                path = os.path.join(self.d.home, "nine.bin")
                with open(path, "wb") as f:
                    f.write(os.urandom(9 << 20))
                status, _, body = curl("-X", "POST", "-T", path, d2.base + "/api/blobs/" + sha256_file(path))
                self.assertEqual(status, 507, body)
                # Chunked (no size announced): the disk fills up mid-way.
                status, _, body = curl("-X", "POST", "-T", path, "-H", "Transfer-Encoding: chunked",
                                       d2.base + "/api/blobs/" + sha256_file(path))
                self.assertEqual(status, 507, body)
                self.assertIn("disk full", body)
                self.assertEqual(os.listdir(os.path.join(mnt, "blobs")), [])
            finally:
                d2.stop()
                d2.cleanup()
        finally:
            subprocess.run(["umount", "-l", mnt])

    def test_create_from_a_local_gguf_over_the_socket_hands_over_the_path(self):
        mf = os.path.join(self.d.home, "Modelfile.local")
        with open(mf, "w") as f:
            f.write("FROM %s\nSYSTEM Be brief.\n" % self.model)
        uploads = self.d.read_log().count("POST /api/blobs")
        rc, out, err = self.client("create", "viasocket", "-f", mf)
        self.assertEqual(rc, 0, err)
        self.assertNotIn("uploading", err)
        self.assertEqual(self.d.read_log().count("POST /api/blobs"), uploads, "no upload over the socket")
        rc, out, err = self.client("verify", "viasocket")
        self.assertEqual(rc, 0, err)
        self.assertIn(self.golden[7:], out)

    def test_create_over_tcp_uploads(self):
        # A model no other test here stores, so the daemon lacks its blob and the client must upload
        # it (the client uploads only the blobs a HEAD finds missing).
        model = os.path.join(ARGS.testdata, "models", "llama-tok512-Q8_0.gguf")
        with open(os.path.join(ARGS.testdata, "golden", "llama-tok512-Q8_0.json")) as f:
            want = json.load(f)["model"]["sha256"]
        mf = os.path.join(self.d.home, "Modelfile.tcp")
        with open(mf, "w") as f:
            f.write("FROM %s\n" % model)
        rc, out, err = self.client("rm", "viatcp")  # absent is fine
        uploads = self.d.read_log().count("POST /api/blobs")
        rc, out, err = self.client("create", "viatcp", "-f", mf, env=self.tcp_env)
        self.assertEqual(rc, 0, err)
        self.assertGreater(self.d.read_log().count("POST /api/blobs"), uploads, "uploaded over TCP")
        rc, out, err = self.client("verify", "viatcp")
        self.assertEqual(rc, 0, err)
        self.assertIn(want, out)

    def test_repull_of_an_unchanged_url_transfers_no_body(self):
        server = ModelServer(self.model)
        try:
            rc, out, err = self.client("pull", server.url, "--name", "repull:v1")
            self.assertEqual(rc, 0, err)
            size = os.path.getsize(self.model)
            self.assertEqual(server.body_bytes, size)
            rc, out, err = self.client("pull", server.url, "--name", "repull:v1")
            self.assertEqual(rc, 0, err)
            self.assertIn("up to date", err)
            self.assertEqual(server.body_bytes, size, "the re-pull transferred body bytes")
            self.assertEqual(server.not_modified, 1)
            server.etag = '"v2"'  # the source changed
            rc, out, err = self.client("pull", server.url, "--name", "repull:v1")
            self.assertEqual(rc, 0, err)
            self.assertNotIn("up to date", err)
            self.assertEqual(server.body_bytes, 2 * size)
        finally:
            server.close()

    def test_jobs_list_follow_cancel(self):
        rc, out, err = self.client("pull", self.model, "--name", "listed:v1")
        self.assertEqual(rc, 0, err)
        rc, out, err = self.client("jobs")
        self.assertEqual(rc, 0, err)
        rows = [l.split() for l in out.splitlines()]
        self.assertEqual(rows[0][:4], ["ID", "KIND", "STATE", "PROGRESS"])
        mine = [r for r in rows if "listed:latest" in " ".join(r) or "listed:v1" in " ".join(r)]
        self.assertTrue(mine and mine[-1][1] == "pull" and mine[-1][2] == "succeeded", out)
        rc, out, err = self.client("jobs", "--follow", mine[-1][0])
        self.assertEqual(rc, 0, err)
        self.assertIn("success", err)
        rc, out, err = self.client("jobs", "--cancel", "pull-nosuchjob")
        self.assertNotEqual(rc, 0)
        self.assertIn("no job pull-nosuchjob", err)
        # The job API is the control socket's: not over TCP.
        status, _, body = curl(self.d.base + "/api/jobs")
        self.assertEqual(status, 403, body)


def control(d, method, path, obj=None, timeout=60):
    """A control-socket request; returns (status, parsed JSON or text)."""
    args = ["--unix-socket", d.socket, "-X", method, "http://localhost" + path]
    if obj is not None:
        args = ["-H", "Content-Type: application/json"] + args
    status, _, body = curl(*args, data=None if obj is None else json.dumps(obj), timeout=timeout)
    try:
        return status, json.loads(body)
    except ValueError:
        return status, body


def start_job(d, obj):
    """POST /api/jobs streaming; returns (the curl process, the job id from its first line)."""
    p = subprocess.Popen(["curl", "-sS", "-N", "--unix-socket", d.socket, "-H", "Content-Type: application/json",
                          "--data-binary", json.dumps(obj), "http://localhost/api/jobs"], stdout=subprocess.PIPE)
    first = json.loads(p.stdout.readline())
    return p, first["job"]


def wait_state(d, job, states, timeout=120):
    deadline = time.time() + timeout
    while time.time() < deadline:
        status, j = control(d, "GET", "/api/jobs/" + job)
        if status == 200 and j.get("state") in states:
            return j
        time.sleep(0.02)
    raise AssertionError("job %s not in %s after %d s" % (job, states, timeout))


def saved_tensors(home, job):
    """tensors_done of the resume point the job saved last (what survives a SIGKILL)."""
    try:
        with open(os.path.join(home, ".nurllama", "jobs", job + ".json")) as f:
            j = json.load(f)
    except (OSError, ValueError):
        return 0, ""
    return j.get("saved", {}).get("resume", {}).get("tensors_done", 0), j.get("state", "")


class EngineJobsE2E(unittest.TestCase):
    """Real conversions and quantisations (common/engine) on the daemon's queue. One job thread, so
    the jobs last long enough on the small test models to be caught in the middle."""

    @classmethod
    def setUpClass(cls):
        cls.env_extra = {"NURLLAMA_JOB_THREADS": "1"}
        cls.d = Daemon(ARGS.daemon, extra_env=cls.env_extra)
        cls.models = os.path.join(ARGS.testdata, "models")
        cls.big = os.path.join(cls.models, "gemma3-F16-embQ4_0.gguf")
        cls.ckpt = os.path.join(cls.d.home, "checkpoint")
        exporter = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "engine", "convert", "hf-export.py")
        subprocess.run(["/usr/bin/python3", exporter, cls.big, cls.ckpt, "--dtype", "bf16", "--shards", "2"],
                       check=True, capture_output=True)
        cls.env = {k: v for k, v in os.environ.items() if not k.startswith(("NURLLAMA_", "OLLAMA_"))}

    @classmethod
    def tearDownClass(cls):
        stop_daemon(cls.d)

    def client(self, *args, tcp=False, timeout=300):
        env = dict(self.env, NURLLAMA_SOCKET=self.d.socket)
        if tcp:
            env["NURLLAMA_HOST"] = "127.0.0.1:%d" % self.d.port
        p = subprocess.run([ARGS.client, *args], env=env, capture_output=True, timeout=timeout)
        return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")

    def run_job(self, obj):
        p, job = start_job(self.d, obj)
        out = p.communicate(timeout=300)[0].decode()
        self.assertIn('"status":"success"', out, out[-500:])
        return job

    def blob_of(self, name):
        status, j = control(self.d, "POST", "/api/show", {"model": name})
        self.assertEqual(status, 200, j)
        with open(os.path.join(self.d.home, ".nurllama", "models", "manifests", "registry.ollama.ai", "library",
                               name.split(":")[0], name.split(":")[1])) as f:
            m = json.load(f)
        return os.path.join(self.d.home, ".nurllama", "models", "blobs", "sha256-" + m["digest"][7:])

    def job_outputs(self):
        blobs = os.path.join(self.d.home, ".nurllama", "models", "blobs")
        return [f for f in os.listdir(blobs) if f.startswith("job-") or f.startswith(".tmp-")]

    def kill_mid_job_and_resume(self, request, reference):
        """Starts `request` (a job into a model), SIGKILLs the daemon once the job has saved a resume
        point past a few tensors, restarts it on the same home, and checks the job finishes from
        there with the bytes of `reference` (an uninterrupted run's output)."""
        p, job = start_job(self.d, request)
        reached, state = 0, ""
        deadline = time.time() + 120
        while time.time() < deadline:
            reached, state = saved_tensors(self.d.home, job)
            if reached >= 3 or state not in ("queued", "running"):
                break
            time.sleep(0.002)
        self.d.proc.kill()
        self.d.proc.wait()
        p.kill()
        p.wait()
        p.stdout.close()
        self.assertTrue(reached >= 3 and state == "running",
                        "the job was not caught in the middle (state %s after %d tensors)" % (state, reached))
        name = request["name"].split(":")
        self.assertFalse(os.path.exists(os.path.join(self.d.home, ".nurllama", "models", "manifests",
                                                     "registry.ollama.ai", "library", name[0], name[1])),
                         "a half-written model is visible")
        self.d.log.close()
        type(self).d = Daemon(ARGS.daemon, extra_env=self.env_extra, home=self.d.home)
        j = wait_state(self.d, job, ("succeeded", "failed", "cancelled"), timeout=300)
        self.assertEqual(j["state"], "succeeded", j)
        resumed = [l for l in self.d.read_log().splitlines() if job in l and "resuming after tensor" in l]
        self.assertTrue(resumed, "the restarted job did not resume from its resume point")
        at = int(resumed[-1].rsplit(" ", 1)[1])
        self.assertGreaterEqual(at, reached)
        self.assertEqual(sha256_file(self.blob_of(request["name"])), sha256_file(reference),
                         "the resumed output differs from an uninterrupted run")
        self.assertEqual(self.job_outputs(), [])

    def test_kill9_during_a_quantisation(self):
        ref = os.path.join(self.d.home, "ref-q4km.gguf")
        self.run_job({"kind": "quantize", "source": self.big, "type": "Q4_K_M", "output": ref})
        self.kill_mid_job_and_resume({"kind": "quantize", "source": self.big, "type": "Q4_K_M", "name": "killq:v1"},
                                     ref)

    def test_kill9_during_a_conversion(self):
        ref = os.path.join(self.d.home, "ref-conv.gguf")
        self.run_job({"kind": "convert", "source": self.ckpt, "type": "q8_0", "output": ref})
        self.kill_mid_job_and_resume({"kind": "convert", "source": self.ckpt, "type": "q8_0", "name": "killc:v1"},
                                     ref)

    def test_cancel_leaves_nothing(self):
        before = sorted(os.listdir(os.path.join(self.d.home, ".nurllama", "models", "blobs")))
        p, job = start_job(self.d, {"kind": "quantize", "source": self.big, "type": "Q2_K", "name": "gone:v1"})
        wait_state(self.d, job, ("running",))
        rc, out, err = self.client("jobs", "--cancel", job)
        self.assertEqual(rc, 0, err)
        self.assertEqual(wait_state(self.d, job, ("succeeded", "failed", "cancelled"))["state"], "cancelled")
        p.communicate(timeout=60)
        self.assertEqual(sorted(os.listdir(os.path.join(self.d.home, ".nurllama", "models", "blobs"))), before)
        status, _ = control(self.d, "POST", "/api/show", {"model": "gone:v1"})
        self.assertEqual(status, 404)
        self.assertFalse(os.path.exists(os.path.join(self.d.home, ".nurllama", "jobs", job + ".d")))

    def test_two_requests_for_one_source_attach(self):
        req = {"kind": "quantize", "source": self.big, "type": "Q5_K_M", "name": "twice:v1"}
        p1, j1 = start_job(self.d, req)
        p2, j2 = start_job(self.d, req)
        self.assertEqual(j1, j2)
        out1, out2 = p1.communicate(timeout=300)[0].decode(), p2.communicate(timeout=300)[0].decode()
        self.assertIn('"status":"success"', out1)
        self.assertIn('"status":"success"', out2)
        status, j = control(self.d, "GET", "/api/jobs")
        self.assertEqual(len([x for x in j["jobs"] if x["name"] == "twice:v1"]), 1)

    def test_a_chat_keeps_streaming_while_a_job_runs(self):
        p, job = start_job(self.d, {"kind": "quantize", "source": self.big, "type": "Q6_K", "name": "beside:v1"})
        wait_state(self.d, job, ("running",))
        chat = os.path.join(self.models, "stories260K.gguf")
        t0 = time.time()
        status, _, body = curl("-H", "Content-Type: application/json", self.d.base + "/api/generate",
                               data=json.dumps({"model": chat, "prompt": "Once upon a time",
                                                "options": {"temperature": 0, "num_predict": 48}}), timeout=120)
        elapsed = time.time() - t0
        lines = [json.loads(l) for l in body.splitlines() if l]
        self.assertEqual(status, 200)
        self.assertTrue(lines[-1].get("done"), lines[-1])
        self.assertGreaterEqual(len(lines) - 1, 10, "the chat streamed its tokens")
        _, j = control(self.d, "GET", "/api/jobs/" + job)
        print("chat of %d tokens took %.2f s beside a %s job (%s at its end)" %
              (lines[-1].get("eval_count", 0), elapsed, "Q6_K", j["state"]))
        p.communicate(timeout=300)

    def test_client_quantize_matches_llama_quantize(self):
        with open(os.path.join(ARGS.testdata, "golden", "llama-tok512-Q4_K_M.json")) as f:
            want = "sha256:" + json.load(f)["model"]["sha256"]
        out = os.path.join(self.d.home, "q4km.gguf")
        rc, o, err = self.client("quantize", os.path.join(self.models, "llama-tok512-F32.gguf"), out, "Q4_K_M")
        self.assertEqual(rc, 0, err)
        self.assertEqual(sha256_file(out), want, "not llama-quantize's bytes")
        mf = os.path.join(self.d.home, "Modelfile.q")
        with open(mf, "w") as f:
            f.write("FROM %s\n" % os.path.join(self.models, "llama-tok512-F32.gguf"))
        rc, o, err = self.client("create", "cq:v1", "--quantize", "Q4_K_M", "-f", mf)
        self.assertEqual(rc, 0, err)
        self.assertEqual(sha256_file(self.blob_of("cq:v1")), want)

    def test_client_convert_over_tcp_and_over_the_socket_agree(self):
        out = os.path.join(self.d.home, "conv.gguf")
        rc, o, err = self.client("convert", self.ckpt, "--type", "q8_0", "-o", out)
        self.assertEqual(rc, 0, err)
        rc, o, err = self.client("convert", self.ckpt, "--type", "q8_0", "--name", "viatcp:v1", tcp=True)
        self.assertEqual(rc, 0, err)
        self.assertIn("uploading", err)
        self.assertEqual(sha256_file(self.blob_of("viatcp:v1")), sha256_file(out))
        rc, o, err = self.client("convert", self.ckpt, "-o", out, tcp=True)
        self.assertNotEqual(rc, 0)
        self.assertIn("Unix socket", err)


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--daemon", required=True)
    ap.add_argument("--client", required=True)
    ap.add_argument("--testdata", required=True)
    ARGS, rest = ap.parse_known_args()
    ARGS.testdata = os.path.abspath(ARGS.testdata)
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
