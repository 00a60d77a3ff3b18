"""End-to-end tests of the OpenAI and Anthropic surfaces, /metrics, /health and the llama-server
tokenizer routes against a real nurllamad, at the byte level with curl and raw sockets: each SSE
framing detail (data-only frames, the role in the first delta, a separate finish_reason chunk, the
include_usage chunk with "choices": [], data: [DONE]; named events whose name is the data's type),
a disconnect mid-stream on every streaming route (generation stops, the slot is freed), the
error shape and status of each API, errors after the first byte at shutdown, /metrics checked by
`promtool check metrics` with counters moving by exactly what known requests did, and the native
API's fixes (case-insensitive names, raw with system is a 400, /api/ps shows the digest).
Expected token ids and text come from llama.cpp's goldens (shared/testdata/golden).

usage: v1_curl_e2e.py --daemon PATH/nurllamad --testdata PATH/testdata
"""
import argparse
import functools
import http.server
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_fixture import Daemon, curl, post_json, read_to_end  # noqa: E402

ARGS = None
GREEDY = {"temperature": 0, "options": {"repeat_penalty": 1}}


def frames(body):
    """SSE frames as (event or None, data); fails on anything that is not a well-formed frame."""
    out = []
    assert body.endswith("\n\n"), "SSE body must end with a blank line: %r" % body[-80:]
    for block in body[:-2].split("\n\n"):
        lines = block.split("\n")
        event = None
        if lines[0].startswith("event: "):
            event = lines.pop(0)[len("event: "):]
        assert len(lines) == 1 and lines[0].startswith("data: "), "malformed SSE frame: %r" % block
        out.append((event, lines[0][len("data: "):]))
    return out


def raw_stream(port, path, obj, until=b"data: "):
    """Starts a streaming request on a raw socket and returns it once `until` arrived."""
    body = json.dumps(obj).encode()
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"POST " + path.encode() + b" HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
              b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
    got = b""
    while until not in got:
        chunk = s.recv(4096)
        assert chunk, "connection closed before streaming began: %r" % got
        got += chunk
    return s, got


def metrics(base):
    status, _, body = curl(base + "/metrics")
    assert status == 200, body
    values = {}
    for line in body.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            values[name] = float(value)
    return body, values


def load_golden():
    with open(os.path.join(ARGS.testdata, "golden", "stories260K.json")) as f:
        return json.load(f)


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def eventually(fn, timeout=10):
    deadline = time.time() + timeout
    while True:
        v = fn()
        if v or time.time() > deadline:
            return v
        time.sleep(0.05)


