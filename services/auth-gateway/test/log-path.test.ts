import { logPath } from '../src/http/log-path';

describe('the path a request is logged under', () => {
  it('when a V2 validation carries a token in its path, then the token is replaced', () => {
    expect(logPath('/auth/v2.0/tokens/eyJhbGciOiJIUzI1NiJ9.eyJqdGkiOiJ4In0.c2lnbmF0dXJl')).toBe('/auth/v2.0/tokens/[token]');
    expect(logPath('/auth/v2.0/tokens/anything-at-all/more')).toBe('/auth/v2.0/tokens/[token]/more');
  });

  it('when the path is spelt in other letter cases or with doubled slashes, then the token is replaced all the same', () => {
    const token = 'eyJhbGciOiJIUzI1NiJ9.eyJqdGkiOiJ4In0.c2lnbmF0dXJl';
    for (const path of [`/auth/V2.0/TOKENS/${token}`, `/auth/v2.0/Tokens/${token}`, `/auth/v2.0//tokens//${token}`, `/auth/v2.0/tokens/${token}/endpoints`, `/auth/tokens/${token}`]) {
      expect(logPath(path)).not.toContain(token);
      expect(logPath(path)).toMatch(/\/\[token\]/);
    }
  });

  it('when the path carries no token, then it is logged as it is', () => {
    for (const path of ['/auth/v2.0/tokens', '/auth/v2.0/tokens/', '/auth/v3/auth/tokens', '/auth/v1.0', '/auth/v1.0/users/alice/token']) {
      expect(logPath(path)).toBe(path);
    }
  });
});
