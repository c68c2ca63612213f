import { apiKeyMatches, generateApiKey, hashApiKey, hashPassword, verifyPassword } from '../src';

/**
 * Secrets are compared with crypto.timingSafeEqual over fixed-length digests, so the time a
 * comparison takes says nothing about how much of a guess was right, nor about its length. The
 * spy only watches: the real function still runs.
 */
// The module object itself (an `import * as` namespace cannot be spied on).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const crypto = require('node:crypto') as typeof import('node:crypto');
describe('constant-time comparisons', () => {
  let spy: jest.SpyInstance<boolean, [NodeJS.ArrayBufferView, NodeJS.ArrayBufferView]>;
  beforeEach(() => {
    spy = jest.spyOn(crypto, 'timingSafeEqual');
  });
  afterEach(() => spy.mockRestore());

  const comparedLengths = () => spy.mock.calls.map(([a, b]) => [a.byteLength, b.byteLength]);

  it('when an API key is checked, right or wrong, short or long, then exactly one timingSafeEqual over two 32-byte digests decides', () => {
    const key = generateApiKey();
    const stored = hashApiKey(key);
    const guesses = [key, `${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`, 'x', 'y'.repeat(4096), ''];
    const results = guesses.map((g) => apiKeyMatches(g, stored));
    expect(results).toEqual([true, false, false, false, false]);
    expect(comparedLengths()).toEqual(guesses.map(() => [32, 32]));
    // The verdict is timingSafeEqual's own.
    expect(spy.mock.results.map((r) => r.value)).toEqual(results);
  });

  it('when a password is verified, right or wrong, then one timingSafeEqual over two 32-byte scrypt outputs decides', async () => {
    const params = { logN: 10, r: 8, p: 1 };
    const stored = await hashPassword('the-right-password-0123456789', params);
    spy.mockClear();
    const guesses = ['the-right-password-0123456789', 'the-right-password-012345678', 'x', 'y'.repeat(1024)];
    const results: boolean[] = [];
    for (const g of guesses) results.push(await verifyPassword(g, stored));
    expect(results).toEqual([true, false, false, false]);
    expect(comparedLengths()).toEqual(guesses.map(() => [32, 32]));
    expect(spy.mock.results.map((r) => r.value)).toEqual(results);
  });
});
