import { randomBytes } from 'node:crypto';
import knex, { type Knex } from 'knex';
import { cairn } from '../support/processes';
import { POSTGRES_ADMIN_URL as ADMIN_URL } from '../support/local-services';

/**
 * `cairn migrate --rollback` as docs/releasing.md tells an operator to run it after a bad upgrade:
 * it reverts the last batch (what the last migrate applied), and only that; `cairn migrate`
 * applies it again.
 */
const LAST = '20261127000000_audit_retention';

describe('cairn migrate --rollback', () => {
  let admin: Knex;
  let db: Knex;
  let dbName: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    admin = knex({ client: 'pg', connection: ADMIN_URL, pool: { min: 0, max: 1 } });
    dbName = `cairn_rollback_${process.pid}_${randomBytes(4).toString('hex')}`;
    await admin.raw(`CREATE DATABASE ${dbName}`);
    const url = new URL(ADMIN_URL);
    url.pathname = `/${dbName}`;
    env = { DATABASE_URL: url.toString() };
    db = knex({ client: 'pg', connection: url.toString(), pool: { min: 0, max: 1 } });
  });
  afterAll(async () => {
    await db.destroy();
    await admin.raw(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    await admin.destroy();
  });

  const applied = async () =>
    (await db('knex_migrations').orderBy('id').select('name', 'batch')) as { name: string; batch: number }[];
  const indexExists = async () =>
    ((await db.raw("SELECT to_regclass('audit_log_storage_user_idx') AS i")).rows[0] as { i: string | null }).i !==
    null;

  it('when the last batch is rolled back, then exactly its migrations are reverted, and migrate applies them again', async () => {
    const first = await cairn(['migrate'], env);
    expect(first.code).toBe(0);
    // As if this migration had come with an upgrade, in a batch of its own (newer ones do not
    // depend on its index).
    await db('knex_migrations').where({ name: LAST }).update({ batch: 2 });
    const before = await applied();
    expect(await indexExists()).toBe(true);

    const rolled = await cairn(['migrate', '--rollback'], env);
    expect(rolled.out).toContain(`Reverted: ${LAST}\n`);
    expect(rolled.code).toBe(0);
    expect(await applied()).toEqual(before.filter((m) => m.name !== LAST));
    expect(await indexExists()).toBe(false);

    const again = await cairn(['migrate'], env);
    expect(again.code).toBe(0);
    // Re-applied last, so compared as a set: the same migrations, each once.
    expect((await applied()).map((m) => m.name).sort()).toEqual(before.map((m) => m.name).sort());
    expect(await indexExists()).toBe(true);
  });
});
