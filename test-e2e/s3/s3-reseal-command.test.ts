import { randomBytes } from 'node:crypto';
import knex, { type Knex } from 'knex';
import { openS3Secret, parseS3SecretKeys, sealS3Secret, type S3SecretKeyring } from '@cairn/domain';
import * as api from '@cairn/management-api';
import { cairn } from '../support/processes';
import { POSTGRES_ADMIN_URL as ADMIN_URL } from '../support/local-services';

/**
 * `cairn s3 reseal`, the key rotation step of docs/s3.md, as an operator runs it: a process with
 * DATABASE_URL and the keys in its environment, on a real Postgres database. The walk itself is
 * tested in the management API's integration tests; this checks what the command says and exits with.
 */

const ring = (spec: string, current?: string): S3SecretKeyring => {
  const parsed = parseS3SecretKeys(spec, current);
  if (!parsed.ok) throw new Error(parsed.problems.join('; '));
  return parsed.keyring;
};

describe('cairn s3 reseal', () => {
  const k1 = randomBytes(32).toString('base64');
  const k2 = randomBytes(32).toString('base64');
  let admin: Knex;
  let db: Knex;
  let dbName: string;
  let dbUrl: string;
  let userId: string;

  const addCredential = async (accessKey: string, sealed: string) =>
    db('s3_credentials').insert({ storage_user_id: userId, access_key: accessKey, secret_sealed: sealed });

  beforeAll(async () => {
    admin = knex({ client: 'pg', connection: ADMIN_URL, pool: { min: 0, max: 1 } });
    dbName = `cairn_reseal_${process.pid}_${randomBytes(4).toString('hex')}`;
    await admin.raw(`CREATE DATABASE ${dbName}`);
    const url = new URL(ADMIN_URL);
    url.pathname = `/${dbName}`;
    dbUrl = url.toString();
    db = api.createDatabase({ url: dbUrl, poolMax: 2 });
    await api.migrateLatest(db);
    const [cluster] = await db('clusters')
      .insert({
        name: 'c1',
        uuid: '0b7f5a52-3c49-4a53-9a0c-4f0bb0f0b001',
        auth_url: 'http://127.0.0.1:5000/auth',
        storage_url: 'http://127.0.0.1:8080/v1',
      })
      .returning('id');
    const [user] = await db('storage_users')
      .insert({ cluster_id: (cluster as { id: number }).id, username: 'rotor', password_hash: 'not-used-here' })
      .returning('id');
    userId = String((user as { id: string }).id);
  });

  afterAll(async () => {
    await db?.destroy();
    await admin?.raw(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    await admin?.destroy();
  });

  it('when a new key is current, then it reseals every secret under it, says so, and exits 0; a second run has nothing to do', async () => {
    const secret = randomBytes(30).toString('base64');
    await addCredential('ROTORKEY000000000001', sealS3Secret(ring(`k1:${k1}`), 'ROTORKEY000000000001', secret));
    const env = { DATABASE_URL: dbUrl, CAIRN_S3_SECRET_KEYS: `k1:${k1},k2:${k2}`, CAIRN_S3_CURRENT_KEY_ID: 'k2' };

    const first = await cairn(['s3', 'reseal'], env);
    expect(first.out).toContain("1 S3 credential(s) checked, 1 resealed under key 'k2'.");
    expect(first.code).toBe(0);
    const row = (await db('s3_credentials').where({ access_key: 'ROTORKEY000000000001' }).first()) as {
      secret_sealed: string;
    };
    expect(openS3Secret(ring(`k2:${k2}`), 'ROTORKEY000000000001', row.secret_sealed)).toBe(secret);

    const again = await cairn(['s3', 'reseal'], env);
    expect(again.out).toContain("1 S3 credential(s) checked, 0 resealed under key 'k2'.");
    expect(again.code).toBe(0);
  });

  it('when a secret opens with none of the keys, then it is left as it is, named, and the command exits 1', async () => {
    await addCredential('ROTORSTRAY0000000001', 'v1:gone:AAAA:AAAA:AAAA');
    const run = await cairn(['s3', 'reseal'], { DATABASE_URL: dbUrl, CAIRN_S3_SECRET_KEYS: `k2:${k2}` });
    expect(run.out).toMatch(
      /1 could not be opened with the configured keys and were left as they are .*: ROTORSTRAY0000000001/,
    );
    expect(run.code).toBe(1);
    expect(
      ((await db('s3_credentials').where({ access_key: 'ROTORSTRAY0000000001' }).first()) as { secret_sealed: string })
        .secret_sealed,
    ).toBe('v1:gone:AAAA:AAAA:AAAA');
  });

  it('when no keys are configured, then it says which settings it needs, exits non-zero and changes nothing', async () => {
    const before = await db('s3_credentials').orderBy('access_key').select('access_key', 'secret_sealed');
    const run = await cairn(['s3', 'reseal'], { DATABASE_URL: dbUrl });
    expect(run.out).toMatch(/CAIRN_S3_SECRET_KEYS/);
    expect(run.out).not.toMatch(/\n\s+at /); // a sentence, not a stack trace
    expect(run.code).not.toBe(0);
    expect(await db('s3_credentials').orderBy('access_key').select('access_key', 'secret_sealed')).toEqual(before);
  });
});
