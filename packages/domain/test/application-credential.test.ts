import {
  applicationCredentialCreateSchema,
  applicationCredentialSecretMatches,
  generateApplicationCredentialSecret,
  hashApplicationCredentialSecret,
} from '../src';

describe('application credential secrets', () => {
  it('when a secret is generated, then it is 64 random bytes in base64url (86 characters), never repeated', () => {
    const secrets = new Set(Array.from({ length: 200 }, () => generateApplicationCredentialSecret()));
    expect(secrets.size).toBe(200);
    for (const s of secrets) expect(s).toMatch(/^[A-Za-z0-9_-]{86}$/);
  });

  it('when a secret is hashed, then only sha256:<hex> is kept, and only that secret matches it', () => {
    const secret = generateApplicationCredentialSecret();
    const hash = hashApplicationCredentialSecret(secret);
    expect(hash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(hash).not.toContain(secret);
    expect(applicationCredentialSecretMatches(secret, hash)).toBe(true);
    expect(applicationCredentialSecretMatches(`${secret}x`, hash)).toBe(false);
    expect(applicationCredentialSecretMatches(secret.slice(1), hash)).toBe(false);
  });

  it('when no credential was found (no hash), then nothing matches, not even the hash of zeroes', () => {
    expect(applicationCredentialSecretMatches('', null)).toBe(false);
    expect(applicationCredentialSecretMatches(generateApplicationCredentialSecret(), null)).toBe(false);
  });

  it('when a create body chooses a short secret, a foreign service or a bad method, then it is refused saying why', () => {
    const check = (c: Record<string, unknown>) =>
      applicationCredentialCreateSchema.validate({ application_credential: { name: 'n', ...c } }).error?.message;
    expect(check({ secret: 'short' })).toMatch(/at least 32 characters/);
    expect(check({ access_rules: [{ service: 'compute', method: 'GET', path: '/x' }] })).toMatch(/object-store/);
    expect(check({ access_rules: [{ service: 'object-store', method: 'COPY', path: '/x' }] })).toMatch(/method/);
    expect(check({ access_rules: [{ service: 'object-store', method: 'GET', path: 'x' }] })).toMatch(
      /must start with '\/'/,
    );
    expect(
      check({
        secret: 'a'.repeat(32),
        expires_at: '2030-01-01T00:00:00Z',
        roles: [{ name: 'swiftoperator' }],
        unrestricted: true,
      }),
    ).toBeUndefined();
  });
});
