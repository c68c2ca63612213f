import fc from 'fast-check';
import Joi from 'joi';
import { compileCheck, compileFieldCheck } from '../src/compiled-check';
import { isUsername, protoKeyLabels, swiftAccountSchema, usernameSchema, validate } from '../src';

/**
 * The compiled check's promise: its yes is joi's yes with joi's value, and on values joi takes
 * as sent (no conversion) it says yes whenever joi does. Both over schemas drawn at random from
 * what it covers, and values drawn to sit on and around every limit.
 */

type Kind = 'number' | 'string' | 'boolean';
interface FieldSpec {
  kind: Kind;
  integer: boolean;
  min?: number;
  max?: number;
  pattern?: RegExp;
  presence: 'required' | 'optional' | 'default';
  fallback: string | number | boolean | null;
  allowNull: boolean;
}

const LIMITS = [-3, 0, 1, 2, 5, 2 ** 53 - 1, 2 ** 53];
// The last as the Swift account's pattern: '/' and control characters refused, read with 'u'.
// eslint-disable-next-line no-control-regex
const PATTERNS = [/^[a-c]+$/, /^[a-c]+$/i, /^.$/u, /^.$/, /\ud83d/, /^[^/\u0000-\u001f]{1,4}$/u];

const fieldSpec: fc.Arbitrary<FieldSpec> = fc.record({
  kind: fc.constantFrom<Kind>('number', 'string', 'boolean'),
  integer: fc.boolean(),
  min: fc.option(fc.constantFrom(...LIMITS), { nil: undefined }),
  max: fc.option(fc.constantFrom(...LIMITS), { nil: undefined }),
  pattern: fc.option(fc.constantFrom(...PATTERNS), { nil: undefined }),
  presence: fc.constantFrom('required' as const, 'optional' as const, 'default' as const),
  fallback: fc.constantFrom<string | number | boolean | null>(0, 7, 'x', null, true),
  allowNull: fc.boolean(),
});

/** `bare`: without presence or default (an array's item). */
function joiOf(spec: FieldSpec, bare = false): Joi.Schema {
  let s: Joi.Schema;
  if (spec.kind === 'number') {
    let n = Joi.number();
    if (spec.integer) n = n.integer();
    if (spec.min !== undefined) n = n.min(spec.min);
    if (spec.max !== undefined) n = n.max(spec.max);
    s = n;
  } else if (spec.kind === 'string') {
    let t = Joi.string();
    if (spec.min !== undefined && spec.min >= 0) t = t.min(Math.min(spec.min, 6));
    if (spec.max !== undefined && spec.max >= 0) t = t.max(Math.min(spec.max, 6));
    if (spec.pattern) t = t.pattern(spec.pattern);
    s = t;
  } else s = Joi.boolean();
  if (spec.allowNull) s = s.allow(null);
  if (bare) return s;
  return spec.presence === 'required'
    ? s.required()
    : spec.presence === 'default'
      ? s.default(spec.fallback)
      : s.optional();
}

const NAMES = ['a', 'b', 'c', 'd'];
const schemaSpec = fc.uniqueArray(fc.tuple(fc.constantFrom(...NAMES), fieldSpec), {
  minLength: 1,
  maxLength: 4,
  selector: ([name]) => name,
});

const anyField: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(...LIMITS, -0, 0.5, -1, 3, 2 ** 53 + 2, -(2 ** 53), NaN, Infinity, 1e300),
  fc.integer(),
  fc.double(),
  fc.string({ maxLength: 8 }),
  fc.string({ unit: 'binary', maxLength: 5 }),
  fc.constantFrom('', 'a', 'abc', 'ABC', 'abcdefg', '5', ' 5', 'true', '\ud83d', '\ud83d\ude00', 'é', '/', '\u0001'),
  fc.constantFrom(null, undefined, true, false),
  fc.constant({}),
  fc.constant([1]),
);
const valueFor = (names: string[]) =>
  fc.oneof(
    { weight: 8, arbitrary: fc.dictionary(fc.constantFrom(...names, 'zz', '__proto__'), anyField, { maxKeys: 6 }) },
    { weight: 1, arbitrary: fc.constantFrom<unknown>(null, undefined, [], '{"a":1}', 5, 'x') },
  );

const asSent = (specs: Map<string, FieldSpec>, value: unknown): boolean =>
  typeof value === 'object' &&
  value !== null &&
  !Array.isArray(value) &&
  Object.entries(value).every(([k, v]) => {
    const spec = specs.get(k);
    return spec !== undefined && (v === undefined || typeof v === spec.kind || (v === null && spec.allowNull));
  });

