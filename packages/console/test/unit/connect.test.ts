import { connectionLines, endpoints, generatePassword, shellQuote } from '../../src/lib/connect';

describe('connection lines for a storage user', () => {
  it("when the auth URL is known, then the endpoints are the gateway's V1, V2.0 and V3 paths", () => {
    expect(endpoints('https://auth.example.com/auth/')).toEqual({
      v1: 'https://auth.example.com/auth/v1.0',
      v2: 'https://auth.example.com/auth/v2.0',
      v3: 'https://auth.example.com/auth/v3',
    });
  });

  it("when a value is quoted, then it is always single-quoted, a quote in it written as '\\''", () => {
    expect(shellQuote('alice')).toBe(`'alice'`);
    expect(shellQuote('')).toBe(`''`);
    expect(shellQuote("o'brien x")).toBe(`'o'\\''brien x'`);
    expect(shellQuote('$(rm -rf /)')).toBe(`'$(rm -rf /)'`);
  });

  it('when lines are built, then swift V1, V3 and an rclone remote name the user and the endpoints', () => {
    const l = connectionLines('http://127.0.0.1:5000/auth', 'alice');
    expect(l.swiftV1).toBe("swift -A 'http://127.0.0.1:5000/auth/v1.0' -U 'alice' -K '<password>' stat");
    expect(l.swiftV3).toContain("--auth-version 3 --os-auth-url 'http://127.0.0.1:5000/auth/v3' --os-username 'alice'");
    expect(l.swiftV3).toContain("--os-project-name 'alice'");
    expect(l.rclone.split('\n')).toEqual(
      expect.arrayContaining([
        '[cairn-alice]',
        'type = swift',
        'user = alice',
        'auth = http://127.0.0.1:5000/auth/v3',
        'tenant = alice',
      ]),
    );
  });

  it('when a password is generated, then it is 32 URL-safe characters from the random source', () => {
    const p = generatePassword();
    expect(p).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(generatePassword()).not.toBe(p);
    expect(generatePassword((b) => b.fill(255))).toBe('_'.repeat(32));
  });
});
