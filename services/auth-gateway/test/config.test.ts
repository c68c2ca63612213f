import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, describeConfig } from '@cairn/config';
import { configSpec, readConfig } from '../src';
import { s3Keyring } from '../src/s3/s3-deps';

function problemsOf(env: Record<string, string>): string[] {
  try {
    readConfig(env);
  } catch (e) {
    if (e instanceof ConfigError) return e.problems;
    throw e;
  }
  throw new Error('readConfig accepted the environment');
}

describe('readConfig', () => {
  it('when nothing is set, then the gateway listens on 0.0.0.0:5000 for the default cluster', () => {
    expect(readConfig({})).toEqual({
      host: '0.0.0.0',
      port: 5000,
      logLevel: 'info',
      logFormat: 'auto',
      tokenLifetime: 86400,
      tokensPerUser: 1000,
      v1TokenReuse: true,
      verifyCacheSeconds: 60,
      userCacheMs: 250,
      failureLimit: 10,
      failureWindow: 300,
      addressFailureLimit: 100,
      addressFailureWindow: 300,
      userFailureLimit: 100,
      userFailureWindow: 3600,
      knownAddressDays: 30,
      ec2ChangeLimit: 20,
      ec2ChangeWindow: 3600,
      trustProxy: false,
      poolMax: 10,
      startupTimeout: 60,
      s3tokensRequireServiceToken: true,
      standbyMaxLag: 5,
      standbyStale: 'refuse',
    });
  });

  it('when every variable is set, then each is read and converted', () => {
    expect(
      readConfig({
        CAIRN_GATEWAY_HOST: '127.0.0.1',
        CAIRN_GATEWAY_PORT: '5001',
        CAIRN_GATEWAY_CLUSTER: '0b8e1c1e-6f0c-4a4b-9a8e-2f1d3c4b5a69',
        CAIRN_GATEWAY_PUBLIC_URL: 'https://auth.example.com/auth',
        DATABASE_URL: 'postgres://cairn:pw@standby:5432/cairn',
        CAIRN_PRIMARY_DATABASE_URL: 'postgres://cairn:pw@primary:5432/cairn',
        CAIRN_STANDBY_MAX_LAG: '30',
        CAIRN_STANDBY_STALE: 'serve',
        REDIS_URL: 'redis://redis:6379/0',
        LOG_LEVEL: 'debug',
        LOG_FORMAT: 'json',
        CAIRN_TOKENS_PER_USER: '50',
        CAIRN_V1_TOKEN_REUSE: 'false',
        CAIRN_PASSWORD_HASH_PARAMS: 'ln=16,r=8,p=1',
      }),
    ).toEqual({
      host: '127.0.0.1',
      port: 5001,
      cluster: '0b8e1c1e-6f0c-4a4b-9a8e-2f1d3c4b5a69',
      publicUrl: 'https://auth.example.com/auth',
      databaseUrl: 'postgres://cairn:pw@standby:5432/cairn',
      primaryDatabaseUrl: 'postgres://cairn:pw@primary:5432/cairn',
      standbyMaxLag: 30,
      standbyStale: 'serve',
      redisUrl: 'redis://redis:6379/0',
      logLevel: 'debug',
      logFormat: 'json',
      tokenLifetime: 86400,
      tokensPerUser: 50,
      v1TokenReuse: false,
      verifyCacheSeconds: 60,
      userCacheMs: 250,
      failureLimit: 10,
      failureWindow: 300,
      addressFailureLimit: 100,
      addressFailureWindow: 300,
      userFailureLimit: 100,
      userFailureWindow: 3600,
      knownAddressDays: 30,
      passwordHashParams: { logN: 16, r: 8, p: 1 },
      ec2ChangeLimit: 20,
      ec2ChangeWindow: 3600,
      trustProxy: false,
      poolMax: 10,
      startupTimeout: 60,
      s3tokensRequireServiceToken: true,
    });
  });

  it('when CAIRN_STANDBY_STALE is neither refuse nor serve, or the lag limit is under a second, then the error names them', () => {
    const problems = problemsOf({ CAIRN_STANDBY_STALE: 'maybe', CAIRN_STANDBY_MAX_LAG: '0.5' });
    expect(problems).toHaveLength(2);
    expect(problems.join(' ')).toContain('CAIRN_STANDBY_STALE="maybe"');
    expect(problems.join(' ')).toContain('CAIRN_STANDBY_MAX_LAG="0.5"');
  });

  it('when LOG_FORMAT is not auto, json or pretty, then the error names it', () => {
    const problems = problemsOf({ LOG_FORMAT: 'yaml' });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain('LOG_FORMAT="yaml"');
  });

  it('when the port is not a port number, then the error names CAIRN_GATEWAY_PORT', () => {
    for (const port of ['http', '65536', '-1', '50.5']) {
      const problems = problemsOf({ CAIRN_GATEWAY_PORT: port });
      expect(problems).toHaveLength(1);
      expect(problems[0]).toContain(`CAIRN_GATEWAY_PORT="${port}"`);
    }
  });

  it('when several values are wrong, then all are reported together and secrets are not echoed', () => {
    const problems = problemsOf({
      CAIRN_GATEWAY_PORT: 'x',
      CAIRN_GATEWAY_HOST: 'not a host',
      CAIRN_GATEWAY_CLUSTER: 'a/b',
      CAIRN_GATEWAY_PUBLIC_URL: 'ftp://auth.example.com/auth',
      REDIS_URL: 'http://user:hunter2@redis',
      DATABASE_URL: 'mysql://user:swordfish@db',
      LOG_LEVEL: 'loud',
    });
    const text = problems.join('\n');
    for (const name of [
      'CAIRN_GATEWAY_PORT',
      'CAIRN_GATEWAY_HOST',
      'CAIRN_GATEWAY_CLUSTER',
      'CAIRN_GATEWAY_PUBLIC_URL',
      'REDIS_URL',
      'DATABASE_URL',
      'LOG_LEVEL',
    ]) {
      expect(text).toContain(`${name}=`);
    }
    expect(problems).toHaveLength(7);
    expect(text).not.toContain('hunter2');
    expect(text).not.toContain('swordfish');
  });

  it('when CAIRN_USER_NOTICES_URL is off or a Postgres URL, then it is kept; anything else is refused by name', () => {
    expect(readConfig({ CAIRN_USER_NOTICES_URL: 'off' }).userNoticesUrl).toBe('off');
    expect(readConfig({ CAIRN_USER_NOTICES_URL: 'postgres://gw@db:5432/cairn' }).userNoticesUrl).toBe(
      'postgres://gw@db:5432/cairn',
    );
    expect(problemsOf({ CAIRN_USER_NOTICES_URL: 'redis://x' }).join('\n')).toMatch(/CAIRN_USER_NOTICES_URL/);
  });

  it('when the public URL ends in slashes, then they are dropped', () => {
    expect(readConfig({ CAIRN_GATEWAY_PUBLIC_URL: 'https://auth.example.com/auth//' }).publicUrl).toBe(
      'https://auth.example.com/auth',
    );
  });

  describe('with secret files', () => {
    let dir: string;
    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), 'cairn-gw-config-'));
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    it('when DATABASE_URL_FILE and REDIS_URL_FILE name files, then their contents are used', () => {
      writeFileSync(join(dir, 'db'), 'postgres://cairn:pw@db/cairn\n');
      writeFileSync(join(dir, 'redis'), 'rediss://:pw@redis:6380');
      const config = readConfig({ DATABASE_URL_FILE: join(dir, 'db'), REDIS_URL_FILE: join(dir, 'redis') });
      expect(config.databaseUrl).toBe('postgres://cairn:pw@db/cairn');
      expect(config.redisUrl).toBe('rediss://:pw@redis:6380');
    });

    it('when a secret is set both directly and by file, then the conflict is reported', () => {
      writeFileSync(join(dir, 'redis'), 'redis://redis:6379');
      expect(problemsOf({ REDIS_URL: 'redis://other:6379', REDIS_URL_FILE: join(dir, 'redis') })).toEqual([
        'REDIS_URL and REDIS_URL_FILE are both set; use one.',
      ]);
    });
  });

  it('when the spec is described, then every variable appears with its default', () => {
    const table = describeConfig(configSpec);
    expect(table).toContain('| `CAIRN_GATEWAY_PORT` | `5000` |');
    expect(table).toContain(
      "| `CAIRN_GATEWAY_CLUSTER` | — | The cluster this gateway authenticates for: its id, name or uuid. Unset: 'default'",
    );
    expect(table).toContain('`REDIS_URL` (or `REDIS_URL_FILE`)');
    expect(table).toContain('`DATABASE_URL` (or `DATABASE_URL_FILE`)');
  });
});