/**
 * Checks `values` with `schema` compiled and with joi: a compiled yes must be joi's yes with joi's
 * value (keys in joi's order, at every depth), and joi's yes to a value it takes as sent must be a
 * compiled yes. Returns the compiled yeses.
 */
function agreesWithJoi(schema: Joi.Schema, values: unknown[], takenAsSent: (value: unknown) => boolean): number {
  const check = compileCheck(schema);
  expect(check).not.toBeNull();
  let yes = 0;
  for (const value of values) {
    const joi = schema.validate(value, { abortEarly: true, convert: true });
    const compiled = check!(value);
    if (compiled) {
      yes++;
      expect(joi.error).toBeUndefined();
      // Equal (-0 apart from 0), in joi's order; a prototype-less object may come back with one.
      expect(compiled.value).toEqual(joi.value);
      expect(JSON.stringify(compiled.value)).toBe(JSON.stringify(joi.value));
    } else if (!joi.error && takenAsSent(value))
      throw new Error(`joi took ${JSON.stringify(value)} as sent, the compiled check did not`);
  }
  return yes;
}

describe('compileCheck', () => {
  it('when a value is checked, then a compiled yes is joi’s yes with joi’s value, and joi’s yes to a value as sent is the compiled one’s', () => {
    let compiledYes = 0;
    fc.assert(
      fc.property(
        schemaSpec.chain((fields) =>
          fc.tuple(fc.constant(fields), fc.array(valueFor(fields.map(([n]) => n)), { minLength: 20, maxLength: 20 })),
        ),
        ([fields, values]) => {
          const schema = Joi.object(Object.fromEntries(fields.map(([name, spec]) => [name, joiOf(spec)])));
          const specs = new Map(fields);
          compiledYes += agreesWithJoi(schema, values, (value) => asSent(specs, value));
        },
      ),
      { numRuns: 1500 },
    );
    // Values it said yes to, so the property above did not hold by saying no to everything.
    expect(compiledYes).toBeGreaterThan(1000);
  });

  it('when a value holds -0 or undefined, then it is answered as joi answers it', () => {
    const schema = Joi.object({ n: Joi.number().integer().min(0), d: Joi.number().default(4) });
    const check = compileCheck(schema)!;
    const fromJoi = schema.validate({ n: -0, d: undefined }).value;
    expect(check({ n: -0, d: undefined })!.value).toEqual(fromJoi);
    expect(Object.is((check({ n: -0 })!.value as { n: number }).n, 0)).toBe(true);
    const list = compileCheck(Joi.object({ l: Joi.array().items(Joi.number()), o: Joi.object({ n: Joi.number() }) }))!;
    const { l, o } = list({ l: [-0, 1], o: { n: -0 } })!.value as { l: number[]; o: { n: number } };
    expect([Object.is(l[0], 0), Object.is(o.n, 0)]).toEqual([true, true]);
  });

  it('when a schema holds what JSON Schema cannot say exactly, then there is no compiled check', () => {
    const plain = { a: Joi.number() };
    for (const schema of [
      Joi.object(plain).unknown(),
      Joi.object(plain).xor('a', 'b'),
      Joi.object({ a: Joi.number().default(1), b: Joi.number() }).xor('a', 'b'),
      Joi.object({ a: Joi.number(), b: Joi.number() }).or('a', 'b'),
      Joi.object({ a: Joi.object() }),
      Joi.object({ a: Joi.array() }),
      Joi.object({ a: Joi.array().items(Joi.number(), Joi.string()) }),
      Joi.object({ a: Joi.array().items(Joi.number()).unique() }),
      Joi.object({ a: Joi.array().items(Joi.number()).sparse() }),
      Joi.object({ a: Joi.array().items(Joi.number()).single() }),
      Joi.object({ a: Joi.array().items(Joi.number()).default([1]) }),
      Joi.object({ a: Joi.array().items(Joi.number().required()) }),
      Joi.object({ a: Joi.array().items(Joi.object({ b: Joi.date() })) }),
      Joi.object(plain).prefs({ convert: false }),
      Joi.object({ a: Joi.string().trim() }),
      Joi.object({ a: Joi.string().lowercase() }),
      Joi.object({ a: Joi.string().valid('x', 'y') }),
      Joi.object({ a: Joi.string().allow('') }),
      Joi.object({ a: Joi.string().max(3, 'utf8') }),
      Joi.object({ a: Joi.string().pattern(/x/, { invert: true }) }),
      Joi.object({ a: Joi.number().precision(2) }),
      Joi.object({ a: Joi.number().unsafe() }),
      Joi.object({ a: Joi.number().min(Joi.ref('b')), b: Joi.number() }),
      Joi.object({ a: Joi.number().default(() => 1) }),
      Joi.object({ a: Joi.any().forbidden() }),
      Joi.object({ a: Joi.date() }),
      Joi.string(),
    ])
      expect(compileCheck(schema)).toBeNull();
  });

  it('when a field has messages of its own (a Swift account), then it is still compiled, with its pattern’s flags', () => {
    const check = compileCheck(Joi.object({ account: swiftAccountSchema.required() }))!;
    expect(check).not.toBeNull();
    expect(check({ account: 'AUTH_\ud83d\ude00' })).not.toBeNull();
    // A lone surrogate: the account pattern refuses it only when read with its own 'u' flag.
    expect(check({ account: 'AUTH_\ud83d' })).toBeNull();
    expect(check({ account: 'AUTH_a/b' })).toBeNull();
  });
});

