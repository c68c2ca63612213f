import { DB_KINDS, createTestDatabase } from '../support/harness';
import { migrateLatest } from '../../src/db/database';
import { migrationSource } from '../../src/db/migrations';
import { ensureHourlyPartitions, maintainUtilization } from '../../src/repositories/utilization-partitions';
import { TOTAL_POLICY, upsertStorage } from '../../src/repositories/utilization';

type Db = Awaited<ReturnType<typeof createTestDatabase>>['db'];
const at = (iso: string) => Date.parse(iso);

const sample = (account: string, iso: string, bytesUsed: number) => ({
  policyIndex: TOTAL_POLICY,
  account,
  hour: new Date(iso),
  bytesUsed,
  objectCount: bytesUsed + 1,
  containerCount: 1,
  slots: 1n,
  slotCount: 1,
});

async function clusters(db: Db, n: number): Promise<number[]> {
  const rows = await db('clusters')
    .insert(
      Array.from({ length: n }, (_, i) => ({
        name: `c${i}`,
        uuid: `3f0c4a4e-2a7e-4d55-9a3b-1f2e3d4c5b6${i}`,
        auth_url: 'https://c/auth',
        storage_url: 'https://c/v1',
      })),
    )
    .returning('id');
  return rows.map((r: { id: number }) => r.id);
}

const addUser = async (db: Db, clusterId: number, username: string): Promise<string> => {
  const [row] = await db('storage_users')
    .insert({ cluster_id: clusterId, username, password_hash: 'x' })
    .returning('id');
  return String((row as { id: string | number }).id);
};

/** Each user's usage row as `<cluster> <user> <day hour> <bytes>`. */
const usage = async (db: Db) =>
  (
    (await db.raw(
      `SELECT u.cluster_id, u.username, to_char(s.hour AT TIME ZONE 'UTC', 'DD HH24') AS h, s.bytes_used::text AS b
         FROM utilization_storage_latest s JOIN storage_users u ON u.id = s.user_id ORDER BY u.cluster_id, u.username`,
    )) as { rows: Array<{ cluster_id: number; username: string; h: string; b: string }> }
  ).rows.map((r) => `${r.cluster_id} ${r.username} ${r.h} ${r.b}`);

/** The same, found by the account's name: what the user ids must agree with. */
const expected = async (db: Db) =>
  (
    (await db.raw(
      `SELECT u.cluster_id, u.username, to_char(l.hour AT TIME ZONE 'UTC', 'DD HH24') AS h, l.bytes_used::text AS b
         FROM utilization_storage_latest l JOIN storage_users u
           ON u.cluster_id = l.cluster_id AND l.account = ('AUTH_' || u.username) COLLATE "default"
        ORDER BY u.cluster_id, u.username`,
    )) as { rows: Array<{ cluster_id: number; username: string; h: string; b: string }> }
  ).rows.map((r) => `${r.cluster_id} ${r.username} ${r.h} ${r.b}`);

