import { redactTokens } from '../src/http/log-path';

/** The paths no route takes; the routed ones are walked over HTTP in test-e2e/security/log-token-paths.test.ts. */
describe('the path a request no token route takes is logged under', () => {
  const token = 'eyJhbGciOiJIUzI1NiJ9.eyJqdGkiOiJ4In0.c2lnbmF0dXJl';

  it('when a token follows a tokens segment, then it is replaced, and so is whatever follows it', () => {
    expect(redactTokens(`/auth/v2.0/tokens/${token}`)).toBe('/auth/v2.0/tokens/[token]');
    expect(redactTokens('/auth/v2.0/tokens/anything-at-all/more')).toBe('/auth/v2.0/tokens/[token]');
  });

  it.each([
    ['letter case', `/auth/V2.0/TOKENS/${token}`],
    ['doubled slashes', `/auth/v2.0//tokens//${token}`],
    ['a semicolon', `/auth/v2.0/tokens;${token}`],
    ['an encoded slash', `/auth/v2.0/tokens%2F${token}`],
    ['an encoded slash in lower case', `/auth/v2.0/tokens%2f${token}`],
    ['a backslash', `/auth/v2.0\\tokens\\${token}`],
    ['dot segments', `/auth/v2.0/x/../tokens/./${token}`],
    ['percent-encoded letters in the word', `/auth/v2.0/%74%6Fkens/${token}`],
    [
      'percent-encoded letters in the token',
      `/auth/v2.0/tokens/${token.replace(/[a-z]/g, (c) => `%${c.charCodeAt(0).toString(16)}`)}`,
    ],
    ['an escape encoded twice', `/auth/v2.0/%2574okens/${token}`],
    ['no separator at all', `/auth/v2.0/tokens${token}`],
    ['a path under another name', `/auth/${token}`],
  ])('when the path is spelt with %s, then the token is replaced all the same', (_what, path) => {
    const logged = redactTokens(path);
    expect(logged).toContain('[token]');
    for (let i = 0; i + 12 <= token.length; i++) expect(logged).not.toContain(token.slice(i, i + 12));
  });

  it('when the path carries no token, then it is logged as it was sent', () => {
    for (const path of [
      '/auth/v2.0/tokens',
      '/auth/v2.0/tokens/',
      '/auth/v2.0//tokens//',
      '/auth/v3/auth/tokens',
      '/auth/v3/s3tokens',
      '/auth/v1.0',
      '/auth/v1.0/users/alice/token',
      '/auth/v3/users/al%20ice/credentials/OS-EC2',
    ]) {
      expect(redactTokens(path)).toBe(path);
    }
  });
});