/** A schema of nested objects and arrays, as the collectors' bodies are (a round's samples). */
type NodeSpec =
  | { kind: 'field'; field: FieldSpec }
  | { kind: 'any'; presence: 'required' | 'optional' }
  | { kind: 'object'; keys: Array<[string, NodeSpec]>; xor: boolean; presence: 'required' | 'optional' }
  | {
      kind: 'array';
      item: NodeSpec;
      min?: number;
      max?: number;
      presence: 'required' | 'optional' | 'default';
    };

/** Fields with limits most values of FIELD_VALUES pass (the limits themselves are the property above's). */
const nestedFieldSpec: fc.Arbitrary<FieldSpec> = fc.record({
  kind: fc.constantFrom<Kind>('number', 'string', 'boolean'),
  integer: fc.boolean(),
  min: fc.option(fc.constantFrom(0, 1), { nil: undefined }),
  max: fc.option(fc.constantFrom(3, 5), { nil: undefined }),
  pattern: fc.option(fc.constant(/^[a-c]+$/), { nil: undefined, freq: 4 }),
  presence: fc.constantFrom('required' as const, 'optional' as const, 'default' as const),
  fallback: fc.constantFrom<string | number | boolean | null>(0, 'x', true),
  allowNull: fc.boolean(),
});

const nodeSpec: fc.Arbitrary<NodeSpec> = fc.letrec<{ node: NodeSpec }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    nestedFieldSpec.map((field) => ({ kind: 'field' as const, field })),
    fc.record({
      kind: fc.constant('any' as const),
      presence: fc.constantFrom('required' as const, 'optional' as const),
    }),
    fc.record({
      kind: fc.constant('object' as const),
      keys: fc.uniqueArray(fc.tuple(fc.constantFrom(...NAMES), tie('node')), {
        minLength: 1,
        maxLength: 3,
        selector: ([name]) => name,
      }),
      xor: fc.boolean(),
      presence: fc.constantFrom('required' as const, 'optional' as const),
    }),
    fc.record({
      kind: fc.constant('array' as const),
      item: tie('node'),
      min: fc.option(fc.constantFrom(0, 1, 2), { nil: undefined }),
      max: fc.option(fc.constantFrom(0, 1, 3), { nil: undefined }),
      presence: fc.constantFrom('required' as const, 'optional' as const, 'default' as const),
    }),
  ),
})).node;

/** The keys an object's xor names: its first two without a default (none when it has fewer). */
const xorPeers = (keys: Array<[string, NodeSpec]>): string[] => {
  const hasDefault = (n: NodeSpec) =>
    n.kind === 'field' ? n.field.presence === 'default' : n.kind === 'array' && n.presence === 'default';
  const peers = keys.filter(([, n]) => !hasDefault(n)).map(([k]) => k);
  return peers.length >= 2 ? peers.slice(0, 2) : [];
};