describe.each(DB_KINDS)('latest storage by user id on %s', (kind) => {
  it('when samples arrive, users are created and deleted, and retention drops a week, then the latest row of each user account, and only that row, names the user', async () => {
    const { db, drop } = await createTestDatabase(kind);
    try {
      await migrateLatest(db);
      await ensureHourlyPartitions(db, [at('2026-12-10T00:00:00Z'), at('2026-12-16T00:00:00Z')]);
      const [c1, c2] = await clusters(db, 2);
      await addUser(db, c1!, 'a');
      await addUser(db, c2!, 'a');
      // An account that is no user's, and one whose name only starts like a user's.
      await upsertStorage(db, c1!, [
        sample('AUTH_a', '2026-12-10T05:00:00Z', 10),
        sample('AUTH_ab', '2026-12-10T05:00:00Z', 11),
        sample('OTHER_a', '2026-12-10T05:00:00Z', 12),
      ]);
      expect(await usage(db)).toEqual([`${c1} a 10 05 10`]);
      // Moved forward by a newer hour, not back by an older one; the other cluster's a is its own.
      await upsertStorage(db, c1!, [sample('AUTH_a', '2026-12-16T05:00:00Z', 50)]);
      await upsertStorage(db, c1!, [sample('AUTH_a', '2026-12-09T05:00:00Z', 1)]);
      await upsertStorage(db, c2!, [sample('AUTH_a', '2026-12-10T07:00:00Z', 3)]);
      expect(await usage(db)).toEqual([`${c1} a 16 05 50`, `${c2} a 10 07 3`]);
      // A user created after its account was sampled (an import) has its usage at once.
      const ab = await addUser(db, c1!, 'ab');
      expect(await usage(db)).toEqual([`${c1} a 16 05 50`, `${c1} ab 10 05 11`, `${c2} a 10 07 3`]);
      // Deleted: its row goes; created again under the same name, it gets the account's row again.
      await db('storage_users').where({ id: ab }).delete();
      expect(await db('utilization_storage_latest').where({ user_id: ab })).toEqual([]);
      await addUser(db, c1!, 'ab');
      expect(await usage(db)).toEqual(await expected(db));
      expect(await usage(db)).toHaveLength(3);
      // A row that missed its user (created in the same instant, by another transaction) gets it with its next sample.
      await db('utilization_storage_latest').where({ cluster_id: c2, account: 'AUTH_a' }).update({ user_id: null });
      await upsertStorage(db, c2!, [sample('AUTH_a', '2026-12-10T08:00:00Z', 4)]);
      expect(await usage(db)).toEqual([`${c1} a 16 05 50`, `${c1} ab 10 05 11`, `${c2} a 10 08 4`]);
      // Kept 7 days: on Dec 22 the week of Dec 7 goes; c1's a keeps its sample of Dec 16, the others have none.
      await maintainUtilization(db, { hourlyDays: 7, dailyDays: 1095 }, new Date(at('2026-12-22T12:00:00Z')));
      expect(await usage(db)).toEqual([`${c1} a 16 05 50`]);
      expect(await usage(db)).toEqual(await expected(db));
    } finally {
      await drop();
    }
  });

  it('when the column is added to a database with users and samples, then it is filled, and samples and users written after keep it', async () => {
    const { db, drop } = await createTestDatabase(kind);
    try {
      await migrateLatest(db);
      await db.migrate.down({ migrationSource, name: '20261128220000_storage_latest_user_id' });
      await ensureHourlyPartitions(db, [at('2026-12-10T00:00:00Z')]);
      const c1 = (await clusters(db, 1))[0]!;
      for (const name of ['a', 'b', 'c']) await addUser(db, c1, name);
      await upsertStorage(db, c1, [
        sample('AUTH_a', '2026-12-10T05:00:00Z', 10),
        sample('AUTH_b', '2026-12-10T04:00:00Z', 20),
        sample('AUTH_z', '2026-12-10T05:00:00Z', 30),
      ]);
      await migrateLatest(db);
      expect(await usage(db)).toEqual([`${c1} a 10 05 10`, `${c1} b 10 04 20`]);
      // Written as the previous release writes (its own upsert of the hourly table): kept by the triggers.
      await db.raw(
        `INSERT INTO utilization_storage_hourly AS h (cluster_id, policy_index, account, hour, bytes_used, object_count, container_count)
         VALUES (?, -1, 'AUTH_c', '2026-12-10T06:00:00Z', 6, 7, 1), (?, -1, 'AUTH_a', '2026-12-10T05:00:00Z', 25, 26, 1)
         ON CONFLICT (cluster_id, account, policy_index, hour) DO UPDATE SET bytes_used = greatest(h.bytes_used, excluded.bytes_used)`,
        [c1, c1],
      );
      expect(await usage(db)).toEqual([`${c1} a 10 05 25`, `${c1} b 10 04 20`, `${c1} c 10 06 6`]);
      // A user created as the previous release creates one, after its account was sampled.
      await db.raw(`INSERT INTO storage_users (cluster_id, username, password_hash) VALUES (?, 'z', 'x')`, [c1]);
      expect(await usage(db)).toEqual([`${c1} a 10 05 25`, `${c1} b 10 04 20`, `${c1} c 10 06 6`, `${c1} z 10 05 30`]);
      expect(await usage(db)).toEqual(await expected(db));
    } finally {
      await drop();
    }
  });
});
