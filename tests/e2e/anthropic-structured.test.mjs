// End-to-end test of tool use and thinking on /v1/messages with the npm `@anthropic-ai/sdk`,
// unchanged, against a real nurllamad and the qwen2/qwen3 test models, whose free text is noise:
// tools forced with tool_choice (any, a named tool) → tool_use blocks whose input validates,
// a tool_result round trip, streamed tool_use (input_json_delta assembled by the SDK's
// MessageStream), thinking → thinking blocks (never text), and the 400s for templates without
// tools or thinking. Documents are checked by the independent validator in json-check.mjs.
//
// usage: node anthropic-structured.test.mjs DAEMON TESTDATA   (after `npm ci` in this directory)
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';

import { importClient, startDaemon, testArgs } from './daemon.mjs';
import { addParams, assertValid, models, nativeRender, paramsOf, selfCheck, weatherParams } from './structured-fixtures.mjs';

const { default: Anthropic } = await importClient('@anthropic-ai/sdk');
const [daemonPath, testdata] = testArgs('anthropic-structured.test.mjs', 'DAEMON', 'TESTDATA');
const { qwen2, qwen3, stories } = models(testdata);
// Noise: the whole vocabulary at temperature 1; the seed through the ollama options extension.
const noise = (seed) => ({ temperature: 1, top_p: 1, top_k: 0, options: { seed } });
const tools = [
  { name: 'get_weather', description: 'Weather for a city', input_schema: weatherParams },
  { name: 'add', description: 'Adds two integers', input_schema: addParams },
];
const ask = [{ role: 'user', content: 'What is the weather in Paris for the next two days?' }];

let d, client;

before(async () => {
  selfCheck();
  d = await startDaemon(daemonPath);
  client = new Anthropic({ apiKey: 'sk-ant-ignored-while-auth-is-off', baseURL: d.base, maxRetries: 0 });
});

after(async () => {
  assert.equal(await d.stop(), 0, 'nurllamad did not exit 0 on SIGTERM');
});

function checkToolUse(b, names = Object.keys(paramsOf)) {
  assert.equal(b.type, 'tool_use');
  assert.equal(typeof b.id, 'string');
  assert.ok(b.id.length > 0);
  assert.ok(names.includes(b.name), b.name);
  assert.ok(b.input !== null && typeof b.input === 'object' && !Array.isArray(b.input), JSON.stringify(b.input));
  assertValid(paramsOf[b.name], b.input, b.name);
}

test('tool_choice any: tool_use blocks with valid input, stop_reason tool_use (qwen2, qwen3)', async () => {
  for (const [model, seed] of [[qwen2, 1], [qwen3, 2]]) {
    const m = await client.messages.create({ model, max_tokens: 400, messages: ask, tools, tool_choice: { type: 'any' }, ...noise(seed) });
    assert.equal(m.stop_reason, 'tool_use', JSON.stringify(m.content));
    const uses = m.content.filter((b) => b.type === 'tool_use');
    assert.ok(uses.length >= 1);
    uses.forEach((b) => checkToolUse(b));
    assert.equal(new Set(uses.map((b) => b.id)).size, uses.length);
    // (The call grammar lets whitespace come first, which stays a whitespace-only text block.)
    assert.ok(m.content.every((b) => b.type === 'tool_use' || (b.type === 'text' && b.text.trim() === '')), JSON.stringify(m.content));
  }
});

test('tool_choice tool with disable_parallel_tool_use: exactly one call of that tool', async () => {
  for (const seed of [3, 4]) {
    const m = await client.messages.create({ model: qwen2, max_tokens: 400, messages: ask, tools, ...noise(seed),
      tool_choice: { type: 'tool', name: 'add', disable_parallel_tool_use: true } });
    assert.equal(m.stop_reason, 'tool_use');
    const uses = m.content.filter((b) => b.type === 'tool_use');
    assert.equal(uses.length, 1);
    checkToolUse(uses[0], ['add']);
  }
});

