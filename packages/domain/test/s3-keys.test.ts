import { generateS3AccessKey, generateS3Secret, isS3AccessKey, S3_ACCESS_KEY_LENGTH, S3_SECRET_LENGTH } from '../src';

describe('S3 access keys and secrets', () => {
  it('when an access key is generated, then it is 20 upper-case letters and digits, like an AWS access key id', () => {
    for (let i = 0; i < 200; i++) {
      const key = generateS3AccessKey();
      expect(key).toMatch(/^[A-Z0-9]{20}$/);
      expect(isS3AccessKey(key)).toBe(true);
    }
    expect(S3_ACCESS_KEY_LENGTH).toBe(20);
  });

  it('when a secret is generated, then it is 40 characters of base64 without padding, like an AWS secret access key', () => {
    for (let i = 0; i < 200; i++) {
      const secret = generateS3Secret();
      expect(secret).toMatch(/^[A-Za-z0-9+/]{40}$/);
      expect(Buffer.from(secret, 'base64')).toHaveLength(30);
    }
    expect(S3_SECRET_LENGTH).toBe(40);
  });

  it('when many are generated, then no access key and no secret repeats', () => {
    const n = 5000;
    expect(new Set(Array.from({ length: n }, generateS3AccessKey)).size).toBe(n);
    expect(new Set(Array.from({ length: n }, generateS3Secret)).size).toBe(n);
  });

  it('when many access keys are generated, then every letter and digit turns up in every position (no fixed or missing characters)', () => {
    const seen = Array.from({ length: 20 }, () => new Set<string>());
    for (let i = 0; i < 3000; i++) [...generateS3AccessKey()].forEach((c, at) => seen[at]!.add(c));
    // 3000 draws from 36 characters: the chance that one given character never shows in one
    // position is (35/36)^3000 ≈ 1e-37.
    for (const chars of seen) expect(chars.size).toBe(36);
  });

  it('when a string is not shaped like an access key, then isS3AccessKey says so', () => {
    for (const text of [
      '',
      'akiaiosfodnn7example',
      'AKIAIOSFODNN7EXAMPL',
      'AKIAIOSFODNN7EXAMPLEX',
      'AKIAIOSFODNN7EXAMPL-',
      'AKIAIOSFODNN7EXAMPL\n',
    ]) {
      expect(isS3AccessKey(text)).toBe(false);
    }
    expect(isS3AccessKey('AKIAIOSFODNN7EXAMPLE')).toBe(true);
  });
});
