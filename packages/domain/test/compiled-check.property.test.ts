import fc from 'fast-check';
import Joi from 'joi';
import { compileCheck, compileFieldCheck } from '../src/compiled-check';
import { isUsername, swiftAccountSchema, usernameSchema } from '../src';

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

function joiOf(spec: FieldSpec): Joi.Schema {
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
          const check = compileCheck(schema);
          expect(check).not.toBeNull();
          const specs = new Map(fields);
          for (const value of values) {
            const joi = schema.validate(value, { abortEarly: true, convert: true });
            const compiled = check!(value);
            if (compiled) {
              compiledYes++;
              expect(joi.error).toBeUndefined();
              expect(compiled.value).toEqual(joi.value);
              expect(Object.keys(compiled.value as object)).toEqual(Object.keys(joi.value));
            } else if (!joi.error && asSent(specs, value))
              throw new Error(`joi took ${JSON.stringify(value)} as sent, the compiled check did not`);
          }
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
  });

  it('when a schema holds what JSON Schema cannot say exactly, then there is no compiled check', () => {
    const plain = { a: Joi.number() };
    for (const schema of [
      Joi.object(plain).unknown(),
      Joi.object(plain).xor('a', 'b'),
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
      Joi.object({ a: Joi.object({ b: Joi.number() }) }),
      Joi.object({ a: Joi.array().items(Joi.number()) }),
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
