import Ajv from 'ajv';
import type Joi from 'joi';
import { protoKeyLabels } from './proto-keys';

/**
 * A joi object schema compiled into a JSON Schema check (ajv): for the bodies that come by the
 * thousand (a transfer batch holds 20,000 records, each checked on its own; a storage round's
 * write 10,000 samples of a dozen fields each), where joi's walk costs half a microsecond a field
 * and ajv's compiled function a hundredth of that.
 *
 * joi stays the one definition and the one judge: the check is made from the schema's own
 * description, and it only ever says yes to a value joi accepts unchanged, with joi's defaults
 * applied. Everything else (a value it refuses, or one joi would convert: "5" for 5, a JSON
 * string for an object) goes to joi, which gives the answer and the message. So the compiled
 * form covers only what JSON Schema states exactly; for any other schema there is no compiled
 * check and joi does it all.
 *
 * Covered: an object whose keys are all numbers (integer, min, max), strings (min, max, pattern)
 * or booleans, each optional or required, allowing null or not, with a literal default; or
 * objects of the same kind, or arrays (min, max, an empty default) of one item schema that is
 * either, or anything (`any()` without rules); an object may hold `xor` between keys of its own
 * without defaults.
 * joi's meanings, where JSON Schema's differ: a string's length in UTF-16 code units (ajv counts
 * code points) and its pattern with the regex's own flags (ajv uses one flag set for all), both
 * as keywords of this module's; an empty string is refused unless the min is 0; a number must be a
 * safe one, and -0 is returned as 0.
 */

/** What a compiled check answers: the value joi would return, or null for "ask joi". */
export type CompiledCheck = (value: unknown) => { value: unknown } | null;

interface Described {
  type: string;
  flags?: Record<string, unknown>;
  rules?: Array<{ name: string; args?: Record<string, unknown> }>;
  allow?: unknown[];
  keys?: Record<string, Described>;
  items?: Described[];
  dependencies?: Array<{ rel: string; peers: unknown[] }>;
  preferences?: Record<string, unknown>;
}

type JsonSchema = Record<string, unknown>;

const PLAIN_FLAGS = new Set(['presence', 'default', 'label', 'description']);
/** The parts of a description, a field's and an object's, that JSON Schema can state. */
const FIELD_PARTS = new Set(['type', 'flags', 'rules', 'allow', 'preferences']);
const OBJECT_PARTS = new Set(['type', 'flags', 'keys', 'dependencies', 'preferences']);
const ARRAY_PARTS = new Set(['type', 'flags', 'rules', 'items', 'preferences']);
const RULES: Record<string, ReadonlySet<string>> = {
  number: new Set(['integer', 'min', 'max']),
  string: new Set(['min', 'max', 'pattern']),
  boolean: new Set(),
};

const ajv = new Ajv({ allowUnionTypes: true, coerceTypes: false, useDefaults: false });
ajv.addKeyword({
  keyword: 'utf16Length',
  type: 'string',
  schemaType: 'object',
  compile:
    ({ min, max }: { min: number; max: number }) =>
    (s: string) =>
      s.length >= min && s.length <= max,
});
ajv.addKeyword({
  keyword: 'regExps',
  type: 'string',
  schemaType: 'array',
  compile: (sources: Array<[string, string]>) => {
    const regexes = sources.map(([source, flags]) => new RegExp(source, flags));
    return (s: string) => regexes.every((r) => r.test(s));
  },
});

/**
 * What `any()` takes as sent: not undefined (joi refuses it as a list's item), and holding no
 * field named `__proto__` at any depth, which validate() must find and refuse (proto-keys.ts) and
 * which a JSON Schema of declared keys refuses everywhere else.
 */
ajv.addKeyword({
  keyword: 'plainAny',
  schemaType: 'boolean',
  validate: (_: boolean, value: unknown) => value !== undefined && protoKeyLabels(value).length === 0,
});

/** Only the messages preference: it changes what joi says, never what it accepts. */
const onlyMessages = (p: Record<string, unknown> | undefined) =>
  p === undefined || Object.keys(p).every((k) => k === 'messages');

function plainKeys(d: Described, allowed: ReadonlySet<string>): boolean {
  return Object.keys(d).every((k) => allowed.has(k)) && onlyMessages(d.preferences);
}

/**
 * A part of a schema compiled: its JSON Schema, and how joi's value is made from a value the
 * JSON Schema took (null: it is the value as sent). Null when JSON Schema cannot say exactly
 * what joi checks.
 */
