#!/usr/bin/env python3
"""Structured output end to end: a battery of JSON schemas, each sent as `format` on
/api/generate to every test model (random-weight models and a 260K-parameter story model, whose
unconstrained text is noise), streamed and not, at temperature 1, with a small num_predict that
the noise runs into (it never closes a string by itself). Every reply must end ("stop", never
"length": the document is finished within the budget) with a document that parses and validates
against its schema with jsonschema, an independent validator (formats too: date, time, uuid,
email, ipv4 by jsonschema's own checkers, date-time and time by Python's datetime). Also: schemas
we cannot compile are a 400 naming the keyword, and so is a budget too small for the schema's
shortest document.

usage: structured_e2e.py --daemon nurllamad --models DIR [--only NAME]"""
import argparse
import concurrent.futures
import datetime
import json
import os
import sys
import time
import urllib.error
import urllib.request

from daemon_fixture import Daemon

try:
    import jsonschema
except ImportError:
    sys.exit("python3-jsonschema is missing (scripts/install-deps.sh installs it)")

NUM_PREDICT = 96  # above every schema's shortest document (at most ~50 bytes), below what noise fills
MODELS = ["stories260K.gguf", "qwen2-F16-embQ4_0.gguf", "qwen3-F16-embQ4_0.gguf", "gemma3-F16-embQ4_0.gguf",
          "phi3-F16-embQ4_K.gguf"]

S = {"type": "string"}
I = {"type": "integer"}
N = {"type": "number"}
B = {"type": "boolean"}


def obj(props, required=None, **extra):
    s = {"type": "object", "properties": props, "required": list(props) if required is None else required}
    s.update(extra)
    return s


