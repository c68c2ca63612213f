import fc from 'fast-check';
import pino from 'pino';
import { censorSecrets, LogCapture, type Secrets } from '../src';

const SECRETS: Secrets = {
  fields: ['password', 'databaseUrl'],
  headers: ['authorization', 'x-auth-token'],
  bodyFields: [
    ['auth', 'passwordCredentials', 'password'],
    ['credentials', 'signature'],
  ],
};
const censor = censorSecrets(SECRETS);

/** Every place a secret may be put in a line, as the keys from the line down. */
const PLACES: string[][] = [
  ['password'],
  ['databaseUrl'],
  ['user', 'password'],
  ['config', 'databaseUrl'],
  ['req', 'password'],
  ['req', 'headers', 'authorization'],
  ['req', 'headers', 'x-auth-token'],
  ['res', 'headers', 'x-auth-token'],
  ['body', 'auth', 'passwordCredentials', 'password'],
  ['body', 'credentials', 'signature'],
  ['req', 'body', 'auth', 'passwordCredentials', 'password'],
  ['req', 'body', 'credentials', 'signature'],
];

/** `line` with `value` put at `place`, creating the objects on the way (replacing whatever was not one). */
function plant(line: Record<string, unknown>, place: string[], value: string): void {
  let at = line;
  for (const key of place.slice(0, -1)) {
    const next = at[key];
    const inner =
      typeof next === 'object' && next !== null && !Array.isArray(next) ? (next as Record<string, unknown>) : {};
    at = at[key] = inner;
  }
  at[place[place.length - 1]!] = value;
}

const plainValue = fc.oneof(fc.string({ maxLength: 12 }), fc.integer(), fc.boolean(), fc.constant(null));
const plainObject = fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), plainValue, { maxKeys: 4 });
const line = fc.dictionary(
  fc.oneof(fc.constantFrom('req', 'res', 'body', 'user', 'config', 'msg2'), fc.string({ minLength: 1, maxLength: 8 })),
  fc.oneof(plainValue, plainObject, fc.record({ headers: plainObject, body: plainObject })),
  { maxKeys: 5 },
);

describe('censorSecrets', () => {
  it('when secrets are put anywhere a service names, then none is left, the rest is kept and the logged object is unchanged', () => {
    fc.assert(
      fc.property(line, fc.subarray(PLACES, { minLength: 1 }), (given, places) => {
        const logged = structuredClone(given) as Record<string, unknown>;
        places.forEach((place, i) => plant(logged, place, `secret-${i}-value`));
        const before = structuredClone(logged);
        const out = censor(logged);
        expect(JSON.stringify(out)).not.toMatch(/secret-\d+-value/);
        expect(logged).toEqual(before);
        // What was planted reads [redacted]; everything else is as logged.
        const expected = structuredClone(logged);
        places.forEach((place) => plant(expected, place, '[redacted]'));
        expect(JSON.parse(JSON.stringify(out))).toEqual(JSON.parse(JSON.stringify(expected)));
      }),
    );
  });

  it('when a line holds no secret, then it is passed on as it is, not copied', () => {
    const logged = { req: { id: 'tx1', method: 'GET', url: '/auth/v1.0' }, res: { statusCode: 200 }, responseTime: 3 };
    expect(censor(logged)).toBe(logged);
  });

  it('when an error carries a secret of its own, then the censored copy is still an error with its message and stack', () => {
    const err = Object.assign(new Error('login failed'), { password: 'hunter2' });
    const out = censor({ err }).err as Error & { password: string };
    expect(out).toBeInstanceOf(Error);
    expect(out.message).toBe('login failed');
    expect(out.stack).toBe(err.stack);
    expect(out.password).toBe('[redacted]');
    expect(err.password).toBe('hunter2');
  });

  it('when used as pino formatters.log, then the written line holds [redacted] where the secret was', () => {
    const out = new LogCapture();
    pino({ formatters: { log: censor } }, out).info({ user: { name: 'alice', password: 'hunter2' } }, 'hello');
    expect(JSON.parse(out.lines[0]!)).toMatchObject({ user: { name: 'alice', password: '[redacted]' }, msg: 'hello' });
  });
});
