import { DB_KINDS, createTestDatabase } from '../support/harness';
import { migrateLatest } from '../../src/db/database';
import { ensureHourlyPartitions, maintainUtilization } from '../../src/repositories/utilization-partitions';

const at = (iso: string) => Date.parse(iso);

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
    const { db, drop } = await createTestDatabase(kind);
    try {
      await migrateLatest(db);
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
    const { db, drop } = await createTestDatabase(kind);
    try {
      await migrateLatest(db);
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
});
