import { randomBytes } from 'node:crypto';
import { parseS3SecretKeys, sealS3Secret, type S3SecretKeyring } from '@cairn/domain';
import { readConfig } from '../../src/config';
import { createLogger, type Deps } from '../../src/deps';
import { startManagementApi, UnopenableSecretsError } from '../../src/server';
import { createTestDatabase, DB_KINDS, type TestDatabase } from '../support/harness';

/**
 * A start whose S3 keys do not open the sealed secrets the database holds refuses, naming the key
 * id and what to set, instead of serving credentials whose every signature would fail (and say so
 * only at their first use). On Postgres the keys are CAIRN_S3_SECRET_KEYS; the embedded start's
 * own key file is tested with the launcher (test-e2e/backup/embedded.test.ts).
 */
const key = () => randomBytes(32).toString('base64');
const K1 = key();
const K2 = key();

const ring = (spec: string, current?: string): S3SecretKeyring => {
  const parsed = parseS3SecretKeys(spec, current);
  if (!parsed.ok) throw new Error(parsed.problems.join('; '));
  return parsed.keyring;
};

describe.each(DB_KINDS)('start with sealed S3 secrets in the database (%s)', (kind) => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase(kind, { migrated: true });
    const [cluster] = (await database
      .db('clusters')
      .insert({
        name: 'keys',
        uuid: '00000000-0000-4000-8000-00000000cafe',
        auth_url: 'http://keys.example/auth',
        storage_url: 'http://keys.example/v1',
      })
      .returning('id')) as Array<{ id: number }>;
    const [user] = (await database
      .db('storage_users')
      .insert({ cluster_id: cluster!.id, username: 'sealed', password_hash: 'not-used-here' })
      .returning('id')) as Array<{ id: string }>;
    const k1 = ring(`k1:${K1}`);
    const rows = ['SEALEDKEY00000000001', 'SEALEDKEY00000000002'].map((accessKey) => ({
      storage_user_id: user!.id,
      access_key: accessKey,
      secret_sealed: sealS3Secret(k1, accessKey, randomBytes(30).toString('base64')),
    }));
    // The first row altered (its sealed value copied from another access key's): it alone does not make k1 look wrong.
    await database
      .db('s3_credentials')
      .insert({ storage_user_id: user!.id, access_key: 'SEALEDKEY00000000000', secret_sealed: rows[0]!.secret_sealed });
    await database.db('s3_credentials').insert(rows);
  });
  afterAll(() => database.drop());

  async function start(keyring: S3SecretKeyring | undefined) {
    const config = readConfig({ CAIRN_API_PORT: '0', CAIRN_API_HOST: '127.0.0.1', CAIRN_STARTUP_TIMEOUT: '30' });
    const deps: Deps = {
      db: database.db,
      log: createLogger('silent'),
      hashPassword: async (p) => p,
      apiKeyCacheMs: 0,
      ...(keyring ? { s3Keyring: keyring } : {}),
    };
    const started = Date.now();
    const outcome = await startManagementApi({ ...config, heartbeatMs: 0 }, deps).then(
      (running) => ({ running }),
      (e: unknown) => ({ error: e as Error }),
    );
    return { ...outcome, ms: Date.now() - started };
  }

  it.each([
    [
      'CAIRN_S3_SECRET_KEYS lacks the key id they are sealed under',
      () => ring(`k2:${K2}`),
      "The database holds 3 S3 credential(s) whose secret is sealed under key id 'k1', which is not in CAIRN_S3_SECRET_KEYS: add that key (the one in use when they were sealed, docs/s3.md) and start again. Nothing was changed.",
    ],
    [
      'no CAIRN_S3_SECRET_KEYS is set',
      () => undefined,
      "The database holds 3 S3 credential(s) whose secret is sealed under key id 'k1', which is not in CAIRN_S3_SECRET_KEYS",
    ],
    [
      'CAIRN_S3_SECRET_KEYS gives that key id another key',
      () => ring(`k1:${K2}`),
      "The database holds 3 S3 credential(s) whose secret is sealed under key id 'k1', and they do not open under the key CAIRN_S3_SECRET_KEYS gives that id (it is another key than the one they were sealed with): set 'k1' to the key they were sealed with (docs/s3.md) and start again. Nothing was changed.",
    ],
  ])('when %s, then the start refuses at once with a sentence naming the key id', async (_, keyring, sentence) => {
    const outcome = await start(keyring());
    expect('running' in outcome).toBe(false);
    const error = (outcome as { error: Error }).error;
    expect(error).toBeInstanceOf(UnopenableSecretsError);
    expect(error.message).toContain(sentence);
    // Not retried until CAIRN_STARTUP_TIMEOUT: keys do not appear by waiting.
    expect(outcome.ms).toBeLessThan(10_000);
  });

  it('when the keys open them (the old key kept beside a new current one), then it starts', async () => {
    const outcome = await start(ring(`k1:${K1},k2:${K2}`, 'k2'));
    expect('error' in outcome ? outcome.error : undefined).toBeUndefined();
    const { running } = outcome as { running: { port: number; close: () => Promise<void> } };
    expect((await fetch(`http://127.0.0.1:${running.port}/healthz`)).status).toBe(200);
    await running.close();
  });
});
