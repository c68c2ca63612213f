import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { createTestDatabase } from '../support/harness';
import { migrateLatest } from '../../src/db/database';
import { down, up } from '../../src/db/migrations/20261130060000_database_jit_off';

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

// Postgres only: PGlite has no JIT and one session.
describe("Cairn's database default for JIT on postgres", () => {
  it('when the schema is migrated, then new sessions run without JIT, and rolling back gives the server default again', async () => {
    const { db, url, drop } = await createTestDatabase('postgres');
    try {
      const serverDefault = await jitOfNewSession(url!);
      expect(serverDefault).toBe('on'); // stock Postgres; the test shows nothing otherwise
      await migrateLatest(db);
      expect(await jitOfNewSession(url!)).toBe('off');
      await down(db);
      expect(await jitOfNewSession(url!)).toBe(serverDefault);
    } finally {
      await drop();
    }
  });

  it('when the database has a jit setting of its own, then neither the migration nor rolling back changes it', async () => {
    const { db, url, drop } = await createTestDatabase('postgres');
    try {
      await db.raw(`ALTER DATABASE ${new URL(url!).pathname.slice(1)} SET jit = on`);
      await migrateLatest(db);
      expect(await jitOfNewSession(url!)).toBe('on');
      await down(db);
      expect(await jitOfNewSession(url!)).toBe('on');
    } finally {
      await drop();
    }
  });

  it('when the migrating role may not alter the database, then the migration skips the setting instead of failing', async () => {
    const { db, url, drop } = await createTestDatabase('postgres');
    const role = `cairn_test_jit_${randomBytes(4).toString('hex')}`;
    try {
      await db.raw(`CREATE ROLE ${role} NOLOGIN`);
      await db.transaction(async (trx) => {
        await trx.raw(`SET LOCAL ROLE ${role}`);
        await up(trx);
      });
      expect(await jitOfNewSession(url!)).toBe('on');
    } finally {
      await db.raw(`DROP ROLE IF EXISTS ${role}`);
      await drop();
    }
  });
});
