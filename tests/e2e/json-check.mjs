// A small JSON Schema validator for the end-to-end tests (the keywords the tests' schemas use:
// type, properties, required, additionalProperties, items, minItems/maxItems, enum, const,
// minLength/maxLength, minimum/maximum, anyOf/oneOf, $ref into $defs), written from the JSON
// Schema specification, independent of the daemon's grammar compiler. violations() lists what
// is wrong ("" path = the root); an empty list means the document is valid.

const typeOf = (v) =>
  v === null ? 'null' : Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer' : typeof v;

function typeMatches(want, v) {
  const t = typeOf(v);
  return t === want || (want === 'number' && t === 'integer');
}

function resolveRef(root, ref) {
  if (!ref.startsWith('#')) throw new Error(`unsupported $ref ${ref}`);
  let s = root;
  for (const part of ref.slice(1).split('/').filter(Boolean)) s = s[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  if (s === undefined) throw new Error(`$ref ${ref} points nowhere`);
  return s;
}

function check(root, schema, v, path, out) {
  if (schema === true || schema === undefined) return;
  if (schema === false) return void out.push(`${path}: no value is allowed here`);
  if (schema.$ref) return check(root, resolveRef(root, schema.$ref), v, path, out);
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!types.some((t) => typeMatches(t, v))) return void out.push(`${path}: ${JSON.stringify(v)} is not of type ${types}`);
  }
  if (schema.enum && !schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(v)))
    out.push(`${path}: ${JSON.stringify(v)} is not one of ${JSON.stringify(schema.enum)}`);
  if ('const' in schema && JSON.stringify(schema.const) !== JSON.stringify(v)) out.push(`${path}: not the const`);
  if (typeof v === 'string') {
    const n = [...v].length;
    if (schema.minLength !== undefined && n < schema.minLength) out.push(`${path}: shorter than ${schema.minLength}`);
    if (schema.maxLength !== undefined && n > schema.maxLength) out.push(`${path}: longer than ${schema.maxLength}`);
  }
  if (typeof v === 'number') {
    if (schema.minimum !== undefined && v < schema.minimum) out.push(`${path}: ${v} < ${schema.minimum}`);
    if (schema.maximum !== undefined && v > schema.maximum) out.push(`${path}: ${v} > ${schema.maximum}`);
  }
  if (Array.isArray(v)) {
    if (schema.minItems !== undefined && v.length < schema.minItems) out.push(`${path}: fewer than ${schema.minItems} items`);
    if (schema.maxItems !== undefined && v.length > schema.maxItems) out.push(`${path}: more than ${schema.maxItems} items`);
    if (schema.items !== undefined) v.forEach((x, i) => check(root, schema.items, x, `${path}[${i}]`, out));
  }
  if (typeOf(v) === 'object') {
    const props = schema.properties ?? {};
    for (const r of schema.required ?? []) if (!(r in v)) out.push(`${path}: "${r}" is required`);
    for (const [k, x] of Object.entries(v)) {
      if (k in props) check(root, props[k], x, `${path}.${k}`, out);
      else if (schema.additionalProperties !== undefined) check(root, schema.additionalProperties, x, `${path}.${k}`, out);
    }
  }
  for (const key of ['anyOf', 'oneOf']) {
    if (!schema[key]) continue;
    const ok = schema[key].filter((s) => {
      const sub = [];
      check(root, s, v, path, sub);
      return sub.length === 0;
    }).length;
    if (key === 'anyOf' ? ok === 0 : ok !== 1) out.push(`${path}: matches ${ok} of the ${key} alternatives`);
  }
}

export function violations(schema, doc) {
  const out = [];
  check(schema, schema, doc, '', out);
  return out;
}
