import { DB_KINDS, createTestDatabase } from '../support/harness';
import { migrateLatest, migrateRollbackAll } from '../../src/db/database';
import { migrationSource } from '../../src/db/migrations';
import { ensureHourlyPartitions } from '../../src/repositories/utilization-partitions';

describe.each(DB_KINDS)('migrations on %s', (kind) => {
  it('when migrated, rolled back and migrated again, then every table comes and goes cleanly', async () => {
    const { db, drop } = await createTestDatabase(kind);
    try {
      const applied = await migrateLatest(db);
      expect(applied).toEqual([
        '20261122000000_initial_schema',
        '20261122010000_cluster_user_counts',
        '20261122020000_capacity_reports',
        '20261122030000_audit_log',
        '20261122040000_user_id_buckets',
        '20261122041500_storage_user_change_notices',
        '20261123100000_user_ordering_index',
        '20261123200000_cluster_change_notices',
        '20261123220000_user_flag_ordering',
        '20261123230000_utilization',
        '20261124000000_s3_credentials',
        '20261124010000_capacity_history',
        '20261124020000_user_name_buckets',
        '20261124030000_utilization_hour_brin',
        '20261126000000_operator_clusters_restrict',
        '20261127000000_audit_retention',
        '20261127000000_utilization_cluster_rollups',
        '20261127010000_collector_runs',
        '20261127120000_quotas',
        '20261127130000_password_scheme',
        '20261127140000_console_sessions',
        '20261127150000_change_log',
        '20261127160000_application_credentials',
        '20261127170000_s3_credential_lifetimes',
        '20261127180000_application_credential_notices',
        '20261128100000_console_session_step_up',
        '20261128110000_utilization_storage_latest',
        '20261128120000_tempauth_user_names',
        '20261128130000_ring_versions',
        '20261128210000_cluster_health',
        '20261129000000_storage_user_sessions',
        '20261129020000_ring_plans',
        '20261129040000_storage_session_gateway_tokens',
        '20261129050000_utilization_request_classes',
        '20261130020000_storage_session_application_credentials',
        '20261130040000_user_id_spans',
        '20261130050000_user_name_range_bound',
        '20261130060000_user_name_spans',
      ]);
      expect(await migrateLatest(db)).toEqual([]);
      for (const table of [
        'clusters',
        'storage_users',
        'operators',
        'api_keys',
        'storage_policies',
        'devices',
        'cluster_user_counts',
        'capacity_reports',
        'audit_log',
        'storage_user_id_buckets',
        'storage_user_name_ranges',
        'storage_user_name_buckets',
        'storage_user_name_spans',
        'utilization_accounts',
        'utilization_storage_hourly',
        'utilization_storage_latest',
        'utilization_transfer_daily',
        'collector_runs',
        'utilization_storage_coverage',
        'health_rounds',
        'health_nodes',
        'health_node_samples',
        'health_findings',
        'health_thresholds',
        'quota_applications',
        'cluster_swift_info',
        'change_log',
        'replication_heartbeat',
        'ring_versions',
        'ring_plans',
      ]) {
        expect(await db.schema.hasTable(table)).toBe(true);
      }
      // Partitions go with their tables.
      await ensureHourlyPartitions(db, [Date.now()]);
      expect(await migrateRollbackAll(db)).toHaveLength(applied.length);
      expect(await db.schema.hasTable('utilization_accounts')).toBe(false);
      expect(await db.schema.hasTable('storage_users')).toBe(false);
      expect(await db.schema.hasTable('audit_log')).toBe(false);
      expect(await migrateLatest(db)).toHaveLength(applied.length);
    } finally {
      await drop();
    }
  });

  it('when rollups become per cluster, then days rolled before are rolled for every cluster, and a day the previous release marks stale is stale for every cluster', async () => {
    const { db, drop } = await createTestDatabase(kind, { migrated: true });
    try {
      // Back to just before per-cluster rollups (later migrations do not touch them).
      await db.migrate.down({ migrationSource, name: '20261127000000_utilization_cluster_rollups' });
      const clusters = await db('clusters')
        .insert(
          [1, 2].map((i) => ({
            name: `c${i}`,
            uuid: `3f0c4a4e-2a7e-4d55-9a3b-1f2e3d4c5b6${i}`,
            auth_url: 'https://c/auth',
            storage_url: 'https://c/v1',
          })),
        )
        .returning('id');
      // What the previous release wrote: one mark per day, for every cluster at once.
      await db('utilization_rollups').insert([{ day: '2026-11-20' }, { day: '2026-11-21' }]);
      await migrateLatest(db);
      const marks = async () =>
        (
          await db('utilization_cluster_rollups')
            .select('cluster_id', db.raw('day::text AS day'))
            .orderBy(['day', 'cluster_id'])
        ).map((r) => `${r.cluster_id}:${r.day}`);
      const ids = clusters.map((c: { id: number }) => c.id);
      expect(await marks()).toEqual([
        `${ids[0]}:2026-11-20`,
        `${ids[1]}:2026-11-20`,
        `${ids[0]}:2026-11-21`,
        `${ids[1]}:2026-11-21`,
      ]);
      // The previous release's write to a rolled day deletes the day's one mark (its invalidateRollups).
      await db.raw("DELETE FROM utilization_rollups WHERE day = ANY('{2026-11-21}'::date[])");
      expect(await marks()).toEqual([`${ids[0]}:2026-11-20`, `${ids[1]}:2026-11-20`]);
    } finally {
      await drop();
    }
  });

  it('when the latest storage table is added, then it holds the newest hourly totals of each account, and samples written after keep it', async () => {
    const { db, drop } = await createTestDatabase(kind, { migrated: true });
    try {
      await db.migrate.down({ migrationSource, name: '20261128110000_utilization_storage_latest' });
      await db.raw(
        `CREATE TABLE utilization_storage_hourly_w20261207 PARTITION OF utilization_storage_hourly
           FOR VALUES FROM ('2026-12-07 00:00:00+00') TO ('2026-12-14 00:00:00+00')`,
      );
      const row = (account: string, policy: number, hour: string, bytes: number) => ({
        cluster_id: 1,
        policy_index: policy,
        account,
        hour,
        bytes_used: bytes,
        object_count: bytes + 1,
        container_count: 1,
      });
      // What the previous release wrote: two hours of a, one of b, and a policy's row of b.
      await db('utilization_storage_hourly').insert([
        row('AUTH_a', -1, '2026-12-08T01:00:00Z', 10),
        row('AUTH_a', -1, '2026-12-09T01:00:00Z', 20),
        row('AUTH_b', -1, '2026-12-08T01:00:00Z', 5),
        row('AUTH_b', 0, '2026-12-09T01:00:00Z', 99),
      ]);
      await migrateLatest(db);
      const latest = async () =>
        (
          await db('utilization_storage_latest')
            .select(
              'account',
              db.raw('bytes_used::text AS b'),
              db.raw("to_char(hour AT TIME ZONE 'UTC', 'DD HH24') AS h"),
            )
            .orderBy('account')
        ).map((r: { account: string; b: string; h: string }) => `${r.account} ${r.h} ${r.b}`);
      expect(await latest()).toEqual(['AUTH_a 09 01 20', 'AUTH_b 08 01 5']);
      // Written as the previous release writes (its own upsert): the trigger keeps the table.
      await db.raw(
        `INSERT INTO utilization_storage_hourly AS h (cluster_id, policy_index, account, hour, bytes_used, object_count, container_count)
         VALUES (1, -1, 'AUTH_b', '2026-12-10T01:00:00Z', 6, 7, 1), (1, -1, 'AUTH_a', '2026-12-09T01:00:00Z', 25, 26, 1)
         ON CONFLICT (cluster_id, account, policy_index, hour) DO UPDATE SET bytes_used = greatest(h.bytes_used, excluded.bytes_used)`,
      );
      expect(await latest()).toEqual(['AUTH_a 09 01 25', 'AUTH_b 10 01 6']);
    } finally {
      await drop();
    }
  });

  it('when a cluster is the last one an operator is limited to, then Postgres itself refuses to delete it', async () => {
    const { db, drop } = await createTestDatabase(kind, { migrated: true });
    try {
      const [cluster] = await db('clusters')
        .insert({
          name: 'c',
          uuid: '3f0c4a4e-2a7e-4d55-9a3b-1f2e3d4c5b6a',
          auth_url: 'https://c/auth',
          storage_url: 'https://c/v1',
        })
        .returning('id');
      const [operator] = await db('operators').insert({ name: 'limited', role: 'admin' }).returning('id');
      await db('operator_clusters').insert({ operator_id: operator.id, cluster_id: cluster.id });
      await expect(db('clusters').where({ id: cluster.id }).delete()).rejects.toMatchObject({
        code: expect.stringMatching(/^23(503|001)$/),
        constraint: 'operator_clusters_cluster_id_foreign',
      });
      // Deleting the operator still takes its limits with it.
      await db('operators').where({ id: operator.id }).delete();
      await db('clusters').where({ id: cluster.id }).delete();
      expect(await db('clusters').where({ id: cluster.id }).first()).toBeUndefined();
    } finally {
      await drop();
    }
  });

  it('when a migration fails, then the error surfaces and nothing of it is left behind', async () => {
    const { db, drop } = await createTestDatabase(kind);
    try {
      await db.schema.createTable('clusters', (t) => t.increments('id'));
      await expect(migrateLatest(db)).rejects.toThrow(/clusters/);
      expect(await db.schema.hasTable('storage_users')).toBe(false);
    } finally {
      await drop();
    }
  });
});