describe('the password hash parameters', () => {
  it('when CAIRN_PASSWORD_HASH_PARAMS is unset or set, then unknown users are checked with those parameters; a value past the bounds is named', () => {
    // Unset: the verifier's own default (DEFAULT_SCRYPT_PARAMS).
    expect(readConfig({}).passwordHashParams).toBeUndefined();
    expect(readConfig({ CAIRN_PASSWORD_HASH_PARAMS: 'ln=16,r=8,p=1' }).passwordHashParams).toEqual({
      logN: 16,
      r: 8,
      p: 1,
    });
    const [problem] = problemsOf({ CAIRN_PASSWORD_HASH_PARAMS: 'ln=8,r=8,p=1' });
    expect(problem).toMatch(
      /^CAIRN_PASSWORD_HASH_PARAMS="ln=8,r=8,p=1": scrypt's memory \(128·N·r bytes\) must be at least 1 MiB; ln=8,r=8,p=1 needs 0\.3 MiB — scrypt parameters/,
    );
  });
});

describe('the S3 settings', () => {
  it('when CAIRN_S3TOKENS_REQUIRE_SERVICE_TOKEN is false, then s3tokens asks for no service token; anything but a boolean is named', () => {
    expect(readConfig({ CAIRN_S3TOKENS_REQUIRE_SERVICE_TOKEN: 'false' }).s3tokensRequireServiceToken).toBe(false);
    expect(problemsOf({ CAIRN_S3TOKENS_REQUIRE_SERVICE_TOKEN: 'maybe' })[0]).toContain(
      'CAIRN_S3TOKENS_REQUIRE_SERVICE_TOKEN',
    );
  });

  it('when CAIRN_S3_SECRET_KEYS is malformed, then start-up fails with a ConfigError that names the entry and echoes no key', () => {
    const key = 'c2hvcnQ=';
    expect(() => s3Keyring({ s3SecretKeys: `a:${key}` })).toThrow(ConfigError);
    try {
      s3Keyring({ s3SecretKeys: `a:${key}` });
    } catch (e) {
      expect(String((e as Error).message)).toContain("key id 'a'");
      expect(String((e as Error).message)).not.toContain(key);
    }
    expect(s3Keyring({})).toBeUndefined();
  });
});
