// End-to-end test with the npm `openai` package (6.x), unchanged, against a real nurllamad:
// every /v1 route — chat completions (streamed and not, usage, stop, logprobs, the options
// extension), completions (echo, suffix: fill-in-the-middle with FIM tokens, else a 400), embeddings (float and base64, dimensions, token ids),
// responses (streamed and not), models (list, retrieve, case-insensitive ids), errors as the
// SDK's typed errors, and abort() freeing the slot. Greedy text is checked against llama.cpp's
// recorded continuation for stories260K (shared/testdata/golden): with no chat template, a
// single user message is the prompt itself.
//
// usage: node openai-js.test.mjs DAEMON TESTDATA   (after `npm ci` in this directory)
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';

import { eventually, greedyPrefix, importClient, startDaemon, testArgs } from './daemon.mjs';

const { default: OpenAI } = await importClient('openai');
const [daemonPath, testdata] = testArgs('openai-js.test.mjs', 'DAEMON', 'TESTDATA');
const model = resolve(join(testdata, 'models', 'stories260K.gguf'));
const golden = JSON.parse(readFileSync(join(testdata, 'golden', 'stories260K.json'), 'utf8')).results[0];
const prefix = greedyPrefix(golden);
// Greedy and without ollama's default repeat penalty, as llama.cpp recorded it.
const greedy = { temperature: 0, options: { repeat_penalty: 1 } };

let d, client;

before(async () => {
  d = await startDaemon(daemonPath);
  client = new OpenAI({ apiKey: 'sk-ignored-while-auth-is-off', baseURL: d.base + '/v1', maxRetries: 0 });
});

after(async () => {
  assert.equal(await d.stop(), 0, 'nurllamad did not exit 0 on SIGTERM');
});

const user = [{ role: 'user', content: golden.text }];

test('chat: llama.cpp\'s greedy text, usage, finish_reason length', async () => {
  const r = await client.chat.completions.create({ model, messages: user, max_tokens: 32, ...greedy });
  assert.match(r.id, /^chatcmpl-/);
  assert.equal(r.object, 'chat.completion');
  assert.equal(r.model, model);
  const c = r.choices[0];
  assert.equal(c.message.role, 'assistant');
  assert.ok(prefix.length > 10);
  assert.ok(c.message.content.startsWith(prefix), JSON.stringify({ got: c.message.content, prefix }));
  assert.equal(c.finish_reason, 'length');
  assert.deepEqual(r.usage, { prompt_tokens: golden.n_prompt_tokens, completion_tokens: 32, total_tokens: golden.n_prompt_tokens + 32 });
});

test('chat stream: role first, finish_reason apart, a usage chunk with no choices', async () => {
  const one = await client.chat.completions.create({ model, messages: user, max_tokens: 20, ...greedy });
  const stream = await client.chat.completions.create({
    model, messages: user, max_tokens: 20, ...greedy, stream: true, stream_options: { include_usage: true } });
  const chunks = [];
  for await (const c of stream) chunks.push(c);
  assert.equal(chunks[0].choices[0].delta.role, 'assistant');
  assert.ok(chunks.slice(1).every((c) => !c.choices.length || c.choices[0].delta.role === undefined));
  const text = chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('');
  assert.equal(text, one.choices[0].message.content);
  const fin = chunks.filter((c) => c.choices[0]?.finish_reason);
  assert.equal(fin.length, 1);
  assert.equal(fin[0].choices[0].finish_reason, 'length');
  assert.equal(fin[0].choices[0].delta.content, undefined);
  const last = chunks.at(-1);
  assert.deepEqual(last.choices, []);
  assert.deepEqual(last.usage, one.usage);
  assert.ok(chunks.every((c) => c.id === chunks[0].id && c.object === 'chat.completion.chunk'));
});

test('chat: stop cuts the text, seed makes sampling repeatable', async () => {
  const full = (await client.chat.completions.create({ model, messages: user, max_tokens: 32, ...greedy }))
    .choices[0].message.content;
  const stop = 'Lily';
  assert.ok(full.includes(stop));
  const r = await client.chat.completions.create({ model, messages: user, max_tokens: 32, stop: [stop], ...greedy });
  assert.equal(r.choices[0].message.content, full.slice(0, full.indexOf(stop)));
  assert.equal(r.choices[0].finish_reason, 'stop');
  const sampled = (seed) =>
    client.chat.completions.create({ model, messages: user, max_completion_tokens: 24, temperature: 1, top_p: 0.95, seed });
  const [a, b] = [await sampled(7), await sampled(7)];
  assert.equal(a.choices[0].message.content, b.choices[0].message.content);
});

