// End-to-end test of tool use and thinking on /v1/messages with the npm `@anthropic-ai/sdk`,
// unchanged, against a real nurllamad and the qwen2/qwen3 test models, whose free text is noise:
// tools forced with tool_choice (any, a named tool) → only tool_use blocks, whose input validates
// and keeps the schema's key order, a tool_result round trip (the prompt the native route
// renders), streamed tool_use (input_json_delta assembled by the SDK's MessageStream), thinking →
// thinking blocks (never text) ended by budget_tokens, and the 400s for templates without tools or
// thinking and for budgets Anthropic refuses. Documents are checked by the independent validator
// in json-check.mjs.
//
// usage: node anthropic-structured.test.mjs DAEMON TESTDATA   (after `npm ci` in this directory)
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';

import { importClient, startDaemon, testArgs } from './daemon.mjs';
import { addParams, assertDeclaredOrder, assertValid, declared, models, nativeRender, paramsOf, selfCheck, weatherParams } from './structured-fixtures.mjs';

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
    // A forced reply is tool_use blocks only: no text block, not even whitespace.
    assert.ok(m.content.every((b) => b.type === 'tool_use'), JSON.stringify(m.content));
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
  assert.equal(m.usage.input_tokens, native.n_tokens);  // the same prompt (tools in the client's key order)
});

test('forced tool_use: only tool_use blocks (several seeds, streamed and not), input keys in the schema\'s order', async () => {
  for (const seed of [20, 21, 22, 23]) {
    const req = { model: qwen2, max_tokens: 400, messages: ask, tools, tool_choice: { type: 'any' }, ...noise(seed) };
    const m = await client.messages.create(req);
    assert.deepEqual(m.content.map((b) => b.type), m.content.map(() => 'tool_use'), `seed ${seed}: ${JSON.stringify(m.content)}`);
    const final = await client.messages.stream(req).finalMessage();
    assert.deepEqual(final.content.map((b) => b.type), m.content.map(() => 'tool_use'), `seed ${seed} streamed`);
  }
  const fill = [{ name: 'fill', description: 'Fills the form', input_schema: declared }];
  for (const [model, seed] of [[qwen2, 24], [qwen3, 25]]) {
    const req = { model, max_tokens: 300, messages: ask, tools: fill, ...noise(seed),
      tool_choice: { type: 'tool', name: 'fill', disable_parallel_tool_use: true } };
    const m = await client.messages.create(req);
    assertDeclaredOrder(m.content[0].input, `${seed}`);
    const final = await client.messages.stream(req).finalMessage();
    assertDeclaredOrder(final.content[0].input, `${seed} streamed`);
  }
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

test('thinking on qwen3 with budget_tokens: a thinking block within the budget, then the forced call; streamed and not', async () => {
  // A noise model never ends its reasoning by itself: the budget ends it (the engine writes
  // </think>), and the forced call follows, constrained. Without the budget this reply would be
  // all thinking and stop at max_tokens.
  const budget = 1024;
  const req = { model: qwen3, max_tokens: budget + 300, messages: ask, tools, tool_choice: { type: 'any' }, ...noise(8),
    thinking: { type: 'enabled', budget_tokens: budget } };
  const m = await client.messages.create(req);
  assert.equal(m.stop_reason, 'tool_use', JSON.stringify(m.content).slice(0, 400));
  assert.equal(m.content[0].type, 'thinking');
  assert.equal(typeof m.content[0].signature, 'string');
  assert.ok(m.content.slice(1).length >= 1);
  m.content.slice(1).forEach((b) => checkToolUse(b));  // never a text block
  const thinking = m.content[0].thinking;
  assert.ok(thinking.length > 0);
  // The same conversation, seed and sampling without a budget, cut by max_tokens at `budget`
  // tokens (on /v1/chat/completions, which renders the same prompt): its reasoning is exactly
  // the thinking above. (Tokenizing noise again is no count: its pieces split differently.)
  const cut = await fetch(d.base + '/v1/chat/completions', { method: 'POST', body: JSON.stringify({
    model: qwen3, messages: ask, max_tokens: budget, temperature: 1, top_p: 1, seed: 8, options: { top_k: 0 },
    tools: tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.input_schema } })),
    tool_choice: 'required', reasoning_effort: 'high' }) }).then((x) => x.json());
  assert.equal(cut.choices[0].finish_reason, 'length');
  assert.equal(cut.usage.completion_tokens, budget);
  assert.equal(thinking, cut.choices[0].message.reasoning_content);
  assert.ok(m.usage.output_tokens > budget, `${m.usage.output_tokens} output tokens`);
  const stream = client.messages.stream(req);
  let streamedThinking = '';
  let text = '';
  stream.on('thinking', (delta) => (streamedThinking += delta));
  stream.on('text', (delta) => (text += delta));
  const final = await stream.finalMessage();
  assert.equal(streamedThinking, thinking);
  assert.equal(text, '');
  assert.equal(final.stop_reason, 'tool_use');
  assert.deepEqual(final.content.slice(1).map((b) => [b.name, b.input]), m.content.slice(1).map((b) => [b.name, b.input]));
});

test('thinking: budget_tokens as Anthropic checks it (at least 1024, below max_tokens); qwen2 refuses thinking', async () => {
  const bad = async (body, re) => assert.rejects(client.messages.create({ model: qwen3, messages: ask, ...body }),
    (e) => e instanceof Anthropic.BadRequestError && re.test(e.error.error.message));
  await bad({ max_tokens: 2000, thinking: { type: 'enabled', budget_tokens: 1023 } }, /budget_tokens: must be at least 1024/);
  await bad({ max_tokens: 1024, thinking: { type: 'enabled', budget_tokens: 1024 } }, /max_tokens must be greater than thinking.budget_tokens/);
  await assert.rejects(client.messages.create({ model: qwen2, max_tokens: 2000, messages: ask, thinking: { type: 'enabled', budget_tokens: 1024 } }),
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
