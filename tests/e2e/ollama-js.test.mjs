// End-to-end test with the npm `ollama` package, unchanged, against a real nurllamad:
// version, generate (streamed and not), chat, show, ps, embed-less errors (ResponseError with
// the HTTP status), abort() of a running stream, and the daemon still serving afterwards.
//
// usage: node ollama-js.test.mjs DAEMON MODEL   (after `npm ci` in this directory)
import { resolve } from 'node:path';
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';

import { startDaemon } from './daemon.mjs';

let Ollama;
try {
  ({ Ollama } = await import('ollama'));
} catch (e) {
  console.error('the npm "ollama" package is missing: run `npm ci` in tests/e2e (scripts/test.sh does)');
  process.exit(1);
}

const [daemonPath, modelArg] = process.argv.slice(2);
if (!daemonPath || !modelArg) {
  console.error('usage: node ollama-js.test.mjs DAEMON MODEL');
  process.exit(2);
}
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