interface Part {
  schema: JsonSchema;
  copy: ((value: unknown) => unknown) | null;
  /** A number: joi gives -0 back as 0. */
  number?: true;
}

/** A field's JSON Schema, or null when JSON Schema cannot say exactly what joi checks. */
function fieldSchema(d: Described): JsonSchema | null {
  const rules = RULES[d.type];
  if (!rules || !plainKeys(d, FIELD_PARTS)) return null;
  if (!Object.keys(d.flags ?? {}).every((f) => PLAIN_FLAGS.has(f))) return null;
  if (!plainPresence(d)) return null;
  const fallback = d.flags?.default;
  if (fallback !== undefined && fallback !== null && !['number', 'string', 'boolean'].includes(typeof fallback))
    return null;
  const allow = d.allow ?? [];
  if (allow.some((v) => v !== null)) return null;
  const out: JsonSchema = { type: allow.length > 0 ? [d.type, 'null'] : d.type };
  let min = d.type === 'string' ? 1 : -Number.MAX_SAFE_INTEGER;
  let max = Number.MAX_SAFE_INTEGER;
  const regExps: Array<[string, string]> = [];
  for (const rule of d.rules ?? []) {
    if (!rules.has(rule.name)) return null;
    const limit = rule.args?.limit;
    if (rule.name === 'integer') out.type = allow.length > 0 ? ['integer', 'null'] : 'integer';
    else if (rule.name === 'pattern') {
      const options = rule.args?.options as { invert?: boolean } | undefined;
      const match = /^\/(.*)\/([a-z]*)$/s.exec(String(rule.args?.regex));
      if (!match || options?.invert) return null;
      regExps.push([match[1]!, match[2]!]);
    } else if (typeof limit !== 'number' || (d.type === 'string' && rule.args?.encoding !== undefined)) return null;
    // joi refuses '' (string.empty) unless the string's min is 0: the least length is 1 otherwise.
    else if (rule.name === 'min') min = d.type === 'string' ? limit : Math.max(min, limit);
    else max = Math.min(max, limit);
  }
  if (d.type === 'number') Object.assign(out, { minimum: min, maximum: max });
  if (d.type === 'string') out.utf16Length = { min, max };
  if (regExps.length > 0) out.regExps = regExps;
  return out;
}

const plainPresence = (d: Described) =>
  d.flags?.presence === undefined || d.flags.presence === 'required' || d.flags.presence === 'optional';

function partOf(d: Described): Part | null {
  if (d.type === 'object') return objectPart(d);
  if (d.type === 'array') return arrayPart(d);
  if (d.type === 'any') return anyPart(d);
  const schema = fieldSchema(d);
  return schema && (d.type === 'number' ? { schema, copy: null, number: true } : { schema, copy: null });
}

/**
 * An object of declared keys, each a part; `xor` between keys of its own. joi's value is a copy
 * in the order sent, each key's value as joi makes it, defaults added after (a fresh [] each).
 */
function objectPart(d: Described): Part | null {
  const keys = d.keys;
  if (!keys || !plainKeys(d, OBJECT_PARTS) || !plainPresence(d)) return null;
  if (!Object.keys(d.flags ?? {}).every((f) => f === 'label' || f === 'description' || f === 'presence')) return null;
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  const defaults: Array<[string, unknown]> = [];
  const copies: Array<[string, (value: unknown) => unknown]> = [];
  const numbers: string[] = [];
  for (const [name, key] of Object.entries(keys)) {
    // Copied key by key below, where this one would set the copy's prototype (joi drops it).
    if (name === '__proto__') return null;
    const part = partOf(key);
    if (!part) return null;
    properties[name] = part.schema;
    if (key.flags?.presence === 'required') required.push(name);
    if (key.flags?.default !== undefined) defaults.push([name, key.flags.default]);
    if (part.copy) copies.push([name, part.copy]);
    if (part.number) numbers.push(name);
  }
  const schema: JsonSchema = { type: 'object', properties, required, additionalProperties: false };
  const xors: JsonSchema[] = [];
  for (const dependency of d.dependencies ?? []) {
    const { rel, peers, ...rest } = dependency;
    // Peers by plain name only: a dotted one is a path into a child, which JSON Schema cannot name here.
    // A peer with a default is present after joi adds it, which the JSON Schema would not see.
    const plainPeer = (p: unknown) => typeof p === 'string' && p in properties && keys[p]!.flags?.default === undefined;
    if (rel !== 'xor' || Object.keys(rest).length > 0 || !peers.every(plainPeer)) return null;
    xors.push({ oneOf: peers.map((p) => ({ required: [p] })) });
  }
  if (xors.length > 0) schema.allOf = xors;
  return {
    schema,
    copy: (value) => {
      const from = value as Record<string, unknown>;
      let out: Record<string, unknown>;
      // A spread is V8's quickest copy, but it leaves no room for keys added to it afterwards:
      // with a transfer record's 15 defaults added to one, its whole check cost 25 µs; with them
      // added to a copy made key by key, 3.
      if (defaults.every(([name]) => from[name] !== undefined)) out = { ...from };
      else {
        out = {};
        for (const key of Object.keys(from)) out[key] = from[key];
        for (const [name, fallback] of defaults) if (out[name] === undefined) out[name] = fresh(fallback);
      }
      for (const [name, copy] of copies) if (out[name] !== undefined && out[name] !== null) out[name] = copy(out[name]);
      for (const name of numbers) if (out[name] === 0) out[name] = 0;
      return out;
    },
  };
}

