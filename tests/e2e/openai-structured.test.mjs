// End-to-end test of structured output, tool calls and reasoning on /v1 with the npm `openai`
// package (6.x), unchanged, against a real nurllamad and the qwen2/qwen3 test models, whose free
// text is noise: response_format (json_schema, json_object), tools forced with tool_choice
// ("required", a named function) with no content beside the calls, streamed tool calls through
// the SDK's stream helper, a tool round trip, the prompt the native route renders, documents and
// arguments in their schema's key order, reasoning_effort → reasoning_content, the 400s for
// templates without tools or thinking, and /v1/responses with text.format and tools. Documents are
// checked by the independent validator in json-check.mjs.
//
// usage: node openai-structured.test.mjs DAEMON TESTDATA   (after `npm ci` in this directory)
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';

import { importClient, startDaemon, testArgs } from './daemon.mjs';
import { addParams, assertDeclaredOrder, assertValidText, declared, models, nativeRender, paramsOf, person, selfCheck, weatherParams } from './structured-fixtures.mjs';

const { default: OpenAI } = await importClient('openai');
const [daemonPath, testdata] = testArgs('openai-structured.test.mjs', 'DAEMON', 'TESTDATA');
const { qwen2, qwen3, stories } = models(testdata);
// Sampling that keeps the models' noise: the whole vocabulary, temperature 1, a fixed seed.
const noise = (seed) => ({ temperature: 1, top_p: 1, seed, options: { top_k: 0 } });
const tools = [
  { type: 'function', function: { name: 'get_weather', description: 'Weather for a city', parameters: weatherParams, strict: true } },
  { type: 'function', function: { name: 'add', description: 'Adds two integers', parameters: addParams, strict: true } },
];
const ask = [{ role: 'user', content: 'What is the weather in Paris for the next two days?' }];

let d, client;

before(async () => {
  selfCheck();
  d = await startDaemon(daemonPath);
  client = new OpenAI({ apiKey: 'sk-ignored-while-auth-is-off', baseURL: d.base + '/v1', maxRetries: 0 });
});

after(async () => {
  assert.equal(await d.stop(), 0, 'nurllamad did not exit 0 on SIGTERM');
});

// A call in the SDK's non-streamed shape, valid against its function's schema.
function checkCall(c, names = Object.keys(paramsOf)) {
  assert.equal(typeof c.id, 'string');
  assert.ok(c.id.length > 0);
  assert.equal(c.type, 'function');
  assert.ok(names.includes(c.function.name), c.function.name);
  assert.equal(typeof c.function.arguments, 'string');
  return assertValidText(paramsOf[c.function.name], c.function.arguments, c.function.name);
}

test('response_format json_schema: the content validates, streamed and not (qwen2, qwen3)', async () => {
  const response_format = { type: 'json_schema', json_schema: { name: 'person', schema: person, strict: true } };
  for (const [model, seed] of [[qwen2, 1], [qwen2, 2], [qwen3, 3]]) {
    const r = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Describe a person.' }],
      response_format, max_tokens: 600, ...noise(seed) });
    assert.equal(r.choices[0].finish_reason, 'stop', r.choices[0].message.content);
    assertValidText(person, r.choices[0].message.content, `seed ${seed}`);
    let text = '';
    for await (const c of await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Describe a person.' }],
      response_format, max_tokens: 600, ...noise(seed), stream: true }))
      text += c.choices[0]?.delta?.content ?? '';
    assert.equal(text, r.choices[0].message.content);  // the same seed: the same document
  }
});

// OpenAI's JSON mode (like ollama's format "json") gives an object, never a bare value.
test('response_format json_object: a JSON object, streamed and not', async () => {
  for (const seed of [4, 5]) {
    const req = { model: qwen2, messages: [{ role: 'user', content: 'JSON please.' }],
      response_format: { type: 'json_object' }, max_tokens: 1500, ...noise(seed) };
    const r = await client.chat.completions.create(req);
    assert.equal(r.choices[0].finish_reason, 'stop');
    const doc = JSON.parse(r.choices[0].message.content);
    assert.ok(doc !== null && typeof doc === 'object' && !Array.isArray(doc), r.choices[0].message.content);
    let text = '';
    for await (const chunk of await client.chat.completions.create({ ...req, stream: true }))
      text += chunk.choices[0]?.delta?.content ?? '';
    assert.equal(text, r.choices[0].message.content);
  }
});

