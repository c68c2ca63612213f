import type { Knex } from 'knex';
import type { CapacityElement, DeviceReport } from '@cairn/domain';
import type { Db } from '../db/database';
import { withDbErrors } from '../db/errors';
import { listPage } from './list-planner';
import type { ListQuery, Page } from './list-types';

export interface StoredPolicy {
  index: number;
  name: string;
  isDefault: boolean;
}

export interface StoredDevice {
  id: string;
  node: string;
  device: string;
  policyIndexes: number[];
  sizeBytes: number | null;
  usedBytes: number | null;
  availBytes: number | null;
  mounted: boolean;
  reportedAt: Date;
}

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/**
 * Replaces a cluster's storage policies, devices and computed capacity. Run it in one
 * transaction: readers see the old report or the new one, never a mix. `policyIndexes[i]`: the
 * policy indexes of `report.devices[i]`.
 */
export async function replaceDeviceReport(
  db: Db,
  clusterId: number,
  report: DeviceReport,
  policyIndexes: number[][],
  capacity: CapacityElement[],
): Promise<void> {
  await withDbErrors(async () => {
    await db('devices').where({ cluster_id: clusterId }).delete();
    await db('storage_policies').where({ cluster_id: clusterId }).delete();
    await db('storage_policies').insert(
      report.policies.map((p) => ({
        cluster_id: clusterId,
        policy_index: p.index,
        name: p.name,
        is_default: p.default,
      })),
    );
    const d = report.devices;
    if (d.length > 0) {
      // One statement for any number of devices: columns travel as arrays and are unnested.
      await db.raw(
        `INSERT INTO devices (cluster_id, node, device, policy_indexes, size_bytes, used_bytes, avail_bytes, mounted, reported_at)
         SELECT ?, t.node, t.device, ARRAY(SELECT DISTINCT unnest(string_to_array(t.policies, ','))::int ORDER BY 1),
                t.size_bytes, t.used_bytes, t.avail_bytes, t.mounted, now()
           FROM unnest(?::text[], ?::text[], ?::text[], ?::bigint[], ?::bigint[], ?::bigint[], ?::boolean[])
             AS t(node, device, policies, size_bytes, used_bytes, avail_bytes, mounted)`,
        [
          clusterId,
          d.map((x) => x.node),
          d.map((x) => x.device),
          policyIndexes.map((p) => p.join(',')),
          d.map((x) => x.sizeBytes),
          d.map((x) => x.usedBytes),
          d.map((x) => x.availBytes),
          d.map((x) => x.mounted),
        ] as unknown as Knex.RawBinding[],
      );
    }
    await db.raw(
      `INSERT INTO capacity_reports (cluster_id, elements, computed_at) VALUES (?, ?::jsonb, now())
       ON CONFLICT (cluster_id) DO UPDATE SET elements = EXCLUDED.elements, computed_at = EXCLUDED.computed_at`,
      [clusterId, JSON.stringify(capacity)],
    );
    // The hour's samples are the last report's: its ring sets replace all of the hour's, so a ring
    // set an earlier report of the hour had and this one has not leaves the hour too.
    await db.raw(`DELETE FROM capacity_history WHERE cluster_id = ? AND hour = date_trunc('hour', now())`, [clusterId]);
    if (capacity.length > 0) {
      await db.raw(
        `INSERT INTO capacity_history (cluster_id, ring_set, hour, total_raw_tb, total_used_tb, total_free_tb, total_used_pct, reported_at)
         SELECT ?, t.ring_set, date_trunc('hour', now()), t.raw, t.used, t.free, t.pct, now()
           FROM unnest(?::text[], ?::float8[], ?::float8[], ?::float8[], ?::float8[]) AS t(ring_set, raw, used, free, pct)
         ON CONFLICT (cluster_id, hour, ring_set) DO UPDATE SET total_raw_tb = EXCLUDED.total_raw_tb, total_used_tb = EXCLUDED.total_used_tb,
           total_free_tb = EXCLUDED.total_free_tb, total_used_pct = EXCLUDED.total_used_pct, reported_at = EXCLUDED.reported_at`,
        [
          clusterId,
          capacity.map((c) => c.ring_set),
          capacity.map((c) => c.total_raw_tb),
          capacity.map((c) => c.total_used_tb),
          capacity.map((c) => c.total_free_tb),
          capacity.map((c) => c.total_used_pct),
        ] as unknown as Knex.RawBinding[],
      );
    }
  });
}

/** One ring set's sample of an hour, as capacity/list/ showed it then. */
export interface CapacitySample {
  ringSet: string;
  hour: Date;
  totalRawTb: number;
  totalUsedTb: number;
  totalFreeTb: number;
  totalUsedPct: number | null;
}

/**
 * A cluster's samples with `start` ≤ hour < `end`, by ring set and hour; with `daily`, each day's
 * last sample only (long ranges stay a few thousand rows).
 */