SCHEMAS = [
    ("flat", obj({"name": S, "age": I})),
    ("optional", obj({"name": S, "nick": S, "age": I, "email": {"type": "string", "format": "email"}}, ["name"])),
    ("nested", obj({"user": obj({"id": I, "profile": obj({"bio": {"type": "string", "maxLength": 40}, "active": B})})})),
    ("array-of-objects", obj({"items": {"type": "array", "items": obj({"sku": S, "qty": {"type": "integer", "minimum": 1}}),
                                        "maxItems": 4}})),
    ("enum", obj({"color": {"enum": ["red", "green", "blue"]}})),
    ("enum-mixed", {"enum": ["a", 1, 2.5, True, None, {"k": [1, 2]}]}),
    ("const", obj({"version": {"const": 2}, "kind": {"const": "report"}})),
    ("integer-range", obj({"n": {"type": "integer", "minimum": -40, "maximum": 1234}})),
    ("number-range", obj({"ratio": {"type": "number", "minimum": 0.25, "maximum": 0.75}})),
    ("exclusive", obj({"p": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1}})),
    ("bool-null", obj({"ok": B, "nothing": {"type": "null"}})),
    ("nullable", obj({"maybe": {"type": ["string", "null"]}, "count": {"type": ["integer", "null"]}})),
    ("array-bounds", {"type": "array", "items": I, "minItems": 2, "maxItems": 5}),
    ("enum-array", obj({"tags": {"type": "array", "items": {"enum": ["x", "y", "z"]}, "maxItems": 3}})),
    ("string-length", obj({"code": {"type": "string", "minLength": 3, "maxLength": 6}})),
    ("unicode-enum", obj({"word": {"enum": ["café", "日本語", "emoji 🎉", "naïve"]}})),
    ("unicode-keys", obj({"名前": S, "größe": N, "émoji🎉": B})),
    ("pattern", obj({"phone": {"type": "string", "pattern": "^\\+?[0-9]{2,3}-[0-9]{3,4}-[0-9]{4}$"}})),
    ("pattern-unanchored", obj({"id": {"type": "string", "pattern": "ID[0-9]+"}})),
    ("date", obj({"day": {"type": "string", "format": "date"}})),
    ("date-time", obj({"at": {"type": "string", "format": "date-time"}, "end": {"type": "string", "format": "time"}})),
    ("uuid", obj({"id": {"type": "string", "format": "uuid"}})),
    ("ipv4", obj({"host": {"type": "string", "format": "ipv4"}})),
    ("any-of", obj({"value": {"anyOf": [S, {"type": "integer", "minimum": 100}]}})),
    ("one-of-tagged", {"oneOf": [obj({"kind": {"const": "circle"}, "r": {"type": "number", "minimum": 0}}),
                                 obj({"kind": {"const": "rect"}, "w": N, "h": N})]}),
    ("all-of", {"allOf": [obj({"a": S}), obj({"b": I}), {"properties": {"c": B}}]}),
    ("defs-ref", {"$defs": {"point": obj({"x": N, "y": N})}, "type": "object",
                  "properties": {"from": {"$ref": "#/$defs/point"}, "to": {"$ref": "#/$defs/point"}},
                  "required": ["from", "to"]}),
    ("recursive-tree", {"$defs": {"node": {"type": "object", "properties": {
        "label": {"type": "string", "maxLength": 8},
        "children": {"type": "array", "items": {"$ref": "#/$defs/node"}, "maxItems": 2}}, "required": ["label"]}},
        "$ref": "#/$defs/node"}),
    ("recursive-list", {"$defs": {"cell": {"type": "object", "properties": {"v": I, "next": {"$ref": "#/$defs/cell"}},
                                           "required": ["v"]}}, "$ref": "#/$defs/cell"}),
    ("additional-schema", {"type": "object", "properties": {"id": S}, "required": ["id"],
                           "additionalProperties": {"type": "integer", "maximum": 9}}),
    ("additional-true", {"type": "object", "properties": {"id": I}, "required": ["id"], "additionalProperties": True}),
    ("additional-false", obj({"a": I, "b": S}, ["a"], additionalProperties=False)),
    ("tuple", {"type": "array", "prefixItems": [S, I, B], "items": False, "minItems": 3}),
    ("deep", obj({"a": obj({"b": obj({"c": obj({"d": obj({"e": {"type": "integer", "maximum": 5}})})})})})),
    ("top-array-numbers", {"type": "array", "items": N, "maxItems": 6}),
    ("top-enum", {"enum": ["yes", "no", "maybe"]}),
    ("top-integer", {"type": "integer", "minimum": 0, "maximum": 99}),
    ("empty-schema", {}),
    ("required-order", {"type": "object", "properties": {"z": I, "a": S, "m": B}, "required": ["m", "z"]}),
    ("many-optional", obj({k: S if i % 2 else I for i, k in enumerate("abcdefgh")}, [])),
    ("array-of-arrays", {"type": "array", "items": {"type": "array", "items": I, "maxItems": 3}, "maxItems": 3}),
    ("number-free", obj({"x": N, "y": N})),
    ("annotations", {"title": "Person", "description": "A person", "type": "object", "examples": [{"n": "x"}],
                     "properties": {"n": {"type": "string", "description": "name", "default": "x"}}, "required": ["n"],
                     "$schema": "https://json-schema.org/draft/2020-12/schema"}),
    ("bare-object", {"type": "object"}),
    ("draft7", {"definitions": {"s": {"type": "string", "maxLength": 4}}, "type": "array",
                "items": [{"$ref": "#/definitions/s"}, {"type": "integer"}], "additionalItems": False}),
]

UNCOMPILABLE = [
    ({"type": "object", "not": {"required": ["a"]}}, "not"),
    ({"type": "object", "patternProperties": {"^x": I}}, "patternProperties"),
    ({"type": "array", "items": I, "uniqueItems": True}, "uniqueItems"),
    ({"type": "integer", "multipleOf": 7}, "multipleOf"),
    ({"type": "string", "format": "iri-reference"}, "iri-reference"),
    ({"type": "object", "properties": {"a": {"$ref": "#"}}, "required": ["a"]}, "no finite document"),
    ({"type": "string", "minLength": 3, "maxLength": 1}, "contradictory"),
    ({"if": {"type": "string"}, "then": {"maxLength": 1}}, "if"),
]


def format_checker():
    fc = jsonschema.FormatChecker()

    @fc.checks("time", raises=ValueError)
    def _t(s):  # RFC 3339 full-time: the offset is required
        if not isinstance(s, str):
            return True
        if not (s.endswith("Z") or s[-6] in "+-"):
            raise ValueError("no offset")
        datetime.time.fromisoformat(s.replace("Z", "+00:00"))
        return True

    @fc.checks("date-time", raises=ValueError)
    def _dt(s):  # RFC 3339, which datetime parses since Python 3.11
        if not isinstance(s, str):
            return True
        if "T" not in s or not (s.endswith("Z") or s[-6] in "+-"):
            raise ValueError("no offset")
        datetime.datetime.fromisoformat(s.replace("Z", "+00:00"))
        return True
    return fc