test('tools, tool_choice "required": tool_calls with ids, JSON-string arguments valid against the function', async () => {
  for (const [model, seed] of [[qwen2, 6], [qwen3, 7]]) {
    const r = await client.chat.completions.create({ model, messages: ask, tools, tool_choice: 'required', max_tokens: 400, ...noise(seed) });
    const c = r.choices[0];
    assert.equal(c.finish_reason, 'tool_calls', JSON.stringify(c));
    assert.equal(c.message.content, null);
    assert.ok(c.message.tool_calls.length >= 1);
    for (const call of c.message.tool_calls) checkCall(call);
    assert.equal(new Set(c.message.tool_calls.map((x) => x.id)).size, c.message.tool_calls.length);  // ids unique
  }
});

// A forced reply is calls only: no content at all (not even whitespace), streamed or not.
test('a forced call has no content before it (content null, no content deltas)', async () => {
  for (const seed of [20, 21, 22, 23, 24, 25]) {
    const req = { model: qwen2, messages: ask, tools, tool_choice: 'required', max_tokens: 400, ...noise(seed) };
    const c = (await client.chat.completions.create(req)).choices[0];
    assert.equal(c.finish_reason, 'tool_calls');
    assert.equal(c.message.content, null, `seed ${seed}: ${JSON.stringify(c.message)}`);
    let content = '';
    for await (const chunk of await client.chat.completions.create({ ...req, stream: true }))
      content += chunk.choices[0]?.delta?.content ?? '';
    assert.equal(content, '', `seed ${seed}`);
  }
});

test('a schema\'s properties come out in the order it declares them (chat, responses, tool arguments)', async () => {
  for (const [model, seed] of [[qwen2, 26], [qwen3, 27]]) {
    const r = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'x' }], max_tokens: 300, ...noise(seed),
      response_format: { type: 'json_schema', json_schema: { name: 'declared', schema: declared, strict: true } } });
    assertDeclaredOrder(JSON.parse(r.choices[0].message.content), `chat ${seed}`);
    const o = await client.responses.create({ model, input: 'x', max_output_tokens: 300, ...noise(seed),
      text: { format: { type: 'json_schema', name: 'declared', schema: declared, strict: true } } });
    assertDeclaredOrder(JSON.parse(o.output_text), `responses ${seed}`);
    const t = await client.chat.completions.create({ model, messages: ask, max_tokens: 300, ...noise(seed),
      tools: [{ type: 'function', function: { name: 'fill', parameters: declared } }],
      tool_choice: { type: 'function', function: { name: 'fill' } }, parallel_tool_calls: false });
    assertDeclaredOrder(JSON.parse(t.choices[0].message.tool_calls[0].function.arguments), `tool ${seed}`);
  }
});

test('tools, a named function with parallel_tool_calls false: exactly that call (the SDK\'s parse())', async () => {
  for (const seed of [8, 9]) {
    // parse(): the SDK parses the arguments of strict tools itself.
    const r = await client.chat.completions.parse({ model: qwen2, messages: ask, tools, max_tokens: 400, ...noise(seed),
      tool_choice: { type: 'function', function: { name: 'add' } }, parallel_tool_calls: false });
    const c = r.choices[0];
    assert.equal(c.finish_reason, 'tool_calls');
    assert.equal(c.message.tool_calls.length, 1);
    const args = checkCall(c.message.tool_calls[0], ['add']);
    assert.deepEqual(c.message.tool_calls[0].function.parsed_arguments, args);
  }
});

