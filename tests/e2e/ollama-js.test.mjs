// End-to-end test with the npm `ollama` package, unchanged, against a real nurllamad:
// version, generate (streamed and not), chat, show, ps, embed-less errors (ResponseError with
// the HTTP status), abort() of a running stream, and the daemon still serving afterwards;
// structured output (`format` string and schema), tools, thinking and log-probabilities with the
// qwen2/qwen3 test models found beside MODEL (random weights: their free text is noise).
//
// usage: node ollama-js.test.mjs DAEMON MODEL   (after `npm ci` in this directory)
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, readFileSync, openSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';

import { importClient, startDaemon, testArgs } from './daemon.mjs';

const { Ollama } = await importClient('ollama');
const [daemonPath, modelArg] = testArgs('ollama-js.test.mjs', 'DAEMON', 'MODEL');
const model = resolve(modelArg);

let d, client, base;

before(async () => {
  d = await startDaemon(daemonPath);
  base = d.base;
  client = new Ollama({ host: base });
});

after(async () => {
  assert.equal(await d.stop(), 0, 'nurllamad did not exit 0 on SIGTERM');
});

const greedy = { temperature: 0, num_predict: 16 };

test('version (this ollama-js has no version(); plain fetch)', async () => {
  const v = await (await fetch(base + '/api/version')).json();
  assert.match(v.version, /^\d+\.\d+\.\d+/);
});

test('generate: streamed pieces equal the non-streamed response', async () => {
  const one = await client.generate({ model, prompt: 'Once upon a time', options: greedy });
  assert.equal(one.done, true);
  assert.ok(one.response.length > 0);
  assert.ok(Array.isArray(one.context));
  assert.equal(typeof one.eval_count, 'number');
  assert.equal(typeof one.total_duration, 'number');
  let text = '';
  let last;
  for await (const part of await client.generate({ model, prompt: 'Once upon a time', options: greedy, stream: true })) {
    text += part.response;
    last = part;
  }
  assert.equal(text, one.response);
  assert.equal(last.done, true);
  assert.ok(['stop', 'length'].includes(last.done_reason));
});

test('chat: streamed and not', async () => {
  const messages = [{ role: 'user', content: 'Tell me about a cat' }];
  const one = await client.chat({ model, messages, options: greedy });
  assert.equal(one.message.role, 'assistant');
  let text = '';
  for await (const part of await client.chat({ model, messages, options: greedy, stream: true })) {
    text += part.message.content;
  }
  assert.equal(text, one.message.content);
});

test('show and ps', async () => {
  const info = await client.show({ model });
  assert.equal(info.details.family, 'llama');
  assert.equal(info.model_info['general.architecture'], 'llama');
  const ps = await client.ps();
  assert.ok(ps.models.some((m) => m.name === model && typeof m.size === 'number' && m.expires_at));
});

test('errors come back as ResponseError with the status', async () => {
  await assert.rejects(client.generate({ model: 'no-such-model', prompt: 'x' }), (e) => {
    assert.equal(e.status_code, 404);
    assert.match(e.error, /model 'no-such-model' not found/);
    return true;
  });
  await assert.rejects(client.generate({ model, prompt: 'x', options: { top_k: 'many' } }), (e) => {
    assert.equal(e.status_code, 400);
    return true;
  });
});

test('abort() stops a running stream and the daemon keeps serving', async () => {
  const stream = await client.generate({ model, prompt: 'Once', options: { num_predict: 100000 }, stream: true });
  let n = 0;
  try {
    for await (const _ of stream) {
      if (++n === 3) stream.abort();
    }
  } catch (e) {
    assert.equal(e.name, 'AbortError');
  }
  assert.ok(n >= 3);
  for (let i = 0; i < 100 && !d.log().includes('request cancelled'); i++)
    await new Promise((r) => setTimeout(r, 50));
  assert.match(d.log(), /request cancelled/);
  const again = await client.generate({ model, prompt: 'Hi', options: greedy });
  assert.equal(again.done, true);
});

// ---- structured output, tools, thinking, log-probabilities ---------------------------------

const qwen2 = join(dirname(model), 'qwen2-F16-embQ4_0.gguf');
const qwen3 = join(dirname(model), 'qwen3-F16-embQ4_0.gguf');
const noise = { temperature: 1, top_k: 0, top_p: 1, seed: 11, num_predict: 2000 };
const person = {
  type: 'object',
  properties: {
    name: { type: 'string', maxLength: 24 },
    age: { type: 'integer', minimum: 0, maximum: 120 },
    tags: { type: 'array', items: { enum: ['a', 'b', 'c'] }, maxItems: 3 },
  },
  required: ['name', 'age', 'tags'],
};
const tools = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Weather for a city',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  },
];

function checkPerson(doc) {
  assert.equal(typeof doc.name, 'string');
  assert.ok(Number.isInteger(doc.age) && doc.age >= 0 && doc.age <= 120, JSON.stringify(doc));
  assert.ok(Array.isArray(doc.tags) && doc.tags.length <= 3 && doc.tags.every((t) => ['a', 'b', 'c'].includes(t)));
  assert.deepEqual(Object.keys(doc), ['name', 'age', 'tags']); // declaration order
}

