// End-to-end test with the npm `@anthropic-ai/sdk`, unchanged, against a real nurllamad:
// POST /v1/messages streamed (the SDK's MessageStream and the raw events) and not, stop
// sequences, count_tokens, errors as the SDK's typed errors, abort() freeing the slot. Greedy
// text is checked against llama.cpp's recorded continuation for stories260K
// (shared/testdata/golden): with no chat template, a single user message is the prompt itself.
//
// usage: node anthropic-js.test.mjs DAEMON TESTDATA   (after `npm ci` in this directory)
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';

import { eventually, greedyPrefix, importClient, startDaemon, testArgs } from './daemon.mjs';

const { default: Anthropic } = await importClient('@anthropic-ai/sdk');
const [daemonPath, testdata] = testArgs('anthropic-js.test.mjs', 'DAEMON', 'TESTDATA');
const model = resolve(join(testdata, 'models', 'stories260K.gguf'));
const golden = JSON.parse(readFileSync(join(testdata, 'golden', 'stories260K.json'), 'utf8')).results[0];
const prefix = greedyPrefix(golden);
const greedy = { temperature: 0, options: { repeat_penalty: 1 } };
const messages = [{ role: 'user', content: golden.text }];

let d, client;

before(async () => {
  d = await startDaemon(daemonPath);
  client = new Anthropic({ apiKey: 'sk-ant-ignored-while-auth-is-off', baseURL: d.base, maxRetries: 0 });
});

after(async () => {
  assert.equal(await d.stop(), 0, 'nurllamad did not exit 0 on SIGTERM');
});

test('messages: llama.cpp\'s greedy text, usage, stop_reason max_tokens', async () => {
  const m = await client.messages.create({ model, max_tokens: 32, messages, ...greedy });
  assert.match(m.id, /^msg_/);
  assert.equal(m.type, 'message');
  assert.equal(m.role, 'assistant');
  assert.equal(m.model, model);
  assert.equal(m.content[0].type, 'text');
  assert.ok(prefix.length > 10);
  assert.ok(m.content[0].text.startsWith(prefix), JSON.stringify({ got: m.content[0].text, prefix }));
  assert.equal(m.stop_reason, 'max_tokens');
  assert.equal(m.stop_sequence, null);
  assert.equal(m.usage.input_tokens, golden.n_prompt_tokens);
  assert.equal(m.usage.output_tokens, 32);
});

test('messages stream: MessageStream and the raw event sequence', async () => {
  const one = await client.messages.create({ model, max_tokens: 20, messages, ...greedy });
  let text = '';
  const stream = client.messages.stream({ model, max_tokens: 20, messages, ...greedy });
  stream.on('text', (t) => (text += t));
  const final = await stream.finalMessage();
  assert.equal(text, one.content[0].text);
  assert.equal(final.content[0].text, one.content[0].text);
  assert.equal(final.stop_reason, 'max_tokens');
  assert.equal(final.usage.output_tokens, 20);
  assert.equal(final.usage.input_tokens, golden.n_prompt_tokens);

  const types = [];
  for await (const ev of await client.messages.create({ model, max_tokens: 5, messages, ...greedy, stream: true }))
    types.push(ev.type);
  assert.deepEqual(types.slice(0, 2), ['message_start', 'content_block_start']);
  assert.ok(types.slice(2, -3).every((t) => t === 'content_block_delta'));
  assert.deepEqual(types.slice(-3), ['content_block_stop', 'message_delta', 'message_stop']);
});

test('messages: stop_sequences end the text with stop_reason stop_sequence', async () => {
  const full = (await client.messages.create({ model, max_tokens: 32, messages, ...greedy })).content[0].text;
  assert.ok(full.includes('Lily'));
  const m = await client.messages.create({ model, max_tokens: 32, messages, stop_sequences: ['Lily'], ...greedy });
  assert.equal(m.content[0].text, full.slice(0, full.indexOf('Lily')));
  assert.equal(m.stop_reason, 'stop_sequence');
  assert.equal(m.stop_sequence, 'Lily');
});

test('count_tokens equals the input_tokens of the same request', async () => {
  const req = { model, system: 'You tell stories.', messages };
  const counted = await client.messages.countTokens(req);
  const m = await client.messages.create({ ...req, max_tokens: 1 });
  assert.equal(typeof counted.input_tokens, 'number');
  assert.equal(counted.input_tokens, m.usage.input_tokens);
  assert.ok(counted.input_tokens > golden.n_prompt_tokens);  // the system prompt is counted too
});

test('errors: the SDK\'s typed errors with Anthropic\'s error object', async () => {
  await assert.rejects(client.messages.create({ model: 'no-such-model', max_tokens: 5, messages }), (e) => {
    assert.ok(e instanceof Anthropic.NotFoundError);
    assert.equal(e.status, 404);
    assert.equal(e.error.type, 'error');
    assert.equal(e.error.error.type, 'not_found_error');
    return true;
  });
  await assert.rejects(client.messages.create({ model, max_tokens: 5, messages, temperature: 2 }), (e) => {
    assert.ok(e instanceof Anthropic.BadRequestError);
    assert.equal(e.error.error.type, 'invalid_request_error');
    assert.match(e.error.error.message, /temperature/);
    return true;
  });
  await assert.rejects(client.messages.create({ model, max_tokens: 5, messages: [{ role: 'system', content: 'x' }] }),
    (e) => e instanceof Anthropic.BadRequestError);
});

test('abort() mid-stream frees the slot, the daemon keeps serving', async () => {
  const stream = client.messages.stream({ model, max_tokens: 100000, messages });
  let n = 0;
  await new Promise((done) => {
    stream.on('text', () => {
      if (++n === 3) stream.abort();
    });
    stream.on('abort', done);
    stream.on('end', done);
    stream.on('error', done);
  });
  assert.ok(n >= 3);
  assert.equal(await eventually(async () => (await d.metric('nurllama_active_sequences')) === 0), true);
  assert.match(d.log(), /request cancelled/);
  const again = await client.messages.create({ model, max_tokens: 2, messages });
  assert.equal(again.stop_reason, 'max_tokens');
});
