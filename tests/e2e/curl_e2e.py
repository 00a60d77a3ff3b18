"""End-to-end tests of nurllamad with curl: raw NDJSON framing, stream:false, concurrency
(parallel greedy streams equal the same requests run alone), a disconnect cancels its
sequence, bad input gets ollama's errors while the daemon keeps serving, security checks,
the control socket, and a clean SIGTERM during a stream.

usage: curl_e2e.py --daemon PATH/nurllamad --model PATH/stories260K.gguf
"""
import argparse
import concurrent.futures
import json
import os
import socket
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_fixture import Daemon, curl, post_json, read_to_end  # noqa: E402

ARGS = None


def ndjson(body):
    lines = body.split("\n")
    assert lines[-1] == "", "NDJSON must end with a newline: %r" % body[-80:]
    return [json.loads(l) for l in lines[:-1]]


class E2E(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.d = Daemon(ARGS.daemon, extra_env={"NURLLAMA_NUM_PARALLEL": "4", "NURLLAMA_MAX_BODY": "1MiB"})
        cls.model = os.path.abspath(ARGS.model)

    @classmethod
    def tearDownClass(cls):
        code = cls.d.stop()
        cls.d.cleanup()
        assert code == 0, "nurllamad exited with %s" % code

    def gen(self, prompt, **kw):
        req = {"model": self.model, "prompt": prompt, "options": {"temperature": 0, "num_predict": 24}}
        req.update(kw)
        return post_json(self.d.base, "/api/generate", req)

    def assert_alive(self):
        status, _, body = curl(self.d.base + "/api/version")
        self.assertEqual(status, 200, "daemon stopped serving")
        self.assertIn("version", json.loads(body))

    def test_root_and_version(self):
        status, head, body = curl(self.d.base + "/")
        self.assertEqual((status, body), (200, "nurllama is running"))
        status, head, body = curl("-I", self.d.base + "/")
        self.assertEqual(status, 200)
        self.assertEqual(json.loads(curl(self.d.base + "/api/version")[2])["version"], "0.1.0")

    def test_generate_streams_ndjson(self):
        status, head, body = self.gen("Once upon a time")
        self.assertEqual(status, 200, body)
        self.assertIn("content-type: application/x-ndjson", head.lower())
        self.assertIn("transfer-encoding: chunked", head.lower())
        objs = ndjson(body)
        self.assertGreater(len(objs), 2)
        for o in objs[:-1]:
            self.assertEqual(o["done"], False)
            self.assertEqual(o["model"], self.model)
            self.assertRegex(o["created_at"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z$")
            self.assertIsInstance(o["response"], str)
        final = objs[-1]
        self.assertEqual(final["done"], True)
        self.assertIn(final["done_reason"], ("stop", "length"))
        for k in ("total_duration", "load_duration", "prompt_eval_count", "prompt_eval_duration",
                  "eval_count", "eval_duration"):
            self.assertIsInstance(final[k], int, k)
        self.assertGreater(final["eval_duration"], 0)
        self.assertLessEqual(final["eval_count"], 24)
        self.assertEqual(len(final["context"]), final["prompt_eval_count"] + final["eval_count"])
        streamed = "".join(o["response"] for o in objs)
        self.assertTrue(streamed.strip(), "no text generated")

        # stream:false returns the same greedy text in one JSON object.
        status, head, body = self.gen("Once upon a time", stream=False)
        self.assertEqual(status, 200)
        self.assertIn("application/json", head.lower())
        one = json.loads(body)
        self.assertEqual(one["response"], streamed)
        self.assertEqual(one["done"], True)

    def test_chat_and_name_alias(self):
        status, _, body = post_json(self.d.base, "/api/chat", {
            "name": self.model, "stream": False, "options": {"temperature": 0, "num_predict": 8},
            "messages": [{"role": "user", "content": "Tell me a story"}]})
        self.assertEqual(status, 200, body)
        j = json.loads(body)
        self.assertEqual(j["message"]["role"], "assistant")
        self.assertTrue(j["message"]["content"])

    def test_parallel_streams_equal_solo(self):
        prompts = ["Once upon a time", "The little dog", "Lily and Tom went", "One day, a bird"]
        solo = []
        for p in prompts:
            status, _, body = self.gen(p, stream=False)
            self.assertEqual(status, 200, body)
            solo.append(json.loads(body)["response"])
        with concurrent.futures.ThreadPoolExecutor(len(prompts)) as ex:
            results = list(ex.map(lambda p: self.gen(p), prompts))
        for p, want, (status, _, body) in zip(prompts, solo, results):
            self.assertEqual(status, 200, body)
            got = "".join(o.get("response", "") for o in ndjson(body))
            self.assertEqual(got, want, "parallel output differs for %r" % p)

    def test_disconnect_cancels(self):
        body = json.dumps({"model": self.model, "prompt": "Once upon a time",
                           "options": {"temperature": 0, "num_predict": 1000000}}).encode()
        s = socket.create_connection(("127.0.0.1", self.d.port))
        s.sendall(b"POST /api/generate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                  b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
        got = b""
        while b'"done":false' not in got:
            chunk = s.recv(4096)
            self.assertTrue(chunk, "connection closed before streaming began")
            got += chunk
        s.close()
        deadline = time.time() + 10
        # The worker logs the cancel; the HTTP layer logs the request line once its stream ended.
        while time.time() < deadline and not ("request cancelled" in self.d.read_log() and
                                              "client went away" in self.d.read_log()):
            time.sleep(0.05)
        self.assertIn("request cancelled", self.d.read_log())
        self.assertIn("client went away", self.d.read_log())
        self.assert_alive()
        # The slot is free: a new request completes.
        status, _, out = self.gen("Hello", stream=False)
        self.assertEqual(status, 200, out)

    def test_bad_input(self):
        big = "x" * (2 << 20)
        cases = [
            ("/api/generate", "", 400, "missing request body"),
            ("/api/generate", "{not json", 400, "invalid JSON"),
            ("/api/chat", '{"messages": []}', 400, "model is required"),
            ("/api/generate", '{"model": "nosuch", "prompt": "x"}', 404, "model 'nosuch' not found"),
            ("/api/show", '{"model": "nosuch:latest"}', 404, "model 'nosuch:latest' not found"),
            ("/api/generate", json.dumps({"model": self.model, "prompt": "x", "options": {"temperature": "hot"}}),
             400, "temperature"),
            ("/api/generate", json.dumps({"model": self.model, "prompt": "x", "options": {"num_predict": "10"}}),
             400, "num_predict"),
            ("/api/generate", '{"model": "../../../../etc/passwd", "prompt": "x"}', 400, "invalid model name"),
            ("/api/generate", '{"model": "/etc/shadow", "prompt": "x"}', 400, "invalid model name"),
            ("/api/generate", '{"model": "a/../../b", "prompt": "x"}', 400, "invalid model name"),
            ("/api/generate", json.dumps({"model": self.model, "prompt": big}), 413, "too large"),
        ]
        for path, data, want_status, want_text in cases:
            status, head, body = curl("-H", "Content-Type: application/json", self.d.base + path, data=data)
            self.assertEqual(status, want_status, "%s %r → %s" % (path, data[:60], body))
            self.assertIn("application/json", head.lower())
            self.assertIn(want_text, json.loads(body)["error"])
            self.assert_alive()
        status, _, body = curl(self.d.base + "/api/nope")
        self.assertEqual(status, 404)
        status, _, body = curl("-X", "DELETE", self.d.base + "/api/generate")
        self.assertEqual(status, 405)

    def test_truncate(self):
        long_prompt = "the cat sat on the mat. " * 400  # far beyond num_ctx 128
        status, _, body = self.gen(long_prompt, truncate=False, options={"num_ctx": 128})
        self.assertEqual(status, 400, body)
        status, _, body = self.gen(long_prompt, stream=False, options={"num_ctx": 128, "num_predict": 4})
        self.assertEqual(status, 200, body)
        self.assertGreater(json.loads(body)["truncated_prompt_tokens"], 0)

    def test_load_unload_and_ps(self):
        status, _, body = post_json(self.d.base, "/api/generate", {"model": self.model})
        self.assertEqual(json.loads(body)["done_reason"], "load")
        ps = json.loads(curl(self.d.base + "/api/ps")[2])["models"]
        self.assertTrue(any(m["name"] == self.model for m in ps))
        m = [m for m in ps if m["name"] == self.model][0]
        for k in ("size", "size_vram", "expires_at", "context_length", "details"):
            self.assertIn(k, m)

    def test_show(self):
        status, _, body = post_json(self.d.base, "/api/show", {"model": self.model})
        self.assertEqual(status, 200, body)
        j = json.loads(body)
        self.assertEqual(j["details"]["family"], "llama")
        self.assertEqual(j["model_info"]["general.architecture"], "llama")
        self.assertIn("completion", j["capabilities"])
        self.assertNotIn("tensors", j)
        j = json.loads(post_json(self.d.base, "/api/show", {"model": self.model, "verbose": True})[2])
        self.assertTrue(any(t["name"] == "token_embd.weight" for t in j["tensors"]))

    def test_security(self):
        status, _, _ = curl("-H", "Host: evil.example", self.d.base + "/api/version")
        self.assertEqual(status, 403)
        status, head, _ = curl("-H", "Origin: http://localhost:3000", self.d.base + "/api/version")
        self.assertEqual(status, 200)
        self.assertIn("access-control-allow-origin: http://localhost:3000", head.lower())
        status, _, _ = curl("-H", "Origin: https://evil.example", self.d.base + "/api/version")
        self.assertEqual(status, 403)

    def test_control_socket(self):
        status, _, body = curl("--unix-socket", self.d.socket, "http://localhost/api/version")
        self.assertEqual(status, 200, body)
        status, _, body = curl("-X", "POST", self.d.base + "/control/reload")
        self.assertEqual(status, 403)
        status, _, body = curl("-X", "POST", "--unix-socket", self.d.socket, "http://localhost/control/reload")
        self.assertEqual(status, 200, body)
        status, _, body = curl("--unix-socket", self.d.socket, "-H", "Content-Type: application/json",
                               "http://localhost/api/show", data=json.dumps({"model": self.model}))
        self.assertEqual(status, 200, body)
        # Load, then unload through the control route.
        post_json(self.d.base, "/api/generate", {"model": self.model})
        status, _, body = curl("--unix-socket", self.d.socket, "http://localhost/control/unload",
                               data=json.dumps({"model": self.model}))
        self.assertEqual(status, 200, body)
        self.assertEqual(json.loads(body)["unloaded"], True)
        deadline = time.time() + 10
        while time.time() < deadline and json.loads(curl(self.d.base + "/api/ps")[2])["models"]:
            time.sleep(0.05)
        self.assertEqual(json.loads(curl(self.d.base + "/api/ps")[2])["models"], [])


class Shutdown(unittest.TestCase):
    def test_sigterm_ends_stream_cleanly(self):
        d = Daemon(ARGS.daemon)
        try:
            body = json.dumps({"model": os.path.abspath(ARGS.model), "prompt": "Once",
                               "options": {"num_predict": 1000000, "num_ctx": 2048}}).encode()
            s = socket.create_connection(("127.0.0.1", d.port))
            s.sendall(b"POST /api/generate HTTP/1.1\r\nHost: localhost\r\nContent-Length: " +
                      str(len(body)).encode() + b"\r\n\r\n" + body)
            got = b""
            while b'"done":false' not in got:
                got += s.recv(4096)
            code = d.stop()
            got += read_to_end(s)
            self.assertEqual(code, 0)
            self.assertIn(b'{"error":"server is shutting down"}', got)
            self.assertTrue(got.endswith(b"0\r\n\r\n"), "the chunked stream was not terminated")
        finally:
            d.cleanup()


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--daemon", required=True)
    ap.add_argument("--model", required=True)
    ARGS, rest = ap.parse_known_args()
    unittest.main(argv=[sys.argv[0], "-v", *rest])
