import { apiKeyMatches, generateApiKey, hashApiKey } from '../src';

describe('operator API keys', () => {
  it('when a key is generated, then it is at least 43 characters of base64url', () => {
    const key = generateApiKey();
    expect(key.length).toBeGreaterThanOrEqual(43);
    expect(key).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it('when many keys are generated, then they are all distinct', () => {
    const keys = new Set(Array.from({ length: 200 }, () => generateApiKey()));
    expect(keys.size).toBe(200);
  });

  it('when the presented key is the one that was hashed, then it matches', () => {
    const key = generateApiKey();
    expect(apiKeyMatches(key, hashApiKey(key))).toBe(true);
  });

  it('when the presented key differs (by one character, or is empty), then it does not match', () => {
    const key = generateApiKey();
    const stored = hashApiKey(key);
    const last = key.endsWith('A') ? 'B' : 'A';
    expect(apiKeyMatches(`${key.slice(0, -1)}${last}`, stored)).toBe(false);
    expect(apiKeyMatches('', stored)).toBe(false);
    expect(apiKeyMatches(generateApiKey(), stored)).toBe(false);
  });

  it('when the stored hash has the wrong length, then nothing matches and nothing throws', () => {
    const key = generateApiKey();
    expect(apiKeyMatches(key, Buffer.alloc(0))).toBe(false);
    expect(apiKeyMatches(key, hashApiKey(key).subarray(0, 16))).toBe(false);
  });

  it('when a key is hashed, then the hash is a 32-byte SHA-256 digest, the same each time', () => {
    expect(hashApiKey('abc')).toHaveLength(32);
    expect(hashApiKey('abc').toString('hex')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});