export async function capacityHistory(
  db: Db,
  clusterId: number,
  start: Date,
  end: Date,
  daily: boolean,
): Promise<CapacitySample[]> {
  const rows = (await withDbErrors(() =>
    db.raw(
      `SELECT ${daily ? "DISTINCT ON (ring_set, date_trunc('day', hour, 'UTC'))" : ''} ring_set, hour, total_raw_tb, total_used_tb, total_free_tb, total_used_pct
         FROM capacity_history WHERE cluster_id = ? AND hour >= ? AND hour < ?
        ORDER BY ring_set, ${daily ? "date_trunc('day', hour, 'UTC'), hour DESC" : 'hour'}`,
      [clusterId, start, end],
    ),
  ).then((r: { rows: unknown[] }) => r.rows)) as Array<{
    ring_set: string;
    hour: Date | string;
    total_raw_tb: number;
    total_used_tb: number;
    total_free_tb: number;
    total_used_pct: number | null;
  }>;
  return rows.map((r) => ({
    ringSet: r.ring_set,
    hour: new Date(r.hour),
    totalRawTb: Number(r.total_raw_tb),
    totalUsedTb: Number(r.total_used_tb),
    totalFreeTb: Number(r.total_free_tb),
    totalUsedPct: r.total_used_pct === null ? null : Number(r.total_used_pct),
  }));
}

/** What the audit trail keeps of a report: its size, not its 100,000 devices. */
export interface DeviceReportSummary {
  device_count: number;
  policy_count: number;
}

export async function deviceReportSummary(db: Db, clusterId: number): Promise<DeviceReportSummary> {
  const row = await withDbErrors(() =>
    db
      .select(
        db('devices').where({ cluster_id: clusterId }).count('*').as('device_count'),
        db('storage_policies').where({ cluster_id: clusterId }).count('*').as('policy_count'),
      )
      .first(),
  );
  const r = row as { device_count: string | number; policy_count: string | number };
  return { device_count: Number(r.device_count), policy_count: Number(r.policy_count) };
}

export async function listPolicies(db: Db, clusterId: number): Promise<StoredPolicy[]> {
  const rows = await withDbErrors(() =>
    db('storage_policies')
      .select('policy_index', 'name', 'is_default')
      .where({ cluster_id: clusterId })
      .orderBy('policy_index'),
  );
  return (rows as Array<{ policy_index: number; name: string; is_default: boolean }>).map((r) => ({
    index: Number(r.policy_index),
    name: r.name,
    isDefault: r.is_default,
  }));
}

/** One page of a cluster's storage policies, by index. */
export async function pagePolicies(db: Db, clusterId: number, query: ListQuery): Promise<Page<StoredPolicy>> {
  return withDbErrors(async () => {
    const scope = (qb: Knex.QueryBuilder) => {
      qb.where('p.cluster_id', clusterId);
    };
    const page = await listPage<{ policy_index: number; name: string; is_default: boolean }>(
      {
        db,
        table: 'storage_policies',
        alias: 'p',
        columns: ['p.id', 'p.policy_index', 'p.name', 'p.is_default'],
        scope,
        defaultOrdering: [{ alias: 'p', column: 'policy_index', desc: false }],
      },
      query,
    );
    return {
      total: page.total,
      rows: page.rows.map((r) => ({ index: Number(r.policy_index), name: r.name, isDefault: r.is_default })),
    };
  });
}

const DEVICE_COLUMNS = [
  'd.id',
  'd.node',
  'd.device',
  'd.policy_indexes',
  'd.size_bytes',
  'd.used_bytes',
  'd.avail_bytes',
  'd.mounted',
  'd.reported_at',
];

/** `policyIndex`: only devices in that policy; -1 matches nothing (an unknown policy name). */
export async function listDevices(
  db: Db,
  clusterId: number,
  query: ListQuery,
  policyIndex?: number,
): Promise<Page<StoredDevice>> {
  return withDbErrors(async () => {
    const scope = (qb: Knex.QueryBuilder) => {
      qb.where('d.cluster_id', clusterId);
      if (policyIndex !== undefined) qb.whereRaw('d.policy_indexes @> ARRAY[?]::int[]', [policyIndex]);
    };
    const page = await listPage<Record<string, unknown>>(
      { db, table: 'devices', alias: 'd', columns: DEVICE_COLUMNS, scope },
      query,
    );
    return {
      total: page.total,
      rows: page.rows.map((r) => ({
        id: String(r.id),
        node: String(r.node),
        device: String(r.device),
        policyIndexes: ((r.policy_indexes as unknown[]) ?? []).map(Number),
        sizeBytes: num(r.size_bytes),
        usedBytes: num(r.used_bytes),
        availBytes: num(r.avail_bytes),
        mounted: Boolean(r.mounted),
        reportedAt: new Date(r.reported_at as string),
      })),
    };
  });
}

export async function getCapacity(db: Db, clusterId: number): Promise<CapacityElement[]> {
  const row = await withDbErrors(() =>
    db('capacity_reports').select('elements').where({ cluster_id: clusterId }).first(),
  );
  if (!row) return [];
  const elements = (row as { elements: unknown }).elements;
  return (typeof elements === 'string' ? JSON.parse(elements) : elements) as CapacityElement[];
}