test('a tool round trip: tool_use, then tool_result back through the template, then a reply', async () => {
  const first = await client.messages.create({ model: qwen2, max_tokens: 400, messages: ask, tools, ...noise(5),
    tool_choice: { type: 'tool', name: 'get_weather', disable_parallel_tool_use: true } });
  const use = first.content.find((b) => b.type === 'tool_use');
  checkToolUse(use, ['get_weather']);
  const messages = [...ask, { role: 'assistant', content: first.content },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: '22C and sunny' }] }];
  const m = await client.messages.create({ model: qwen2, max_tokens: 4, messages, tools, ...noise(6) });
  assert.equal(m.type, 'message');
  assert.ok(['max_tokens', 'end_turn', 'tool_use'].includes(m.stop_reason));
  const counted = await client.messages.countTokens({ model: qwen2, messages, tools });
  assert.equal(counted.input_tokens, m.usage.input_tokens);
  // The native route renders the same conversation: the call and its result are in the prompt.
  const native = await nativeRender(d.base, qwen2, [...ask,
    { role: 'assistant', content: '', tool_calls: [{ function: { name: 'get_weather', arguments: use.input } }] },
    { role: 'tool', content: '22C and sunny', tool_name: 'get_weather' }], tools.map((t) => ({
    type: 'function', function: { name: t.name, description: t.description, parameters: t.input_schema } })));
  assert.ok(native.rendered.includes('<tool_call>\n{"name": "get_weather", "arguments": {"city": '), native.rendered);
  assert.ok(native.rendered.includes('<tool_response>\n22C and sunny\n</tool_response>'));
  // (The prompt tokens differ from the native route's by the key order of the tools: see the
  // todo in openai-structured.test.mjs.)
});

test('streamed tool_use: input_json_delta events assemble into the non-streamed input', async () => {
  const req = { model: qwen2, max_tokens: 400, messages: ask, tools, tool_choice: { type: 'any' }, ...noise(7) };
  const one = await client.messages.create(req);
  const stream = client.messages.stream(req);
  const events = [];
  stream.on('streamEvent', (e) => events.push(e));
  const final = await stream.finalMessage();
  assert.equal(final.stop_reason, 'tool_use');
  const strip = (content) => content.filter((b) => b.type === 'tool_use').map((b) => ({ name: b.name, input: b.input }));
  assert.deepEqual(strip(final.content), strip(one.content));  // the same seed: the same calls
  final.content.filter((b) => b.type === 'tool_use').forEach((b) => checkToolUse(b));
  // Each tool_use block: start (input {}), input_json_delta parts that parse to the input, stop.
  for (const [i, b] of final.content.entries()) {
    if (b.type !== 'tool_use') continue;
    const start = events.find((e) => e.type === 'content_block_start' && e.index === i);
    assert.deepEqual(start.content_block, { type: 'tool_use', id: b.id, name: b.name, input: {} });
    const json = events.filter((e) => e.type === 'content_block_delta' && e.index === i).map((e) => {
      assert.equal(e.delta.type, 'input_json_delta');
      return e.delta.partial_json;
    }).join('');
    assert.deepEqual(JSON.parse(json), b.input);
    assert.ok(events.some((e) => e.type === 'content_block_stop' && e.index === i));
  }
  assert.equal(events.find((e) => e.type === 'message_delta').delta.stop_reason, 'tool_use');
});

test('thinking on qwen3: thinking blocks, never text, streamed and not; qwen2 refuses', async () => {
  // A forced call opens the reasoning block first (free text), the call is constrained after it;
  // a noise model never closes the block in 24 tokens, so all it wrote is thinking.
  const req = { model: qwen3, max_tokens: 24, messages: ask, tools, tool_choice: { type: 'any' }, ...noise(8),
    thinking: { type: 'enabled', budget_tokens: 1024 } };
  const m = await client.messages.create(req);
  const thinking = m.content.filter((b) => b.type === 'thinking');
  assert.equal(thinking.length, 1, JSON.stringify(m.content));
  assert.ok(thinking[0].thinking.length > 0);
  assert.equal(typeof thinking[0].signature, 'string');
  assert.equal(m.content.filter((b) => b.type === 'text').map((b) => b.text).join(''), '');
  assert.equal(m.stop_reason, 'max_tokens');
  const stream = client.messages.stream(req);
  let streamedThinking = '';
  let text = '';
  stream.on('thinking', (delta) => (streamedThinking += delta));
  stream.on('text', (delta) => (text += delta));
  const final = await stream.finalMessage();
  assert.equal(streamedThinking, thinking[0].thinking);
  assert.equal(text, '');
  assert.equal(final.content.find((b) => b.type === 'thinking').thinking, thinking[0].thinking);
  await assert.rejects(client.messages.create({ model: qwen2, max_tokens: 4, messages: ask, thinking: { type: 'enabled', budget_tokens: 1024 } }),
    (e) => e instanceof Anthropic.BadRequestError && /does not support thinking/.test(e.error.error.message));
});

test('a model whose template has no tools: a 400 the SDK raises as BadRequestError', async () => {
  await assert.rejects(client.messages.create({ model: stories, max_tokens: 4, messages: ask, tools }), (e) => {
    assert.ok(e instanceof Anthropic.BadRequestError);
    assert.equal(e.error.error.type, 'invalid_request_error');
    assert.equal(e.error.error.message, `"${stories}" does not support tools`);
    return true;
  });
});
