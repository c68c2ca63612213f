import { hashPassword, parsePasswordHash, parseScryptSetting, verifyPassword, type ScryptParams } from '../src';

/** Cheap parameters so the suite stays fast; one test below uses the production defaults. */
const FAST: ScryptParams = { logN: 10, r: 8, p: 1 };
const PASSWORD = 'correct horse battery staple';

describe('password hashing', () => {
  it('when a password is hashed and then verified, then it verifies', async () => {
    const stored = await hashPassword(PASSWORD, FAST);
    await expect(verifyPassword(PASSWORD, stored)).resolves.toBe(true);
  });

  it('when a different password is verified against the hash, then it does not verify', async () => {
    const stored = await hashPassword(PASSWORD, FAST);
    await expect(verifyPassword('correct horse battery stapl', stored)).resolves.toBe(false);
    await expect(verifyPassword(`${PASSWORD} `, stored)).resolves.toBe(false);
    await expect(verifyPassword('', stored)).resolves.toBe(false);
  });

  it('when the same password is hashed twice, then the hashes differ (random salt) and both verify', async () => {
    const a = await hashPassword(PASSWORD, FAST);
    const b = await hashPassword(PASSWORD, FAST);
    expect(a).not.toBe(b);
    expect(parsePasswordHash(a)!.salt.equals(parsePasswordHash(b)!.salt)).toBe(false);
    await expect(verifyPassword(PASSWORD, a)).resolves.toBe(true);
    await expect(verifyPassword(PASSWORD, b)).resolves.toBe(true);
  });

  it('when hashed with the given parameters, then the stored string records them and holds a 16-byte salt and a 32-byte key', async () => {
    const stored = await hashPassword(PASSWORD, FAST);
    expect(stored).toMatch(/^\$scrypt\$ln=10,r=8,p=1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
    const parsed = parsePasswordHash(stored)!;
    expect(parsed.params).toEqual(FAST);
    expect(parsed.salt).toHaveLength(16);
    expect(parsed.key).toHaveLength(32);
  });

  it('when hashed with the defaults, then the stored string starts with $scrypt$ln=15,r=8,p=3$ and round-trips', async () => {
    const stored = await hashPassword(PASSWORD);
    expect(stored.startsWith('$scrypt$ln=15,r=8,p=3$')).toBe(true);
    await expect(verifyPassword(PASSWORD, stored)).resolves.toBe(true);
    await expect(verifyPassword('not the password at all', stored)).resolves.toBe(false);
  });

  it('when the password is non-ASCII, then it round-trips', async () => {
    const password = 'pässwörd-山田-🎉-long-enough';
    const stored = await hashPassword(password, FAST);
    await expect(verifyPassword(password, stored)).resolves.toBe(true);
  });

  it('when the same password arrives in another Unicode normalization form, then it still verifies', async () => {
    const composed = 'caf\u00e9-password-long-enough';
    const decomposed = 'cafe\u0301-password-long-enough';
    const stored = await hashPassword(composed, FAST);
    await expect(verifyPassword(decomposed, stored)).resolves.toBe(true);
  });

  it.each([
    ['empty', ''],
    ['plain text', 'password'],
    ['another scheme', '$2b$12$abcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQRSTUVWXYZ01234'],
    ['a missing key part', '$scrypt$ln=10,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA=='],
    ['logN 0', '$scrypt$ln=0,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA==$a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2U='],
    ['logN 99', '$scrypt$ln=99,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA==$a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2U='],
    ['r 0', '$scrypt$ln=10,r=0,p=1$c2FsdHNhbHRzYWx0c2FsdA==$a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2U='],
    ['characters outside base64', '$scrypt$ln=10,r=8,p=1$not*base64$a2V5'],
  ])('when the stored hash is malformed (%s), then nothing verifies against it', async (_label, stored) => {
    expect(parsePasswordHash(stored)).toBeNull();
    await expect(verifyPassword(PASSWORD, stored)).resolves.toBe(false);
  });

  it('when the stored key has been truncated, then the password does not verify', async () => {
    const stored = await hashPassword(PASSWORD, FAST);
    const parts = stored.split('$');
    // '', 'scrypt', 'ln=…', salt, key
    const truncatedKey = Buffer.from(parts[4]!, 'base64').subarray(0, 16).toString('base64');
    const truncated = [...parts.slice(0, 4), truncatedKey].join('$');
    await expect(verifyPassword(PASSWORD, truncated)).resolves.toBe(false);
  });

  it('when the stored salt has been altered, then the password does not verify', async () => {
    const stored = await hashPassword(PASSWORD, FAST);
    const parts = stored.split('$');
    const salt = Buffer.from(parts[3]!, 'base64');
    salt[0] = salt[0]! ^ 0xff;
    const altered = [...parts.slice(0, 3), salt.toString('base64'), parts[4]].join('$');
    await expect(verifyPassword(PASSWORD, altered)).resolves.toBe(false);
  });
});

describe('the scrypt parameters new hashes are made with (CAIRN_PASSWORD_HASH_PARAMS)', () => {
  it('when written as the hashes write them, then those', async () => {
    const parsed = parseScryptSetting('ln=16,r=8,p=1');
    expect(parsed).toEqual({ params: { logN: 16, r: 8, p: 1 } });
    const cheap = parseScryptSetting('ln=10,r=8,p=1') as { params: ScryptParams };
    expect(await hashPassword(PASSWORD, cheap.params)).toMatch(/^\$scrypt\$ln=10,r=8,p=1\$/);
  });

  it.each([
    ['N=32768,r=8,p=3', 'written ln=<log2 N>,r=<block size>,p=<parallelism>'],
    ['ln=15,r=8', 'written ln=<log2 N>'],
    ['ln=9,r=8,p=1', 'at least 1 MiB; ln=9,r=8,p=1 needs 0.5 MiB'],
    ['ln=12,r=1,p=1', 'at least 1 MiB; ln=12,r=1,p=1 needs 0.5 MiB'],
    ['ln=18,r=8,p=3', 'at most 128 MiB'],
    ['ln=15,r=8,p=16', 'work (N·r·p) must be at most 3,145,728'],
  ])('when it is %s, then a sentence says what is wrong', (text, problem) => {
    const parsed = parseScryptSetting(text);
    expect('problem' in parsed && parsed.problem).toContain(problem);
  });
});