test('chat: the options extension sets num_ctx (no Modelfile needed)', async () => {
  await client.chat.completions.create({ model, messages: user, max_tokens: 2, options: { num_ctx: 256 } });
  const ps = await (await fetch(d.base + '/api/ps')).json();
  assert.ok(ps.models.some((m) => m.context_length === 256), JSON.stringify(ps));
});

test('chat: logprobs in OpenAI\'s shape', async () => {
  const r = await client.chat.completions.create({ model, messages: user, max_tokens: 4, ...greedy, logprobs: true, top_logprobs: 2 });
  const lp = r.choices[0].logprobs;
  assert.ok(lp && Array.isArray(lp.content), JSON.stringify(r.choices[0]));
  for (const t of lp.content) {
    assert.equal(typeof t.token, 'string');
    assert.ok(t.logprob <= 0);
    assert.ok(Array.isArray(t.bytes));
    assert.equal(t.top_logprobs.length, 2);
  }
  if (lp.content.length === 0) console.log('# logprobs: the engine sends no per-token logprobs yet (shape only)');
  else assert.equal(lp.content.length, 4);
  await assert.rejects(client.chat.completions.create({ model, messages: user, logprobs: true, top_logprobs: 21 }),
    (e) => e instanceof OpenAI.BadRequestError && e.status === 400);
});

test('completions: greedy text, stream, echo; suffix is refused', async () => {
  const r = await client.completions.create({ model, prompt: golden.text, max_tokens: 32, ...greedy });
  assert.equal(r.object, 'text_completion');
  assert.ok(r.choices[0].text.startsWith(prefix), r.choices[0].text);
  assert.equal(r.usage.prompt_tokens, golden.n_prompt_tokens);
  let text = '';
  for await (const c of await client.completions.create({ model, prompt: golden.text, max_tokens: 32, ...greedy, stream: true }))
    text += c.choices[0]?.text ?? '';
  assert.equal(text, r.choices[0].text);
  const echo = await client.completions.create({ model, prompt: [golden.text], max_tokens: 32, echo: true, ...greedy });
  assert.equal(echo.choices[0].text, golden.text + r.choices[0].text);
  await assert.rejects(client.completions.create({ model, prompt: 'x', suffix: 'y' }),
    (e) => e instanceof OpenAI.BadRequestError && /fill-in-the-middle/.test(e.message));
});

// qwen2's vocabulary has <|fim_prefix|>/<|fim_suffix|>/<|fim_middle|>: `suffix` lays the prompt
// out with them. The oracle is the same layout written by hand as a raw /api/generate prompt:
// greedy, both must give the same tokens and text.
test('completions: suffix is fill-in-the-middle where the vocabulary has FIM tokens', async () => {
  const fim = resolve(join(testdata, 'models', 'qwen2-F16-embQ4_0.gguf'));
  const prompt = 'def add(a, b):\n    ';
  const suffix = '\n\nprint(add(1, 2))\n';
  const r = await client.completions.create({ model: fim, prompt, suffix, max_tokens: 12, ...greedy });
  const raw = await fetch(d.base + '/api/generate', {
    method: 'POST',
    body: JSON.stringify({
      model: fim, raw: true, stream: false,
      prompt: '<|fim_prefix|>' + prompt + '<|fim_suffix|>' + suffix + '<|fim_middle|>',
      options: { temperature: 0, repeat_penalty: 1, num_predict: 12 },
    }),
  }).then((x) => x.json());
  assert.equal(r.usage.prompt_tokens, raw.prompt_eval_count);
  assert.equal(r.choices[0].text, raw.response);
  const native = await fetch(d.base + '/api/generate', {
    method: 'POST',
    body: JSON.stringify({ model: fim, prompt, suffix, stream: false, options: { temperature: 0, repeat_penalty: 1, num_predict: 12 } }),
  }).then((x) => x.json());
  assert.equal(native.response, raw.response);
  const tok = async (content) =>
    (await fetch(d.base + '/tokenize', { method: 'POST', body: JSON.stringify({ model: fim, content }) }).then((x) => x.json())).tokens.length;
  assert.equal(r.usage.prompt_tokens, (await tok(prompt)) + (await tok(suffix)) + 3);
});

const norm = (v) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));