def post(base, path, body, timeout=600):
    req = urllib.request.Request(base + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return r.read().decode()


def generate(base, model, schema, seed, stream):
    body = {"model": model, "prompt": "Reply with JSON.", "format": schema, "stream": stream,
            "options": {"temperature": 1.0, "top_k": 0, "top_p": 1.0, "seed": seed, "num_predict": NUM_PREDICT}}
    out = post(base, "/api/generate", body)
    if stream:
        text, last = "", None
        for line in out.splitlines():
            if not line.strip():
                continue
            last = json.loads(line)
            if "error" in last:
                raise RuntimeError(last["error"])
            text += last.get("response", "")
        return text, last
    last = json.loads(out)
    return last["response"], last


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--daemon", required=True)
    ap.add_argument("--models", required=True)
    ap.add_argument("--only", default=None)
    a = ap.parse_args()
    d = Daemon(a.daemon, extra_env={"NURLLAMA_NUM_PARALLEL": "4", "NURLLAMA_MAX_LOADED_MODELS": "1",
                                   "NURLLAMA_LOG_LEVEL": "info"})
    failures, results = [], []
    checker = format_checker()
    t0 = time.time()
    try:
        # Uncompilable schemas: a 400 naming the problem, before any generation.
        model0 = os.path.join(a.models, MODELS[1])
        for schema, word in UNCOMPILABLE:
            try:
                post(d.base, "/api/generate", {"model": model0, "prompt": "x", "format": schema, "stream": False})
                failures.append(f"uncompilable {schema} was accepted")
            except urllib.error.HTTPError as e:
                msg = json.loads(e.read().decode()).get("error", "")
                if e.code != 400 or word not in msg:
                    failures.append(f"uncompilable {schema}: HTTP {e.code} {msg!r} (want 400 naming {word!r})")
        # A budget below the shortest document: a 400 naming both, before any generation.
        deep = dict(SCHEMAS)["deep"]  # {"a":{"b":{"c":{"d":{"e":0}}}}}: more than 4 tokens
        try:
            post(d.base, "/api/generate", {"model": model0, "prompt": "x", "format": deep, "stream": False,
                                           "options": {"num_predict": 4}})
            failures.append("num_predict 4 for the deep schema was accepted")
        except urllib.error.HTTPError as e:
            msg = json.loads(e.read().decode()).get("error", "")
            if e.code != 400 or "num_predict 4" not in msg or "shortest document" not in msg:
                failures.append(f"num_predict 4 for the deep schema: HTTP {e.code} {msg!r} (want 400 naming the budget)")
        models = [m for m in MODELS if not a.only or a.only in m]
        for mi, m in enumerate(models):
            path = os.path.join(a.models, m)
            jobs = []
            with concurrent.futures.ThreadPoolExecutor(4) as pool:
                for si, (name, schema) in enumerate(SCHEMAS):
                    seed = 1000 * mi + si
                    jobs.append((name, schema, pool.submit(generate, d.base, path, schema, seed, si % 2 == 0)))
                for name, schema, fut in jobs:
                    try:
                        text, last = fut.result()
                    except Exception as e:  # noqa: BLE001 - report every failure
                        failures.append(f"{m} {name}: request failed: {e}")
                        continue
                    try:
                        if last.get("done_reason") != "stop":
                            raise ValueError(f"done_reason {last.get('done_reason')} after {last.get('eval_count')} tokens")
                        doc = json.loads(text)
                        cls = jsonschema.Draft7Validator if "definitions" in schema else jsonschema.Draft202012Validator
                        cls(schema, format_checker=checker).validate(doc)
                        results.append((m, name, last.get("eval_count", 0)))
                    except Exception as e:  # noqa: BLE001
                        failures.append(f"{m} {name}: {type(e).__name__}: {str(e)[:300]}\n    output: {text[:400]!r}")
        total = len(models) * len(SCHEMAS)
        tokens = sum(r[2] for r in results)
        per_model = {m: sum(1 for r in results if r[0] == m) for m in models}
        print(f"battery: {len(results)}/{total} valid ({len(SCHEMAS)} schemas x {len(models)} models, "
              f"num_predict {NUM_PREDICT}), {tokens} tokens, {time.time() - t0:.0f} s; per model {per_model}")
    finally:
        log = d.read_log()
        code = d.stop()
        if code != 0:
            failures.append(f"nurllamad exited {code}")
        if failures:
            print(log[-3000:])
        d.cleanup()
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
