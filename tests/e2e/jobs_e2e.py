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
  fails clearly.

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
        code = cls.d.stop()
        if code != 0:
            print(cls.d.read_log()[-4000:])
        cls.d.cleanup()
        assert code == 0, "nurllamad exited with %s" % code

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
        mf = os.path.join(self.d.home, "Modelfile.tcp")
        with open(mf, "w") as f:
            f.write("FROM %s\n" % self.model)
        rc, out, err = self.client("rm", "viatcp")  # absent is fine
        uploads = self.d.read_log().count("POST /api/blobs")
        rc, out, err = self.client("create", "viatcp", "-f", mf, env=self.tcp_env)
        self.assertEqual(rc, 0, err)
        self.assertGreater(self.d.read_log().count("POST /api/blobs"), uploads, "uploaded over TCP")
        rc, out, err = self.client("verify", "viatcp")
        self.assertEqual(rc, 0, err)
        self.assertIn(self.golden[7:], out)

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
