import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { createTestDatabase } from '../support/harness';
import { migrateLatest } from '../../src/db/database';
import { keepDatabaseDefaults } from '../../src/db/database-defaults';

/** What a new session on the database gets (a pool's open connections keep what they had). */
async function jitOfNewSession(url: string): Promise<string> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<{ jit: string }>('SHOW jit')).rows[0]!.jit;
  } finally {
    await client.end();
  }
}

const nameOf = (url: string): string => new URL(url).pathname.slice(1);

// Postgres only: PGlite has no JIT and one session.
describe("Cairn's database default for JIT on postgres", () => {
  it('when the schema is migrated, then new sessions run without JIT, and again after a restore dropped the setting', async () => {
    const { db, url, drop } = await createTestDatabase('postgres');
    try {
      expect(await jitOfNewSession(url!)).toBe('on'); // stock Postgres; the test shows nothing otherwise
      await migrateLatest(db);
      expect(await jitOfNewSession(url!)).toBe('off');
      // A dump restored into a new database carries no database settings, and no migration is pending.
      await db.raw(`ALTER DATABASE ${nameOf(url!)} RESET jit`);
      expect(await migrateLatest(db)).toEqual([]);
      expect(await jitOfNewSession(url!)).toBe('off');
    } finally {
      await drop();
    }
  });

  it('when the database has a jit setting of its own, then migrating leaves it', async () => {
    const { db, url, drop } = await createTestDatabase('postgres');
    try {
      await db.raw(`ALTER DATABASE ${nameOf(url!)} SET jit = on`);
      await migrateLatest(db);
      expect(await jitOfNewSession(url!)).toBe('on');
    } finally {
      await drop();
    }
  });

  it('when the migrating role may not alter the database, then the setting is skipped instead of failing', async () => {
    const { db, url, drop } = await createTestDatabase('postgres');
    const role = `cairn_test_jit_${randomBytes(4).toString('hex')}`;
    try {
      await db.raw(`CREATE ROLE ${role} NOLOGIN`);
      await db.transaction(async (trx) => {
        await trx.raw(`SET LOCAL ROLE ${role}`);
        await keepDatabaseDefaults(trx);
      });
      expect(await jitOfNewSession(url!)).toBe('on');
    } finally {
      await db.raw(`DROP ROLE IF EXISTS ${role}`);
      await drop();
    }
  });
});
