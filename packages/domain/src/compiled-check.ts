import Ajv from 'ajv';
import type Joi from 'joi';

/**
 * A joi object schema of plain fields compiled into a JSON Schema check (ajv): for the bodies that
 * come by the thousand (a transfer batch holds 20,000 records, each checked on its own), where
 * joi's walk costs half a microsecond a field and ajv's compiled function a hundredth of that.
 *
 * joi stays the one definition and the one judge: the check is made from the schema's own
 * description, and it only ever says yes to a value joi accepts unchanged, with joi's defaults
 * applied. Everything else (a value it refuses, or one joi would convert: "5" for 5, a JSON
 * string for an object) goes to joi, which gives the answer and the message. So the compiled
 * form covers only what JSON Schema states exactly; for any other schema there is no compiled
 * check and joi does it all.
 *
 * Covered: an object whose keys are all numbers (integer, min, max), strings (min, max, pattern)
 * or booleans, each optional or required, allowing null or not, with a literal default.
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
  preferences?: Record<string, unknown>;
}

type JsonSchema = Record<string, unknown>;

const PLAIN_FLAGS = new Set(['presence', 'default', 'label', 'description']);
/** The parts of a description, a field's and an object's, that JSON Schema can state. */
const FIELD_PARTS = new Set(['type', 'flags', 'rules', 'allow', 'preferences']);
const OBJECT_PARTS = new Set(['type', 'flags', 'keys', 'preferences']);
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

/** Only the messages preference: it changes what joi says, never what it accepts. */
const onlyMessages = (p: Record<string, unknown> | undefined) =>
  p === undefined || Object.keys(p).every((k) => k === 'messages');

function plainKeys(d: Described, allowed: ReadonlySet<string>): boolean {
  return Object.keys(d).every((k) => allowed.has(k)) && onlyMessages(d.preferences);
}

/** A field's JSON Schema, or null when JSON Schema cannot say exactly what joi checks. */
function fieldSchema(d: Described): JsonSchema | null {
  const rules = RULES[d.type];
  if (!rules || !plainKeys(d, FIELD_PARTS)) return null;
  if (!Object.keys(d.flags ?? {}).every((f) => PLAIN_FLAGS.has(f))) return null;
  const presence = d.flags?.presence;
  if (presence !== undefined && presence !== 'required' && presence !== 'optional') return null;
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

/** The compiled check of `schema`, or null when it is not an object of plain fields. */
export function compileCheck(schema: Joi.Schema): CompiledCheck | null {
  const d = schema.describe() as Described;
  if (d.type !== 'object' || !d.keys || !plainKeys(d, OBJECT_PARTS)) return null;
  if (!Object.keys(d.flags ?? {}).every((f) => f === 'label' || f === 'description')) return null;
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  const defaults: Array<[string, unknown]> = [];
  const numbers: string[] = [];
  for (const [name, key] of Object.entries(d.keys)) {
    const field = fieldSchema(key);
    if (!field) return null;
    properties[name] = field;
    if (key.flags?.presence === 'required') required.push(name);
    if (key.flags?.default !== undefined) defaults.push([name, key.flags.default]);
    if (key.type === 'number') numbers.push(name);
  }
  const check = ajv.compile({ type: 'object', properties, required, additionalProperties: false });
  return (value) => {
    if (!check(value)) return null;
    // As joi returns it: a copy, in the order sent, defaults added after.
    const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
    for (const [name, fallback] of defaults) if (out[name] === undefined) out[name] = fallback;
    for (const name of numbers) if (out[name] === 0) out[name] = 0;
    return { value: out };
  };
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
