// What the structured-output end-to-end tests with the npm `openai` and `@anthropic-ai/sdk`
// packages share: the test models (random weights: their free text is noise, so only the
// constraint can make a reply parse), sampling that keeps them noisy, a schema and two tools with
// bounded values, and a check that a document validates.
import { join, resolve } from 'node:path';
import assert from 'node:assert/strict';

import { violations } from './json-check.mjs';

export function models(testdata) {
  const m = (f) => resolve(join(testdata, 'models', f));
  return {
    qwen2: m('qwen2-F16-embQ4_0.gguf'), // Qwen2.5 template: tools (<tool_call> JSON), no thinking
    qwen3: m('qwen3-F16-embQ4_0.gguf'), // Qwen3 template: tools and <think> blocks
    stories: m('stories260K.gguf'), // no chat template: neither tools nor thinking
  };
}

export const person = {
  type: 'object',
  properties: {
    name: { type: 'string', maxLength: 24 },
    age: { type: 'integer', minimum: 0, maximum: 120 },
    tags: { type: 'array', items: { enum: ['a', 'b', 'c'] }, maxItems: 3 },
    pet: { anyOf: [{ type: 'null' }, { type: 'object', properties: { kind: { enum: ['cat', 'dog'] } }, required: ['kind'], additionalProperties: false }] },
  },
  required: ['name', 'age', 'tags', 'pet'],
  additionalProperties: false,
};

export const weatherParams = {
  type: 'object',
  properties: { city: { type: 'string', maxLength: 16 }, days: { type: 'integer', minimum: 1, maximum: 7 } },
  required: ['city', 'days'],
  additionalProperties: false,
};
export const addParams = {
  type: 'object',
  properties: { a: { type: 'integer', minimum: -1000, maximum: 1000 }, b: { type: 'integer', minimum: -1000, maximum: 1000 } },
  required: ['a', 'b'],
  additionalProperties: false,
};
export const paramsOf = { get_weather: weatherParams, add: addParams };

// Properties declared out of alphabetical order, nested too: a document must write them in this
// order (the order the schema declares), whatever JSON type the server reads requests into.
export const declared = {
  type: 'object',
  properties: {
    zulu: { type: 'integer', minimum: 0, maximum: 9 },
    yankee: { type: 'boolean' },
    mike: {
      type: 'object',
      properties: { tango: { type: 'null' }, bravo: { enum: ['x', 'y'] } },
      required: ['tango', 'bravo'],
      additionalProperties: false,
    },
    alpha: { type: 'string', maxLength: 8 },
  },
  required: ['zulu', 'yankee', 'mike', 'alpha'],
  additionalProperties: false,
};

// Asserts that a document of `declared` (parsed) has its keys in the declared order.
export function assertDeclaredOrder(doc, what = '') {
  assertValid(declared, doc, what);
  assert.deepEqual(Object.keys(doc), Object.keys(declared.properties), `${what}: ${JSON.stringify(doc)}`);
  assert.deepEqual(Object.keys(doc.mike), Object.keys(declared.properties.mike.properties), `${what}: ${JSON.stringify(doc)}`);
}

// Asserts that `doc` (parsed) validates against `schema`.
export function assertValid(schema, doc, what = '') {
  const v = violations(schema, doc);
  assert.deepEqual(v, [], `${what} ${JSON.stringify(doc)}`);
}

// Parses JSON text and validates it.
export function assertValidText(schema, text, what = '') {
  let doc;
  assert.doesNotThrow(() => (doc = JSON.parse(text)), `${what}: not JSON: ${JSON.stringify(text)}`);
  assertValid(schema, doc, what);
  return doc;
}

// The validator itself must be able to fail.
export function selfCheck() {
  assert.ok(violations(person, { name: 'x', age: 1.5, tags: [], pet: null }).length > 0);
  assert.ok(violations(person, { name: 'x', age: 1, tags: ['d'], pet: null }).length > 0);
  assert.ok(violations(person, { name: 'x', age: 1, tags: [], pet: { kind: 'cow' } }).length > 0);
  assert.ok(violations(weatherParams, { city: 'Paris', days: 2, extra: 1 }).length > 0);
  assert.ok(violations(weatherParams, { city: 'Paris' }).length > 0);
  assert.deepEqual(violations(person, { name: 'x', age: 1, tags: ['a'], pet: { kind: 'cat' } }), []);
}

// The native route's rendering of a conversation (the oracle for what went through the template),
// and its token count.
export async function nativeRender(base, model, messages, tools) {
  const r = await fetch(base + '/api/chat', {
    method: 'POST',
    body: JSON.stringify({ model, messages, tools, stream: false, _debug_render_only: true }),
  }).then((x) => x.json());
  const rendered = r.debug_info.rendered_template;
  const tok = await fetch(base + '/tokenize', { method: 'POST', body: JSON.stringify({ model, content: rendered }) }).then((x) => x.json());
  return { rendered, n_tokens: tok.tokens.length };
}