test('format: "json" and a schema hold on noise, streamed and not', async () => {
  const g = await client.generate({ model, prompt: 'Once upon a time', format: 'json', options: noise });
  assert.equal(g.done_reason, 'stop');
  const doc = JSON.parse(g.response);
  assert.ok(doc !== null && typeof doc === 'object' && !Array.isArray(doc), g.response);  // an object, as ollama's "json"
  const one = await client.generate({ model: qwen2, prompt: 'Describe a person.', format: person, options: noise });
  checkPerson(JSON.parse(one.response));
  let text = '';
  const stream = await client.chat({
    model: qwen2,
    messages: [{ role: 'user', content: 'Describe a person.' }],
    format: person,
    options: { ...noise, seed: 12 },
    stream: true,
  });
  for await (const part of stream) text += part.message.content;
  checkPerson(JSON.parse(text));
});

test('a schema we cannot compile is a 400 naming the keyword', async () => {
  await assert.rejects(
    client.generate({ model: qwen2, prompt: 'x', format: { type: 'object', not: { required: ['a'] } } }),
    (e) => e.status_code === 400 && /"not"/.test(e.error),
  );
  await assert.rejects(client.generate({ model: qwen2, prompt: 'x', format: 'yaml' }), (e) => e.status_code === 400);
});

test('tools: definitions and the call history reach the template; a template without tools is refused', async () => {
  const r = await client.chat({ model: qwen2, messages: [{ role: 'user', content: 'Weather?' }], tools, options: { num_predict: 4 } });
  assert.equal(r.done, true);
  const history = [
    { role: 'user', content: 'Weather in Paris?' },
    { role: 'assistant', content: '', tool_calls: [{ function: { name: 'get_weather', arguments: { city: 'Paris' } } }] },
    { role: 'tool', content: '22C', tool_name: 'get_weather' },
  ];
  const dbg = await (
    await fetch(base + '/api/chat', {
      method: 'POST',
      body: JSON.stringify({ model: qwen2, messages: history, tools, stream: false, _debug_render_only: true }),
    })
  ).json();
  const rendered = dbg.debug_info.rendered_template;
  assert.match(rendered, /<tools>\n\{"type": "function", "function": \{"name": "get_weather"/);
  assert.match(rendered, /<tool_call>\n\{"name": "get_weather", "arguments": \{"city": "Paris"\}\}\n<\/tool_call>/);
  assert.match(rendered, /<tool_response>\n22C\n<\/tool_response>/);
  await assert.rejects(client.chat({ model, messages: [{ role: 'user', content: 'x' }], tools }), (e) => {
    assert.equal(e.status_code, 400);
    assert.match(e.error, /does not support tools/);
    return true;
  });
  const show = await client.show({ model: qwen2 });
  assert.ok(show.capabilities.includes('tools') && show.capabilities.includes('completion'));
  assert.ok(!show.capabilities.includes('thinking'));
  assert.ok((await client.show({ model: qwen3 })).capabilities.includes('thinking'));
  assert.ok(!(await client.show({ model })).capabilities.includes('tools'));
  // insert (fill-in-the-middle): qwen2's vocabulary has FIM tokens, stories260K's has none.
  assert.ok(show.capabilities.includes('insert'));
  assert.ok(!(await client.show({ model })).capabilities.includes('insert'));
});

test('think: reasoning goes to message.thinking, never into content; think:false switches it off', async () => {
  // With a format, the reasoning block opens first (free text) and the answer is constrained after it;
  // a noise model never closes the block in 24 tokens, so everything it wrote is reasoning.
  const r = await client.chat({
    model: qwen3,
    messages: [{ role: 'user', content: 'Think first.' }],
    think: true,
    format: 'json',
    options: { ...noise, num_predict: 24 },
  });
  assert.ok(r.message.thinking.length > 0);
  assert.equal(r.message.content, '');
  let thinking = '';
  let content = '';
  for await (const part of await client.chat({
    model: qwen3,
    messages: [{ role: 'user', content: 'Think first.' }],
    think: true,
    format: 'json',
    options: { ...noise, num_predict: 24 },
    stream: true,
  })) {
    thinking += part.message.thinking ?? '';
    content += part.message.content;
  }
  assert.equal(thinking, r.message.thinking);
  assert.equal(content, '');
  const off = await (
    await fetch(base + '/api/chat', {
      method: 'POST',
      body: JSON.stringify({ model: qwen3, messages: [{ role: 'user', content: 'x' }], think: false, stream: false, _debug_render_only: true }),
    })
  ).json();
  assert.match(off.debug_info.rendered_template, /<\|im_start\|>assistant\n<think>\n\n<\/think>\n\n$/);
  await assert.rejects(client.chat({ model: qwen2, messages: [{ role: 'user', content: 'x' }], think: true }), (e) => {
    assert.equal(e.status_code, 400);
    assert.match(e.error, /does not support thinking/);
    return true;
  });
});

test('logprobs and top_logprobs in ollama\'s shape; out of range is a 400', async () => {
  const r = await client.generate({ model, prompt: 'Once', logprobs: true, top_logprobs: 2, options: greedy });
  assert.equal(r.logprobs.length, r.eval_count);
  for (const lp of r.logprobs) {
    assert.equal(lp.top_logprobs.length, 2);
    assert.equal(lp.top_logprobs[0].token, lp.token); // greedy: the pick is the most likely
    assert.ok(lp.logprob <= 0 && Array.isArray(lp.bytes));
  }
  await assert.rejects(client.generate({ model, prompt: 'x', logprobs: true, top_logprobs: 21 }), (e) => e.status_code === 400);
});