class V1(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.d = Daemon(ARGS.daemon, extra_env={"NURLLAMA_NUM_PARALLEL": "2"})
        cls.model = os.path.join(ARGS.testdata, "models", "stories260K.gguf")
        cls.golden = load_golden()
        cls.text = cls.golden["results"][0]["text"]

    @classmethod
    def tearDownClass(cls):
        code = cls.d.stop()
        cls.d.cleanup()
        assert code == 0, "nurllamad exited with %s" % code

    def post(self, path, obj, headers=()):
        args = ["-H", "Content-Type: application/json"]
        for h in headers:
            args += ["-H", h]
        return curl(*args, self.d.base + path, data=json.dumps(obj))

    def chat(self, **kw):
        req = {"model": self.model, "messages": [{"role": "user", "content": self.text}], "max_tokens": 6, **GREEDY}
        req.update(kw)
        return req

    # --- SSE framing -------------------------------------------------------------------------

    def test_chat_sse_framing(self):
        status, head, body = self.post("/v1/chat/completions",
                                       self.chat(stream=True, stream_options={"include_usage": True}))
        self.assertEqual(status, 200, body)
        h = head.lower()
        self.assertIn("content-type: text/event-stream", h)
        self.assertIn("transfer-encoding: chunked", h)
        self.assertIn("cache-control: no-cache", h)
        fr = frames(body)
        self.assertTrue(all(e is None for e, _ in fr), "chat frames are data-only")
        self.assertEqual(fr[-1][1], "[DONE]")
        chunks = [json.loads(d) for _, d in fr[:-1]]
        self.assertEqual(chunks[0]["choices"][0]["delta"]["role"], "assistant")
        self.assertTrue(all("role" not in c["choices"][0]["delta"] for c in chunks[1:-1] if c["choices"]))
        finish = [c for c in chunks if c["choices"] and c["choices"][0]["finish_reason"]]
        self.assertEqual(len(finish), 1)
        self.assertEqual(finish[0]["choices"][0]["delta"], {})
        self.assertEqual(finish[0]["choices"][0]["finish_reason"], "length")
        self.assertIs(chunks[-2], finish[0])
        self.assertEqual(chunks[-1]["choices"], [])
        self.assertEqual(chunks[-1]["usage"]["completion_tokens"], 6)
        self.assertTrue(all(c["usage"] is None for c in chunks[:-1]))
        self.assertEqual({c["id"] for c in chunks}, {chunks[0]["id"]})
        # Without include_usage: no usage anywhere.
        status, _, body = self.post("/v1/chat/completions", self.chat(stream=True))
        chunks = [json.loads(d) for _, d in frames(body)[:-1]]
        self.assertTrue(all("usage" not in c for c in chunks))
        self.assertEqual(chunks[-1]["choices"][0]["finish_reason"], "length")

    def test_completions_sse_framing(self):
        req = {"model": self.model, "prompt": self.text, "max_tokens": 5, "stream": True,
               "stream_options": {"include_usage": True}, **GREEDY}
        status, head, body = self.post("/v1/completions", req)
        self.assertEqual(status, 200, body)
        fr = frames(body)
        self.assertEqual(fr[-1], (None, "[DONE]"))
        chunks = [json.loads(d) for _, d in fr[:-1]]
        self.assertTrue(all(c["object"] == "text_completion" for c in chunks))
        self.assertEqual(chunks[-2]["choices"][0]["finish_reason"], "length")
        self.assertEqual(chunks[-1]["choices"], [])
        self.assertEqual(chunks[-1]["usage"]["prompt_tokens"], self.golden["results"][0]["n_prompt_tokens"])

    def test_responses_sse_framing(self):
        req = {"model": self.model, "input": self.text, "max_output_tokens": 5, "stream": True, **GREEDY}
        status, head, body = self.post("/v1/responses", req)
        self.assertEqual(status, 200, body)
        self.assertNotIn("[DONE]", body)
        fr = frames(body)
        evs = [(e, json.loads(d)) for e, d in fr]
        for e, d in evs:
            self.assertEqual(e, d["type"], "the event name is the data's type")
        self.assertEqual([d["sequence_number"] for _, d in evs], list(range(len(evs))))
        names = [e for e, _ in evs]
        self.assertEqual(names[:5], ["response.created", "response.in_progress", "response.output_item.added",
                                     "response.content_part.added", "response.output_text.delta"])
        self.assertEqual(names[-4:], ["response.output_text.done", "response.content_part.done",
                                      "response.output_item.done", "response.incomplete"])

    def test_messages_sse_framing(self):
        req = {"model": self.model, "max_tokens": 5, "stream": True,
               "messages": [{"role": "user", "content": self.text}], **GREEDY}
        status, head, body = self.post("/v1/messages", req, headers=["x-api-key: sk-ant-x", "anthropic-version: 2023-06-01"])
        self.assertEqual(status, 200, body)
        self.assertIn("content-type: text/event-stream", head.lower())
        evs = [(e, json.loads(d)) for e, d in frames(body)]
        for e, d in evs:
            self.assertEqual(e, d["type"])
        names = [e for e, _ in evs]
        self.assertEqual(names[0], "message_start")
        self.assertEqual(names[1], "content_block_start")
        self.assertEqual(names[-3:], ["content_block_stop", "message_delta", "message_stop"])
        self.assertTrue(all(n == "content_block_delta" for n in names[2:-3]))
        self.assertEqual(evs[-2][1]["delta"]["stop_reason"], "max_tokens")
        self.assertEqual(evs[-2][1]["usage"]["output_tokens"], 5)

    # --- disconnects -------------------------------------------------------------------------

    def test_disconnect_stops_every_streaming_route(self):
        msgs = [{"role": "user", "content": "Once"}]
        routes = [
            ("/v1/chat/completions", {"model": self.model, "messages": msgs, "max_tokens": 1000000, "stream": True}),
            ("/v1/completions", {"model": self.model, "prompt": "Once", "max_tokens": 1000000, "stream": True}),
            ("/v1/responses", {"model": self.model, "input": "Once", "max_output_tokens": 1000000, "stream": True}),
            ("/v1/messages", {"model": self.model, "messages": msgs, "max_tokens": 1000000, "stream": True}),
        ]
        for path, req in routes:
            cancelled = self.d.read_log().count("request cancelled")
            s, _ = raw_stream(self.d.port, path, req)
            s.close()
            self.assertTrue(eventually(lambda: self.d.read_log().count("request cancelled") > cancelled),
                            "%s: the worker did not cancel the sequence" % path)
            self.assertTrue(eventually(lambda: metrics(self.d.base)[1]["nurllama_active_sequences"] == 0),
                            "%s: the slot was not freed" % path)
            before = metrics(self.d.base)[1]["nurllama_generated_tokens_total"]
            time.sleep(0.3)
            self.assertEqual(metrics(self.d.base)[1]["nurllama_generated_tokens_total"], before,
                             "%s: tokens are still being generated" % path)

    # --- errors --------------------------------------------------------------------------------

    def assert_openai_error(self, status, head, body, want_status, want_type, part):
        self.assertEqual(status, want_status, body)
        self.assertIn("application/json", head.lower())
        j = json.loads(body)
        self.assertEqual(set(j), {"error"})
        self.assertEqual(set(j["error"]), {"message", "type", "param", "code"})
        self.assertEqual(j["error"]["type"], want_type)
        self.assertIn(part, j["error"]["message"])
        return j["error"]

    def test_openai_error_shapes(self):
        m = self.model
        cases = [
            ("/v1/chat/completions", "{nope", 400, "invalid_request_error", "invalid JSON"),
            ("/v1/chat/completions", json.dumps({"model": "nosuch", "messages": [{"role": "user", "content": "x"}]}),
             404, "not_found_error", "model 'nosuch' not found"),
            ("/v1/chat/completions", json.dumps(self.chat(temperature=9)), 400, "invalid_request_error", "temperature"),
            ("/v1/chat/completions", json.dumps(self.chat(n=4)), 400, "invalid_request_error", "\"n\""),
            ("/v1/chat/completions", json.dumps(self.chat(stream=True, model="nosuch")), 404, "not_found_error",
             "not found"),
            ("/v1/completions", json.dumps({"model": m, "prompt": "x", "suffix": "y"}), 400,
             "invalid_request_error", "fill-in-the-middle"),
            ("/v1/embeddings", json.dumps({"model": m, "input": []}), 400, "invalid_request_error", "input"),
            ("/v1/responses", json.dumps({"model": m, "input": "x", "previous_response_id": "resp_1"}), 400,
             "invalid_request_error", "keeps no state"),
        ]
        for path, data, want_status, want_type, part in cases:
            status, head, body = curl("-H", "Content-Type: application/json", self.d.base + path, data=data)
            self.assert_openai_error(status, head, body, want_status, want_type, part)
        status, head, body = curl(self.d.base + "/v1/models/no-such-model")
        err = self.assert_openai_error(status, head, body, 404, "not_found_error", "no-such-model")
        self.assertEqual(err["code"], "model_not_found")
        # An Authorization header is ignored while auth is off.
        status, _, body = self.post("/v1/chat/completions", self.chat(max_tokens=1),
                                    headers=["Authorization: Bearer sk-whatever"])
        self.assertEqual(status, 200, body)

    def test_anthropic_error_shapes(self):
        cases = [
            ({"model": self.model, "messages": [{"role": "user", "content": "x"}]}, 400, "invalid_request_error",
             "max_tokens"),
            ({"model": "nosuch", "max_tokens": 3, "messages": [{"role": "user", "content": "x"}]}, 404,
             "not_found_error", "not found"),
            ({"model": self.model, "max_tokens": 3, "messages": [{"role": "tool", "content": "x"}]}, 400,
             "invalid_request_error", "role"),
            ({"model": self.model, "max_tokens": 3, "temperature": 1.5, "messages": [{"role": "user", "content": "x"}]},
             400, "invalid_request_error", "temperature"),
        ]
        for path in ("/v1/messages", "/v1/messages/count_tokens"):
            for req, want_status, want_type, part in cases:
                if path.endswith("count_tokens") and part == "max_tokens":
                    continue
                status, head, body = self.post(path, req, headers=["x-api-key: sk-ant-x"])
                self.assertEqual(status, want_status, body)
                j = json.loads(body)
                self.assertEqual(set(j), {"type", "error"})
                self.assertEqual(j["type"], "error")
                self.assertEqual(set(j["error"]), {"type", "message"})
                self.assertEqual(j["error"]["type"], want_type)
                self.assertIn(part, j["error"]["message"])

    # --- metrics and health ------------------------------------------------------------------

    def test_metrics_promtool_and_counters(self):
        promtool = shutil.which("promtool")
        self.assertIsNotNone(promtool, "promtool is missing (Debian package prometheus; scripts/install-deps.sh)")
        text, m0 = metrics(self.d.base)
        p = subprocess.run([promtool, "check", "metrics"], input=text.encode(), capture_output=True)
        self.assertEqual(p.returncode, 0, p.stdout.decode() + p.stderr.decode())
        route = 'nurllama_http_requests_total{route="/v1/chat/completions",method="POST",status="%s"}'
        usage = []
        for n in (3, 5, 7):
            status, _, body = self.post("/v1/chat/completions", self.chat(max_tokens=n))
            self.assertEqual(status, 200, body)
            usage.append(json.loads(body)["usage"])
        status, _, _ = self.post("/v1/chat/completions", self.chat(model="nosuch"))
        self.assertEqual(status, 404)

        def moved():
            _, m = metrics(self.d.base)
            return m if m.get(route % "200", 0) - m0.get(route % "200", 0) == 3 and \
                m.get(route % "404", 0) - m0.get(route % "404", 0) == 1 else None
        m1 = eventually(moved)
        self.assertIsNotNone(m1, "the request counters did not move by 3 (200) and 1 (404)")
        d = lambda k: m1.get(k, 0) - m0.get(k, 0)  # noqa: E731
        self.assertEqual(d("nurllama_generated_tokens_total"), sum(u["completion_tokens"] for u in usage))
        self.assertEqual(d("nurllama_prompt_tokens_total"), sum(u["prompt_tokens"] for u in usage))
        self.assertEqual(d("nurllama_time_to_first_token_seconds_count"), 3)
        self.assertEqual(d("nurllama_inter_token_seconds_count"), sum(u["completion_tokens"] - 1 for u in usage))
        self.assertEqual(d("nurllama_queue_wait_seconds_count"), 3)
        self.assertEqual(d('nurllama_http_request_duration_seconds_count{route="/v1/chat/completions"}'), 4)
        self.assertGreaterEqual(m1["nurllama_models_resident"], 1)
        self.assertGreater(m1['nurllama_model_memory_bytes{model="%s"}' % self.model], os.path.getsize(self.model))
        self.assertGreaterEqual(m1['nurllama_model_loads_total{result="ok"}'], 1)
        self.assertEqual(m1["nurllama_active_sequences"], 0)
        self.assertEqual(m1["nurllama_queue_depth"], 0)

        # A pull over HTTP counts its downloaded bytes.
        handler = functools.partial(QuietHandler, directory=os.path.dirname(self.model))
        srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        try:
            url = "http://127.0.0.1:%d/stories260K.gguf" % srv.server_address[1]
            status, _, body = post_json(self.d.base, "/api/pull", {"model": url, "name": "pulled", "stream": False})
            self.assertEqual(status, 200, body)
        finally:
            srv.shutdown()
            srv.server_close()
        _, m2 = metrics(self.d.base)
        self.assertEqual(m2["nurllama_pull_bytes_total"] - m1["nurllama_pull_bytes_total"], os.path.getsize(self.model))
        text, _ = metrics(self.d.base)
        p = subprocess.run([promtool, "check", "metrics"], input=text.encode(), capture_output=True)
        self.assertEqual(p.returncode, 0, p.stdout.decode() + p.stderr.decode())

    def test_health(self):
        status, head, body = curl(self.d.base + "/health")
        self.assertEqual((status, json.loads(body)), (200, {"status": "ok"}))

    # --- llama-server tokenizer routes, native fixes ----------------------------------------

    def test_tokenize_and_detokenize_llama_server_names(self):
        r = self.golden["results"][0]
        status, _, body = self.post("/tokenize", {"model": self.model, "content": r["text"], "add_special": True})
        self.assertEqual(status, 200, body)
        self.assertEqual(json.loads(body), {"tokens": r["prompt_tokens"]})
        status, _, body = self.post("/tokenize", {"model": self.model, "content": r["text"]})  # add_special false
        self.assertEqual(json.loads(body)["tokens"], r["prompt_tokens"][1:])
        status, _, body = self.post("/tokenize", {"model": self.model, "content": r["text"], "with_pieces": True})
        toks = json.loads(body)["tokens"]
        self.assertEqual([t["id"] for t in toks], r["prompt_tokens"][1:])
        ids = [s["id"] for s in r["greedy_steps"][:8]]
        status, _, body = self.post("/detokenize", {"model": self.model, "tokens": ids})
        self.assertEqual(json.loads(body), {"content": "".join(s["piece"] for s in r["greedy_steps"][:8])})
        status, _, body = self.post("/detokenize", {"model": self.model, "tokens": [99999]})
        self.assertEqual(status, 400)

    def test_native_fixes_names_raw_ps_digest(self):
        status, _, body = post_json(self.d.base, "/api/generate",
                                    {"model": self.model, "prompt": "x", "raw": True, "system": "s"})
        self.assertEqual(status, 400)
        self.assertEqual(json.loads(body)["error"], "raw mode does not support template, system, or context")
        # A pull of ./stories260K.gguf stores stories260k:latest; any spelling finds it.
        status, _, body = curl("--unix-socket", self.d.socket, "-H", "Content-Type: application/json",
                               "http://localhost/api/pull", data=json.dumps({"model": self.model, "stream": False}))
        self.assertEqual(status, 200, body)
        tags = json.loads(curl(self.d.base + "/api/tags")[2])["models"]
        entry = [t for t in tags if t["name"] == "stories260k:latest"]
        self.assertEqual(len(entry), 1, tags)
        self.assertEqual(entry[0]["digest"], self.golden["model"]["sha256"])
        for spelling in ("stories260K", "STORIES260K:latest", "Stories260k"):
            status, _, body = post_json(self.d.base, "/api/chat", {
                "model": spelling, "stream": False, "options": {"num_predict": 2},
                "messages": [{"role": "user", "content": "Once"}]})
            self.assertEqual(status, 200, "%s: %s" % (spelling, body))
            status, _, body = post_json(self.d.base, "/api/show", {"model": spelling})
            self.assertEqual(status, 200, body)
        status, _, body = curl(self.d.base + "/v1/models/STORIES260K")
        self.assertEqual(json.loads(body)["id"], "stories260k:latest")
        ps = json.loads(curl(self.d.base + "/api/ps")[2])["models"]
        mine = [p for p in ps if p["name"] == "stories260k:latest"]
        self.assertEqual(len(mine), 1, ps)
        self.assertEqual(mine[0]["digest"], entry[0]["digest"], "ps shows the digest list shows")

    def test_keep_alive_and_options_through_v1(self):
        status, _, body = self.post("/v1/chat/completions",
                                    self.chat(max_tokens=1, options={"num_ctx": 200}, keep_alive=0))
        self.assertEqual(status, 200, body)
        gone = eventually(lambda: all(p["context_length"] != 200
                                      for p in json.loads(curl(self.d.base + "/api/ps")[2])["models"]))
        self.assertTrue(gone, "keep_alive 0 did not unload the model")


class LlamaServerDefaults(unittest.TestCase):
    def test_tokenize_without_a_model_uses_the_resident_one(self):
        d = Daemon(ARGS.daemon)
        try:
            model = os.path.join(ARGS.testdata, "models", "stories260K.gguf")
            r = load_golden()["results"][0]
            status, _, body = post_json(d.base, "/tokenize", {"content": "x"})
            self.assertEqual(status, 400)
            self.assertIn("model is required", json.loads(body)["error"])
            post_json(d.base, "/api/generate", {"model": model})  # load it
            status, _, body = post_json(d.base, "/tokenize", {"content": r["text"]})
            self.assertEqual((status, json.loads(body)), (200, {"tokens": r["prompt_tokens"][1:]}))
        finally:
            self.assertEqual(d.stop(), 0)
            d.cleanup()


class Shutdown(unittest.TestCase):
    def test_error_after_the_first_byte_in_each_framing(self):
        d = Daemon(ARGS.daemon, extra_env={"NURLLAMA_NUM_PARALLEL": "2"})
        try:
            model = os.path.join(ARGS.testdata, "models", "stories260K.gguf")
            msgs = [{"role": "user", "content": "Once"}]
            a, got_a = raw_stream(d.port, "/v1/chat/completions",
                                  {"model": model, "messages": msgs, "max_tokens": 1000000, "stream": True}, b"delta")
            b, got_b = raw_stream(d.port, "/v1/messages",
                                  {"model": model, "messages": msgs, "max_tokens": 1000000, "stream": True}, b"delta")
            code = d.stop()
            text_a, text_b = got_a + read_to_end(a), got_b + read_to_end(b)
            a.close()
            b.close()
            self.assertEqual(code, 0)
            self.assertRegex(text_a, rb'data: \{"error":\{"code":null,"message":"server is shutting down",'
                                     rb'"param":null,"type":"server_error"\}\}\n\n\r\n0\r\n\r\n$')
            self.assertRegex(text_b, rb'event: error\ndata: \{"error":\{"message":"server is shutting down",'
                                     rb'"type":"api_error"\},"type":"error"\}\n\n\r\n0\r\n\r\n$')
        finally:
            d.cleanup()


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--daemon", required=True)
    ap.add_argument("--testdata", required=True)
    ARGS, rest = ap.parse_known_args()
    unittest.main(argv=[sys.argv[0], "-v", *rest])
