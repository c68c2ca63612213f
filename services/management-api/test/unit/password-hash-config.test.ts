import { ConfigError } from '@cairn/config';
import { createDeps, readConfig } from '../../src';

describe('CAIRN_PASSWORD_HASH_PARAMS', () => {
  it.each([
    ['set', { CAIRN_PASSWORD_HASH_PARAMS: 'ln=11,r=8,p=1' }, /^\$scrypt\$ln=11,r=8,p=1\$/],
    ['unset', {}, /^\$scrypt\$ln=15,r=8,p=3\$/],
  ])(
    'when it is %s, then the passwords the API is given are hashed with it or Cairn’s default',
    async (_, env, made) => {
      // No query is made: the database is only named.
      const deps = createDeps(readConfig({ DATABASE_URL: 'postgres://127.0.0.1:9/none', LOG_LEVEL: 'silent', ...env }));
      try {
        await expect(deps.hashPassword('a password')).resolves.toMatch(made);
      } finally {
        await deps.db.destroy();
      }
    },
  );

  it('when it is past the bounds, then start-up names the problem', () => {
    expect(() => readConfig({ CAIRN_PASSWORD_HASH_PARAMS: 'ln=20,r=8,p=1' })).toThrow(ConfigError);
    expect(() => readConfig({ CAIRN_PASSWORD_HASH_PARAMS: 'ln=20,r=8,p=1' })).toThrow(
      'CAIRN_PASSWORD_HASH_PARAMS="ln=20,r=8,p=1": scrypt\'s memory (128·N·r bytes) must be at most 128 MiB, 4 times what Cairn\'s own hash needs; ln=20,r=8,p=1 needs 1,024 MiB — ',
    );
  });
});