/** `item`: an array's item, which takes no presence of its own. */
function joiOfNode(node: NodeSpec, item = false): Joi.Schema {
  if (node.kind === 'field') return joiOf(node.field, item);
  if (node.kind === 'any') return item ? Joi.any() : node.presence === 'required' ? Joi.any().required() : Joi.any();
  if (node.kind === 'object') {
    let s = Joi.object(Object.fromEntries(node.keys.map(([k, n]) => [k, joiOfNode(n)])));
    const peers = node.xor ? xorPeers(node.keys) : [];
    if (peers.length > 0) s = s.xor(...peers);
    return item ? s : node.presence === 'required' ? s.required() : s.optional();
  }
  let a = Joi.array().items(joiOfNode(node.item, true));
  if (node.min !== undefined) a = a.min(node.min);
  if (node.max !== undefined) a = a.max(node.max);
  if (item) return a;
  return node.presence === 'required' ? a.required() : node.presence === 'default' ? a.default([]) : a.optional();
}

const FIELD_VALUES: Record<Kind, unknown[]> = {
  number: [0, 1, 2, 3, 5, -0],
  string: ['a', 'b', 'ab', 'abc'],
  boolean: [true, false],
};

/** Values mostly of the schema's shape, with anything at every level now and then. */
function valueOfNode(node: NodeSpec): fc.Arbitrary<unknown> {
  const stray = fc.oneof(anyField, fc.constantFrom<unknown>([], {}, '[]', '{}'));
  if (node.kind === 'any')
    return fc.oneof(
      anyField,
      fc.constantFrom<unknown>(
        [],
        {},
        [1, 'a'],
        { a: 1 },
        JSON.parse('[{"__proto__": 1}]'),
        JSON.parse('{"__proto__": {}}'),
      ),
    );
  if (node.kind === 'field')
    return fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom(...FIELD_VALUES[node.field.kind], null) },
      { weight: 1, arbitrary: anyField },
    );
  if (node.kind === 'array')
    return fc.oneof(
      { weight: 16, arbitrary: fc.array(valueOfNode(node.item), { maxLength: 3 }) },
      { weight: 1, arbitrary: stray },
    );
  // Each key sent nine times in ten.
  const keys = node.keys.map(([k, n]) => fc.option(fc.tuple(fc.constant(k), valueOfNode(n)), { freq: 9, nil: null }));
  return fc.oneof(
    {
      weight: 16,
      arbitrary: fc
        .tuple(
          fc.tuple(...keys).map((entries) => Object.fromEntries(entries.filter((e) => e !== null))),
          // A key it does not declare, one time in ten.
          fc.oneof(
            { weight: 9, arbitrary: fc.constant(undefined) },
            { weight: 1, arbitrary: fc.tuple(fc.constantFrom('zz', '__proto__'), anyField) },
          ),
        )
        .map(([record, extra]) => {
          const out: Record<string, unknown> = { ...record };
          // As JSON.parse makes it: '__proto__' an own key, not the prototype.
          if (extra) Object.defineProperty(out, extra[0], { value: extra[1], enumerable: true, writable: true });
          return out;
        }),
    },
    { weight: 1, arbitrary: stray },
  );
}

/** Whether joi would take `value` as sent: every value of the type its schema names, no extra keys. */
function nodeAsSent(node: NodeSpec, value: unknown): boolean {
  // Anything, but a field named __proto__ anywhere in it is validate()'s to refuse.
  if (node.kind === 'any') return protoKeyLabels(value).length === 0;
  if (node.kind === 'field') return typeof value === node.field.kind || (value === null && node.field.allowNull);
  if (node.kind === 'array') return Array.isArray(value) && value.every((v) => nodeAsSent(node.item, v));
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const specs = new Map(node.keys);
  return Object.entries(value).every(([k, v]) => {
    const spec = specs.get(k);
    return spec !== undefined && (v === undefined || nodeAsSent(spec, v));
  });
}