test('streamed tool calls: deltas with index, the stream helper assembles the non-streamed calls', async () => {
  const req = { model: qwen2, messages: ask, tools, tool_choice: 'required', max_tokens: 400, ...noise(10) };
  const one = (await client.chat.completions.create(req)).choices[0];
  const stream = client.chat.completions.stream(req);
  const done = [];
  stream.on('tool_calls.function.arguments.done', (e) => done.push(e));
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  const final = await stream.finalChatCompletion();
  const deltas = chunks.flatMap((c) => c.choices[0]?.delta?.tool_calls ?? []);
  assert.ok(deltas.length >= 1);
  for (const t of deltas) {
    assert.equal(typeof t.index, 'number');
    assert.equal(t.type, 'function');
    assert.ok(t.id && t.function.name);
  }
  assert.deepEqual(deltas.map((t) => t.index), [...deltas.keys()]);
  assert.equal(chunks.filter((c) => c.choices[0]?.finish_reason).at(-1).choices[0].finish_reason, 'tool_calls');
  const fc = final.choices[0];
  assert.equal(fc.finish_reason, 'tool_calls');
  const strip = (calls) => calls.map((x) => ({ type: x.type, name: x.function.name, arguments: x.function.arguments }));
  assert.deepEqual(strip(fc.message.tool_calls), strip(one.message.tool_calls));  // the same seed: the same calls
  for (const call of fc.message.tool_calls) checkCall(call);
  // strict tools: the helper parses each call's arguments when it completes.
  assert.equal(done.length, fc.message.tool_calls.length);
  done.forEach((e, i) => assert.deepEqual(e.parsed_arguments, JSON.parse(fc.message.tool_calls[i].function.arguments)));
});

test('a tool round trip: the call and its result go back through the template, the model answers', async () => {
  const first = (await client.chat.completions.create({ model: qwen2, messages: ask, tools, max_tokens: 400, ...noise(11),
    tool_choice: { type: 'function', function: { name: 'get_weather' } }, parallel_tool_calls: false })).choices[0].message;
  const call = first.tool_calls[0];
  checkCall(call, ['get_weather']);
  const history = [...ask, { role: 'assistant', content: null, tool_calls: first.tool_calls },
    { role: 'tool', tool_call_id: call.id, content: '22C and sunny' }];
  const r = await client.chat.completions.create({ model: qwen2, messages: history, tools, max_tokens: 4, ...noise(12) });
  assert.ok(['length', 'stop', 'tool_calls'].includes(r.choices[0].finish_reason));
  // The native route renders the same conversation (here with a call written by hand): the call
  // and the result are in the prompt, and /v1 counts the same prompt tokens.
  const fixed = [...ask, { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function',
    function: { name: 'get_weather', arguments: '{"city":"Paris","days":2}' } }] },
    { role: 'tool', tool_call_id: 'call_1', content: '22C and sunny' }];
  const r2 = await client.chat.completions.create({ model: qwen2, messages: fixed, tools, max_tokens: 2, ...noise(12) });
  // (/v1 passes name, description and parameters of a tool to the template; strict is not for it.)
  const native = await nativeRender(d.base, qwen2, [...ask,
    { role: 'assistant', content: '', tool_calls: [{ function: { name: 'get_weather', arguments: { city: 'Paris', days: 2 } } }] },
    { role: 'tool', content: '22C and sunny', tool_name: 'get_weather' }],
  tools.map(({ type, function: { name, description, parameters } }) => ({ type, function: { name, description, parameters } })));
  assert.ok(native.rendered.includes('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 2}}\n</tool_call>'), native.rendered);
  assert.ok(native.rendered.includes('<tool_response>\n22C and sunny\n</tool_response>'));
  assert.ok(r2.usage.prompt_tokens > 0);
  // A tool message must name the call it answers.
  await assert.rejects(client.chat.completions.create({ model: qwen2, messages: [...ask, { role: 'tool', content: 'x' }], tools }),
    (e) => e instanceof OpenAI.BadRequestError && /tool_call_id/.test(e.message));
});

// Tools (and their schemas) reach the template with their keys as the client wrote them, as on
// the native route: the same prompt, token for token.
test('a /v1 conversation with tools renders the prompt the native route renders', async () => {
  const msgs = [...ask, { role: 'user', content: 'x' }];
  const r = await client.chat.completions.create({ model: qwen2, messages: msgs, tools, max_tokens: 1 });
  const native = await nativeRender(d.base, qwen2, msgs,
    tools.map(({ type, function: { name, description, parameters } }) => ({ type, function: { name, description, parameters } })));
  assert.equal(r.usage.prompt_tokens, native.n_tokens);
});