test('embeddings: base64 (the SDK default) equals float, equals /api/embed; dimensions; token ids', async () => {
  const b64 = await client.embeddings.create({ model, input: golden.text });
  const flt = await client.embeddings.create({ model, input: golden.text, encoding_format: 'float' });
  assert.equal(b64.object, 'list');
  assert.deepEqual(b64.data[0].embedding, flt.data[0].embedding);
  const native = await (await fetch(d.base + '/api/embed', { method: 'POST', body: JSON.stringify({ model, input: golden.text }) })).json();
  const v = flt.data[0].embedding;
  assert.equal(v.length, native.embeddings[0].length);
  assert.ok(v.every((x, i) => Math.abs(x - native.embeddings[0][i]) < 1e-6));
  assert.equal(flt.usage.prompt_tokens, golden.n_prompt_tokens);
  const cut = await client.embeddings.create({ model, input: ['a cat', 'a dog'], dimensions: 16, encoding_format: 'float' });
  assert.deepEqual(cut.data.map((e) => e.index), [0, 1]);
  for (const e of cut.data) {
    assert.equal(e.embedding.length, 16);
    assert.ok(Math.abs(norm(e.embedding) - 1) < 1e-5);
  }
  // The prompt's token ids (llama.cpp's) embed exactly like the text they came from.
  const ids = await client.embeddings.create({ model, input: golden.prompt_tokens, encoding_format: 'float' });
  assert.ok(ids.data[0].embedding.every((x, i) => Math.abs(x - v[i]) < 1e-6));
});

test('responses: output_text, incomplete at max_output_tokens, the event stream', async () => {
  const r = await client.responses.create({ model, input: golden.text, max_output_tokens: 32, ...greedy });
  assert.match(r.id, /^resp_/);
  assert.ok(r.output_text.startsWith(prefix), r.output_text);
  assert.equal(r.status, 'incomplete');
  assert.equal(r.incomplete_details.reason, 'max_output_tokens');
  assert.equal(r.usage.input_tokens, golden.n_prompt_tokens);
  const events = [];
  for await (const ev of await client.responses.create({ model, input: golden.text, max_output_tokens: 32, ...greedy, stream: true }))
    events.push(ev);
  assert.equal(events[0].type, 'response.created');
  assert.equal(events.at(-1).type, 'response.incomplete');
  assert.deepEqual(events.map((e) => e.sequence_number), events.map((_, i) => i));
  const deltas = events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta).join('');
  assert.equal(deltas, r.output_text);
  const withInstructions = await client.responses.create({
    model, instructions: 'Be brief.', input: [{ role: 'user', content: [{ type: 'input_text', text: 'Hi' }] }], max_output_tokens: 3 });
  assert.equal(withInstructions.instructions, 'Be brief.');
  assert.equal(withInstructions.output[0].type, 'message');
});

test('models: list and retrieve the store, names case-insensitive', async () => {
  const pulled = await d.unix('POST', '/api/pull', { model, stream: false });
  assert.equal(pulled.status, 200, pulled.text);
  const list = await client.models.list();
  const ids = list.data.map((m) => m.id);
  assert.ok(ids.includes('stories260k:latest'), JSON.stringify(ids));
  const m = await client.models.retrieve('Stories260K');
  assert.deepEqual([m.id, m.object, m.owned_by], ['stories260k:latest', 'model', 'library']);
  assert.equal(typeof m.created, 'number');
  await assert.rejects(client.models.retrieve('no-such-model'), (e) => e instanceof OpenAI.NotFoundError);
  const r = await client.chat.completions.create({ model: 'STORIES260K', messages: user, max_tokens: 32, ...greedy });
  assert.ok(r.choices[0].message.content.startsWith(prefix));
});

test('errors: the SDK\'s typed errors with OpenAI\'s error object', async () => {
  await assert.rejects(client.chat.completions.create({ model: 'no-such-model', messages: user }), (e) => {
    assert.ok(e instanceof OpenAI.NotFoundError);
    assert.equal(e.status, 404);
    assert.equal(e.code, 'model_not_found');
    assert.match(e.message, /no-such-model/);
    return true;
  });
  await assert.rejects(client.chat.completions.create({ model, messages: user, temperature: 5 }), (e) => {
    assert.ok(e instanceof OpenAI.BadRequestError);
    assert.equal(e.type, 'invalid_request_error');
    assert.match(e.message, /temperature/);
    return true;
  });
  await assert.rejects(client.chat.completions.create({ model, messages: user, n: 2 }), (e) => e.status === 400);
  await assert.rejects(client.chat.completions.create({ model, messages: [] }), (e) => e.status === 400);
});

test('abort() mid-stream frees the slot, the daemon keeps serving', async () => {
  const stream = await client.chat.completions.create({ model, messages: user, max_tokens: 100000, stream: true });
  let n = 0;
  for await (const _ of stream) {
    if (++n === 3) {
      stream.controller.abort();
      break;
    }
  }
  assert.equal(n, 3);
  assert.equal(await eventually(async () => (await d.metric('nurllama_active_sequences')) === 0), true);
  assert.match(d.log(), /request cancelled/);
  const again = await client.chat.completions.create({ model, messages: user, max_tokens: 2 });
  assert.equal(again.choices[0].finish_reason, 'length');
});