describe('compileCheck of nested objects and arrays', () => {
  it('when a value is checked, then a compiled yes is joi’s yes with joi’s value, and joi’s yes to a value as sent is the compiled one’s', () => {
    let compiledYes = 0;
    const objects = nodeSpec.filter((n): n is Extract<NodeSpec, { kind: 'object' }> => n.kind === 'object');
    fc.assert(
      fc.property(
        objects.chain((node) =>
          fc.tuple(fc.constant(node), fc.array(valueOfNode(node), { minLength: 20, maxLength: 20 })),
        ),
        ([node, values]) => {
          const schema = joiOfNode({ ...node, presence: 'optional' }, true);
          compiledYes += agreesWithJoi(schema, values, (value) => nodeAsSent(node, value));
        },
      ),
      { numRuns: 600 },
    );
    // Values it said yes to, so the property above did not hold by saying no to everything.
    expect(compiledYes).toBeGreaterThan(1500);
  });

  it('when a storage round’s samples are checked, then the compiled value is joi’s, a fresh [] for each missing list', () => {
    const schema = Joi.object({
      samples: Joi.array()
        .max(3)
        .items(
          Joi.object({
            account: swiftAccountSchema.required(),
            policies: Joi.array()
              .items(Joi.object({ index: Joi.number().integer().min(0), name: Joi.string() }).xor('index', 'name'))
              .default([]),
          }),
        )
        .required(),
    });
    const check = compileCheck(schema)!;
    const body = { samples: [{ account: 'AUTH_a' }, { account: 'AUTH_b', policies: [{ index: -0 }, { name: 'x' }] }] };
    const out = check(body)!.value as { samples: Array<{ policies: unknown[] }> };
    expect(out).toStrictEqual(schema.validate(body).value);
    expect(Object.is((out.samples[1]!.policies[0] as { index: number }).index, 0)).toBe(true);
    expect(out.samples[0]!.policies).not.toBe((check(body)!.value as typeof out).samples[0]!.policies);
    expect(out.samples[1]).not.toBe(body.samples[1]);
    for (const bad of [
      { samples: [{ account: 'AUTH_a', policies: [{ index: 1, name: 'x' }] }] },
      { samples: [{ account: 'AUTH_a', policies: [{}] }] },
      { samples: [{ account: 'AUTH_a' }, { account: 'AUTH_b' }, { account: 'AUTH_c' }, { account: 'AUTH_d' }] },
      { samples: [{ account: 'AUTH_a', policies: [{ index: '1' }] }] },
    ])
      expect(check(bad)).toBeNull();
  });
});

describe('compileFieldCheck', () => {
  it('when one field’s value is checked, then a compiled yes is joi’s yes to it unchanged, and joi’s yes to a value as sent is the compiled one’s', () => {
    let compiledYes = 0;
    fc.assert(
      fc.property(fieldSpec, fc.array(anyField, { minLength: 20, maxLength: 20 }), (spec, values) => {
        const schema = joiOf(spec);
        const check = compileFieldCheck(schema);
        expect(check).not.toBeNull();
        for (const value of values) {
          const joi = schema.validate(value, { abortEarly: true, convert: true });
          if (check!(value)) {
            compiledYes++;
            expect(joi.error).toBeUndefined();
            // Unchanged, but for -0, which joi gives back as 0 (a yes all the same).
            expect(joi.value).toEqual(Object.is(value, -0) ? 0 : value);
          } else if (!joi.error && (typeof value === spec.kind || (value === null && spec.allowNull)))
            throw new Error(`joi took ${JSON.stringify(value)} as sent, the compiled check did not`);
        }
      }),
      { numRuns: 1500 },
    );
    expect(compiledYes).toBeGreaterThan(1000);
  });

  it('when a username is asked about, then isUsername answers as usernameSchema does, compiled or not', () => {
    expect(compileFieldCheck(usernameSchema)).not.toBeNull();
    const names = fc.oneof(
      fc.string({ maxLength: 300 }),
      fc.string({ unit: 'binary', maxLength: 8 }),
      fc.constantFrom('', 'a'.repeat(255), 'a'.repeat(256), 'a:b', 'a/b', 'a\u0000', 'é', '\ud83d', 'AUTH_x'),
    );
    fc.assert(
      fc.property(names, (name) => expect(isUsername(name)).toBe(!usernameSchema.validate(name).error)),
      { numRuns: 3000 },
    );
  });

  it('when a schema is not a plain field, then there is no compiled check (joi answers alone)', () => {
    for (const schema of [Joi.string().trim(), Joi.string().valid('x'), Joi.object({ a: Joi.number() }), Joi.date()])
      expect(compileFieldCheck(schema)).toBeNull();
  });
});

describe('validate with a compiled check', () => {
  it('when anything (`any()`) holds a field named __proto__, then validate refuses it and names it, as joi alone did', () => {
    const schema = Joi.object({ id: Joi.string().required(), records: Joi.array().items(Joi.any()).required() });
    expect(compileCheck(schema)).not.toBeNull();
    const body = JSON.parse('{"id": "a", "records": [{"n": 1}, {"n": 2, "deep": [{"__proto__": {"x": 1}}]}]}');
    expect(() => validate(schema, body)).toThrow("The 'records[1].deep[0].__proto__' field is not allowed here.");
    expect(validate(schema, { id: 'a', records: [{ n: 1 }] })).toEqual({ id: 'a', records: [{ n: 1 }] });
  });
});