test('reasoning_effort on qwen3: reasoning_content apart from content, streamed and not; qwen2 refuses', async () => {
  // A format opens the reasoning block first (free text), the answer is constrained after it; a
  // noise model never closes the block in 24 tokens, so all it wrote is reasoning.
  const req = { model: qwen3, messages: [{ role: 'user', content: 'Think first.' }], reasoning_effort: 'low',
    response_format: { type: 'json_object' }, max_tokens: 24, ...noise(13) };
  const m = (await client.chat.completions.create(req)).choices[0].message;
  assert.equal(typeof m.reasoning_content, 'string');
  assert.ok(m.reasoning_content.length > 0);
  assert.equal(m.content, '');
  let reasoning = '';
  let content = '';
  for await (const c of await client.chat.completions.create({ ...req, stream: true })) {
    reasoning += c.choices[0]?.delta?.reasoning_content ?? '';
    content += c.choices[0]?.delta?.content ?? '';
  }
  assert.equal(reasoning, m.reasoning_content);
  assert.equal(content, '');
  await assert.rejects(client.chat.completions.create({ model: qwen2, messages: ask, reasoning_effort: 'high' }), (e) => {
    assert.ok(e instanceof OpenAI.BadRequestError);
    assert.match(e.message, /does not support thinking/);
    return true;
  });
});

test('a model whose template has no tools: a 400 the SDK raises as BadRequestError', async () => {
  await assert.rejects(client.chat.completions.create({ model: stories, messages: ask, tools }), (e) => {
    assert.ok(e instanceof OpenAI.BadRequestError);
    assert.equal(e.status, 400);
    assert.ok(e.message.includes(`"${stories}" does not support tools`), e.message);
    return true;
  });
});

test('responses: text.format json_schema validates, streamed and not', async () => {
  const req = { model: qwen2, input: 'Describe a person.', max_output_tokens: 600, ...noise(14),
    text: { format: { type: 'json_schema', name: 'person', schema: person, strict: true } } };
  const r = await client.responses.create(req);
  assert.equal(r.status, 'completed');
  assertValidText(person, r.output_text, 'responses');
  assert.equal(r.text.format.type, 'json_schema');
  let text = '';
  for await (const ev of await client.responses.create({ ...req, stream: true }))
    if (ev.type === 'response.output_text.delta') text += ev.delta;
  assert.equal(text, r.output_text);
});

test('responses: tools forced → function_call output items, streamed and not', async () => {
  const rtools = tools.map((t) => ({ type: 'function', ...t.function }));
  const req = { model: qwen3, input: ask[0].content, tools: rtools, tool_choice: 'required', max_output_tokens: 400, ...noise(15) };
  const r = await client.responses.create(req);
  assert.equal(r.status, 'completed');
  const calls = r.output.filter((o) => o.type === 'function_call');
  assert.ok(calls.length >= 1, JSON.stringify(r.output));
  for (const c of calls) {
    assert.ok(c.call_id && c.id);
    assert.equal(c.status, 'completed');
    assertValidText(paramsOf[c.name], c.arguments, c.name);
  }
  const done = [];
  for await (const ev of await client.responses.create({ ...req, stream: true }))
    if (ev.type === 'response.output_item.done' && ev.item.type === 'function_call') done.push(ev.item);
  assert.deepEqual(done.map((c) => [c.name, c.arguments]), calls.map((c) => [c.name, c.arguments]));
});

test('responses: reasoning.effort on qwen3 → a reasoning item apart from the message, streamed and not', async () => {
  const req = { model: qwen3, input: 'Think first.', reasoning: { effort: 'low' }, text: { format: { type: 'json_object' } },
    max_output_tokens: 24, ...noise(16) };
  const r = await client.responses.create(req);
  assert.deepEqual(r.output.map((o) => o.type), ['reasoning', 'message']);
  const reasoning = r.output[0].content.map((c) => c.text).join('');
  assert.ok(reasoning.length > 0);
  assert.equal(r.output_text, '');
  let streamed = '';
  let text = '';
  for await (const ev of await client.responses.create({ ...req, stream: true })) {
    if (ev.type === 'response.reasoning_text.delta') streamed += ev.delta;
    if (ev.type === 'response.output_text.delta') text += ev.delta;
  }
  assert.equal(streamed, reasoning);
  assert.equal(text, '');
});

test('the daemon logs the reply formats it chose from each template when the model loads', () => {
  const log = d.log();
  assert.match(log, /loaded [^\n]*qwen2-F16-embQ4_0[^\n]*\btools=hermes thinking=none\)/);
  assert.match(log, /loaded [^\n]*qwen3-F16-embQ4_0[^\n]*\btools=hermes thinking=think\)/);
});