/** An array of one item schema (a part), with a least and a most number of items. joi's value is a copy. */
function arrayPart(d: Described): Part | null {
  if (!plainKeys(d, ARRAY_PARTS) || !plainPresence(d) || d.items?.length !== 1) return null;
  if (!Object.keys(d.flags ?? {}).every((f) => PLAIN_FLAGS.has(f))) return null;
  const fallback = d.flags?.default;
  if (fallback !== undefined && !(Array.isArray(fallback) && fallback.length === 0)) return null;
  const item = d.items[0]!;
  // An item's presence or default would be about holes (undefined items), which JSON has none of.
  if (item.flags?.presence !== undefined || item.flags?.default !== undefined) return null;
  const part = partOf(item);
  if (!part) return null;
  let minItems = 0;
  let maxItems = Infinity;
  for (const rule of d.rules ?? []) {
    const limit = rule.args?.limit;
    if (typeof limit !== 'number') return null;
    if (rule.name === 'min') minItems = Math.max(minItems, limit);
    else if (rule.name === 'max') maxItems = Math.min(maxItems, limit);
    else return null;
  }
  const schema: JsonSchema = { type: 'array', items: part.schema };
  if (minItems > 0) schema.minItems = minItems;
  if (maxItems < Infinity) schema.maxItems = maxItems;
  // joi gives -0 back as 0, a list's number too.
  const copy = part.copy ?? (part.number ? (v: unknown) => (v === 0 ? 0 : v) : null);
  return { schema, copy: copy ? (value) => (value as unknown[]).map(copy) : (value) => (value as unknown[]).slice() };
}

/**
 * Anything, as joi's `any()` with no rules takes it (but see plainAny): a value left as sent, such
 * as a transfer batch's records, each checked on its own afterwards with messages of its own.
 */
function anyPart(d: Described): Part | null {
  if (!Object.keys(d).every((k) => k === 'type' || k === 'flags') || !plainPresence(d)) return null;
  if (!Object.keys(d.flags ?? {}).every((f) => f === 'presence' || f === 'label' || f === 'description')) return null;
  return { schema: { plainAny: true }, copy: null };
}

/** A default as joi gives it: a copy of an empty list each time, a primitive as is. */
const fresh = (fallback: unknown) => (Array.isArray(fallback) ? [] : fallback);

/** The compiled check of `schema`, or null when it is not an object that JSON Schema can state. */
export function compileCheck(schema: Joi.Schema): CompiledCheck | null {
  const d = schema.describe() as Described;
  if (d.type !== 'object' || d.flags?.presence !== undefined) return null;
  const part = objectPart(d);
  if (!part) return null;
  const check = ajv.compile(part.schema);
  const copy = part.copy!;
  return (value) => (check(value) ? { value: copy(value) } : null);
}

/**
 * The compiled check of one field's schema (a number, string or boolean as above) as a verdict
 * alone: true only for a value joi accepts as sent (a -0 it gives back as 0); false means "ask
 * joi" (which also takes what it would convert, and undefined when the field is optional). Null
 * when JSON Schema cannot say exactly what joi checks.
 */
export function compileFieldCheck(schema: Joi.Schema): ((value: unknown) => boolean) | null {
  const field = fieldSchema(schema.describe() as Described);
  if (!field) return null;
  const check = ajv.compile(field);
  return (value) => check(value);
}
