import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { createTestDatabase } from '../support/harness';
import { migrateLatest } from '../../src/db/database';
import { keepDatabaseDefaults } from '../../src/db/database-defaults';

type Setting = 'jit' | 'max_parallel_workers_per_gather';

/** What a new session on the database gets (a pool's open connections keep what they had). */
async function settingsOfNewSession(url: string): Promise<Record<Setting, string>> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (
      await client.query<Record<Setting, string>>(
        `SELECT current_setting('jit') AS jit, current_setting('max_parallel_workers_per_gather') AS max_parallel_workers_per_gather`,
      )
    ).rows[0]!;
  } finally {
    await client.end();
  }
}

const STOCK = { jit: 'on', max_parallel_workers_per_gather: '2' };
const CAIRNS = { jit: 'off', max_parallel_workers_per_gather: '0' };
const nameOf = (url: string): string => new URL(url).pathname.slice(1);

// Postgres only: PGlite has no JIT, no parallel workers and one session.
describe("Cairn's database defaults on postgres", () => {
  it('when the schema is migrated, then new sessions run without JIT or parallel workers, and again after a restore dropped the settings', async () => {
    const { db, url, drop } = await createTestDatabase('postgres');
    try {
      expect(await settingsOfNewSession(url!)).toEqual(STOCK); // the test shows nothing otherwise
      await migrateLatest(db);
      expect(await settingsOfNewSession(url!)).toEqual(CAIRNS);
      // A dump restored into a new database carries no database settings, and no migration is pending.
      await db.raw(`ALTER DATABASE ${nameOf(url!)} RESET ALL`);
      expect(await migrateLatest(db)).toEqual([]);
      expect(await settingsOfNewSession(url!)).toEqual(CAIRNS);
    } finally {
      await drop();
    }
  });

  it('when the database has a setting of its own for one of them, then migrating leaves that one and sets the other', async () => {
    const { db, url, drop } = await createTestDatabase('postgres');
    try {
      await db.raw(`ALTER DATABASE ${nameOf(url!)} SET jit = on`);
      await migrateLatest(db);
      expect(await settingsOfNewSession(url!)).toEqual({ jit: 'on', max_parallel_workers_per_gather: '0' });
      await db.raw(`ALTER DATABASE ${nameOf(url!)} RESET ALL`);
      await db.raw(`ALTER DATABASE ${nameOf(url!)} SET max_parallel_workers_per_gather = 4`);
      await keepDatabaseDefaults(db);
      expect(await settingsOfNewSession(url!)).toEqual({ jit: 'off', max_parallel_workers_per_gather: '4' });
    } finally {
      await drop();
    }
  });

  it('when the migrating role may not alter the database, then the settings are skipped instead of failing', async () => {
    const { db, url, drop } = await createTestDatabase('postgres');
    const role = `cairn_test_defaults_${randomBytes(4).toString('hex')}`;
    try {
      await db.raw(`CREATE ROLE ${role} NOLOGIN`);
      await db.transaction(async (trx) => {
        await trx.raw(`SET LOCAL ROLE ${role}`);
        await keepDatabaseDefaults(trx);
      });
      expect(await settingsOfNewSession(url!)).toEqual(STOCK);
    } finally {
      await db.raw(`DROP ROLE IF EXISTS ${role}`);
      await drop();
    }
  });
});
