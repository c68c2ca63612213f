import { DB_KINDS, createTestDatabase } from '../support/harness';
import { ensureHourlyPartitions, maintainUtilization } from '../../src/repositories/utilization-partitions';
import { TOTAL_POLICY, upsertStorage } from '../../src/repositories/utilization';

const at = (iso: string) => Date.parse(iso);

// Each test starts from a copy of the run's migrated template (the migrations' own partitions included).
describe.each(DB_KINDS)('utilization partitions on %s', (kind) => {
  /** The hourly tables' partitions with their bounds, as the catalog has them. */
  const partitions = async (db: Awaited<ReturnType<typeof createTestDatabase>>['db']) =>
    (
      (await db.raw(
        `SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound FROM pg_inherits i
           JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
          WHERE p.relname = 'utilization_storage_hourly' ORDER BY c.relname`,
      )) as { rows: Array<{ name: string; bound: string }> }
    ).rows;

  it('when hours are written, then each UTC week (Monday to Monday) gets one partition per hourly table', async () => {
    const { db, drop } = await createTestDatabase(kind, { migrated: true });
    try {
      await db.raw("SET TIME ZONE 'UTC'");
      // Tuesday and the Sunday night of one week, then the Monday that starts the next.
      await ensureHourlyPartitions(db, [
        at('2026-11-24T13:00:00Z'),
        at('2026-11-29T23:00:00Z'),
        at('2026-11-30T00:00:00Z'),
      ]);
      const found = await partitions(db);
      expect(found.map((p) => p.name)).toEqual([
        'utilization_storage_hourly_w20261123',
        'utilization_storage_hourly_w20261130',
      ]);
      expect(found[0]!.bound).toMatch(/FROM \('2026-11-23 00:00:00\+00'\) TO \('2026-11-30 00:00:00\+00'\)/);
      await db('utilization_transfer_hourly').insert({
        cluster_id: 1,
        policy_index: 0,
        account: 'AUTH_a',
        hour: '2026-11-29T23:00:00Z',
        bytes_in: 1,
        bytes_out: 2,
        req_count: 3,
      });
    } finally {
      await drop();
    }
  });

  it('when a week already has day partitions (made before weekly ones), then its other days get day partitions too, and retention drops both kinds', async () => {
    const { db, drop } = await createTestDatabase(kind, { migrated: true });
    try {
      for (const table of ['utilization_storage_hourly', 'utilization_transfer_hourly']) {
        await db.raw(
          `CREATE TABLE ?? PARTITION OF ?? FOR VALUES FROM ('2026-12-01 00:00:00+00') TO ('2026-12-02 00:00:00+00')`,
          [`${table}_p20261201`, table],
        );
      }
      await ensureHourlyPartitions(db, [at('2026-12-03T05:00:00Z'), at('2026-12-08T05:00:00Z')]);
      expect((await partitions(db)).map((p) => p.name)).toEqual([
        'utilization_storage_hourly_p20261201',
        'utilization_storage_hourly_p20261203',
        'utilization_storage_hourly_w20261207',
      ]);
      // Both kinds are found again by a process that did not make them.
      await ensureHourlyPartitions(db, [at('2026-12-01T10:00:00Z'), at('2026-12-03T06:00:00Z')]);
      expect(await partitions(db)).toHaveLength(3);

      // Kept 7 days: on Dec 22 everything before Dec 15 goes, the days of Dec 1 and 3 and the week
      // of Dec 7 (to Dec 14) with them; the partitions made ahead start with the week of Dec 21.
      const report = await maintainUtilization(
        db,
        { hourlyDays: 7, dailyDays: 1095 },
        new Date(at('2026-12-22T12:00:00Z')),
      );
      expect(report.dropped).toEqual(
        expect.arrayContaining([
          'utilization_storage_hourly_p20261201',
          'utilization_storage_hourly_p20261203',
          'utilization_storage_hourly_w20261207',
        ]),
      );
      expect((await partitions(db)).map((p) => p.name)).toEqual(['utilization_storage_hourly_w20261221']);
    } finally {
      await drop();
    }
  });
  it('when samples arrive in any order and retention drops old weeks, then each account keeps its newest sample left as its latest usage', async () => {
    const { db, drop } = await createTestDatabase(kind, { migrated: true });
    try {
      await ensureHourlyPartitions(db, [at('2026-12-10T00:00:00Z'), at('2026-12-16T00:00:00Z')]);
      const sample = (account: string, iso: string, bytesUsed: number, policyIndex = TOTAL_POLICY) => ({
        policyIndex,
        account,
        hour: new Date(iso),
        bytesUsed,
        objectCount: bytesUsed + 1,
        containerCount: 1,
        slots: 1n,
        slotCount: 1,
      });
      /** The newest hourly totals of each account, as the hourly rows have them. */
      const newest = async () =>
        (
          (await db.raw(
            `SELECT DISTINCT ON (cluster_id, account) cluster_id, account, hour, bytes_used::text, object_count::text
               FROM utilization_storage_hourly WHERE policy_index = ? ORDER BY cluster_id, account, hour DESC`,
            [TOTAL_POLICY],
          )) as { rows: unknown[] }
        ).rows;
      const latest = async () =>
        (
          (await db.raw(
            `SELECT cluster_id, account, hour, bytes_used::text, object_count::text
               FROM utilization_storage_latest ORDER BY cluster_id, account`,
          )) as { rows: Array<{ account: string; hour: Date; bytes_used: string }> }
        ).rows;

      // Two hours of a in one statement, the newer first; b once; a policy's row is not a total.
      await upsertStorage(db, 1, [
        sample('AUTH_a', '2026-12-16T05:00:00Z', 50),
        sample('AUTH_a', '2026-12-10T05:00:00Z', 10),
        sample('AUTH_b', '2026-12-10T06:00:00Z', 7),
        sample('AUTH_b', '2026-12-16T06:00:00Z', 999, 0),
      ]);
      // A late sample of an older hour moves nothing; one of the same hour keeps the hour's maximum.
      await upsertStorage(db, 1, [sample('AUTH_a', '2026-12-09T05:00:00Z', 1)]);
      await upsertStorage(db, 1, [sample('AUTH_a', '2026-12-16T05:00:00Z', 40)]);
      await upsertStorage(db, 1, [sample('AUTH_b', '2026-12-10T06:00:00Z', 8)]);
      await upsertStorage(db, 2, [sample('AUTH_a', '2026-12-10T05:00:00Z', 3)]);
      expect(await latest()).toEqual(await newest());
      expect((await latest()).map((r) => [r.account, r.hour.toISOString(), r.bytes_used])).toEqual([
        ['AUTH_a', '2026-12-16T05:00:00.000Z', '50'],
        ['AUTH_b', '2026-12-10T06:00:00.000Z', '8'],
        ['AUTH_a', '2026-12-10T05:00:00.000Z', '3'],
      ]);

      // Kept 7 days: on Dec 22 the week of Dec 7 goes; a's sample of Dec 16 stays, the others go.
      const report = await maintainUtilization(
        db,
        { hourlyDays: 7, dailyDays: 1095 },
        new Date(at('2026-12-22T12:00:00Z')),
      );
      expect(report.dropped).toContain('utilization_storage_hourly_w20261207');
      expect(await latest()).toEqual(await newest());
      expect((await latest()).map((r) => [r.account, r.bytes_used])).toEqual([['AUTH_a', '50']]);
    } finally {
      await drop();
    }
  });
});
