import { ConfigError } from '@cairn/config';
import { createDeps, readConfig } from '../../src';

describe('CAIRN_PASSWORD_HASH_PARAMS', () => {
  it('when it is set, then the passwords the API is given are hashed with those parameters', async () => {
    // No query is made: the database is only named.
    const deps = createDeps(
      readConfig({
        DATABASE_URL: 'postgres://127.0.0.1:9/none',
        LOG_LEVEL: 'silent',
        CAIRN_PASSWORD_HASH_PARAMS: 'ln=11,r=8,p=1',
      }),
    );
    try {
      await expect(deps.hashPassword('a password')).resolves.toMatch(/^\$scrypt\$ln=11,r=8,p=1\$/);
    } finally {
      await deps.db.destroy();
    }
  });

  it('when it is unset, then Cairn’s default; when it is past the bounds, then start-up names the problem', () => {
    expect(readConfig({}).hashParams).toEqual({ logN: 15, r: 8, p: 3 });
    expect(() => readConfig({ CAIRN_PASSWORD_HASH_PARAMS: 'ln=20,r=8,p=1' })).toThrow(
      new ConfigError([
        "CAIRN_PASSWORD_HASH_PARAMS: scrypt's memory (128·N·r bytes) must be at most 128 MiB, 4 times what Cairn's own hash needs; ln=20,r=8,p=1 needs 1,024 MiB.",
      ]),
    );
  });
});
