import type { Knex } from 'knex';
import type { Db } from '../db/database';
import { withDbErrors } from '../db/errors';
import { listPage } from './list-planner';
import type { ListQuery, Page } from './list-types';

/** SQL of the ring versions of clusters (migration 20261128130000_ring_versions). */

const TABLE = 'ring_versions';

/** One version as listed: everything but the ring's bytes. */
export interface RingVersion {
  id: string;
  clusterId: number;
  ring: string;
  version: number;
  sizeBytes: number;
  md5: string;
  partPower: number;
  replicas: number;
  deviceCount: number;
  planId: string | null;
  planStep: number | null;
  plan: unknown;
  current: boolean;
  createdBy: string;
  createdById: number | null;
  createdAt: Date;
}

export interface NewRingVersion {
  clusterId: number;
  ring: string;
  ringGz: Buffer;
  md5: string;
  partPower: number;
  replicas: number;
  deviceCount: number;
  planId: string | null;
  planStep: number | null;
  plan: unknown;
  createdBy: string;
  createdById: number | null;
}

const COLUMNS = [
  'r.id',
  'r.cluster_id',
  'r.ring',
  'r.version',
  'r.size_bytes',
  'r.md5',
  'r.part_power',
  'r.replicas',
  'r.device_count',
  'r.plan_id',
  'r.plan_step',
  'r.plan',
  'r.current',
  'r.created_by',
  'r.created_by_id',
  'r.created_at',
];

const toVersion = (r: Record<string, unknown>): RingVersion => ({
  id: String(r.id),
  clusterId: Number(r.cluster_id),
  ring: String(r.ring),
  version: Number(r.version),
  sizeBytes: Number(r.size_bytes),
  md5: String(r.md5),
  partPower: Number(r.part_power),
  replicas: Number(r.replicas),
  deviceCount: Number(r.device_count),
  planId: r.plan_id === null ? null : String(r.plan_id),
  planStep: r.plan_step === null ? null : Number(r.plan_step),
  // pg gives jsonb parsed; PGlite may give it as text.
  plan: typeof r.plan === 'string' ? (JSON.parse(r.plan) as unknown) : (r.plan ?? null),
  current: Boolean(r.current),
  createdBy: String(r.created_by),
  createdById: r.created_by_id === null ? null : Number(r.created_by_id),
  createdAt: new Date(r.created_at as string),
});

export async function listRingVersions(db: Db, clusterId: number, query: ListQuery): Promise<Page<RingVersion>> {
  return withDbErrors(async () => {
    const page = await listPage<Record<string, unknown>>(
      {
        db,
        table: TABLE,
        alias: 'r',
        columns: COLUMNS,
        scope: (qb: Knex.QueryBuilder) => void qb.where('r.cluster_id', clusterId),
        defaultOrdering: [
          { alias: 'r', column: 'ring', desc: false },
          { alias: 'r', column: 'version', desc: false },
        ],
      },
      query,
    );
    return { total: page.total, rows: page.rows.map(toVersion) };
  });
}

/** The current version of a cluster's ring, without its bytes. */
export async function currentRingVersion(db: Db, clusterId: number, ring: string): Promise<RingVersion | null> {
  const row = await withDbErrors(() =>
    db(`${TABLE} as r`).select(COLUMNS).where({ 'r.cluster_id': clusterId, 'r.ring': ring, 'r.current': true }).first(),
  );
  return row ? toVersion(row as Record<string, unknown>) : null;
}

/** The current version's md5 and bytes, for serving it. */
export async function currentRingBytes(
  db: Db,
  clusterId: number,
  ring: string,
): Promise<{ md5: string; version: number; ringGz: Buffer } | null> {
  const row = (await withDbErrors(() =>
    db(TABLE).select('md5', 'version', 'ring_gz').where({ cluster_id: clusterId, ring, current: true }).first(),
  )) as { md5: string; version: number; ring_gz: Buffer | Uint8Array } | undefined;
  return row ? { md5: row.md5, version: Number(row.version), ringGz: Buffer.from(row.ring_gz) } : null;
}

/** The bytes of the given versions of a cluster's rings, by id. */
export async function ringBytesOf(db: Db, clusterId: number, ids: readonly string[]): Promise<Map<string, Buffer>> {
  if (ids.length === 0) return new Map();
  const rows = (await withDbErrors(() =>
    db(TABLE).select('id', 'ring_gz').where({ cluster_id: clusterId }).whereIn('id', ids),
  )) as Array<{ id: string | number; ring_gz: Buffer | Uint8Array }>;
  return new Map(rows.map((r) => [String(r.id), Buffer.from(r.ring_gz)]));
}

/** The newest version below `version`: what a rollback makes current. */
export async function previousRingVersion(
  db: Db,
  clusterId: number,
  ring: string,
  version: number,
): Promise<RingVersion | null> {
  const row = await withDbErrors(() =>
    db(`${TABLE} as r`)
      .select(COLUMNS)
      .where({ 'r.cluster_id': clusterId, 'r.ring': ring })
      .andWhere('r.version', '<', version)
      .orderBy('r.version', 'desc')
      .first(),
  );
  return row ? toVersion(row as Record<string, unknown>) : null;
}

/**
 * Stores a new version, numbered after the highest one, and makes it current. The caller holds the
 * cluster's row (see services/rings.ts), so two pushes of one ring never take the same number.
 */
export async function insertRingVersion(trx: Db, v: NewRingVersion): Promise<RingVersion> {
  return withDbErrors(async () => {
    const max = (await trx(TABLE).where({ cluster_id: v.clusterId, ring: v.ring }).max('version as max').first()) as
      { max: number | null } | undefined;
    await trx(TABLE).where({ cluster_id: v.clusterId, ring: v.ring, current: true }).update({ current: false });
    const [row] = (await trx(TABLE)
      .insert({
        cluster_id: v.clusterId,
        ring: v.ring,
        version: Number(max?.max ?? 0) + 1,
        ring_gz: v.ringGz,
        size_bytes: v.ringGz.length,
        md5: v.md5,
        part_power: v.partPower,
        replicas: v.replicas,
        device_count: v.deviceCount,
        plan_id: v.planId,
        plan_step: v.planStep,
        plan: v.plan === null ? null : JSON.stringify(v.plan),
        current: true,
        created_by: v.createdBy,
        created_by_id: v.createdById,
      })
      .returning(COLUMNS.map((c) => c.slice(2)))) as Record<string, unknown>[];
    return toVersion(row!);
  });
}

/** Moves the current mark of a ring to the version with id `id`. */
export async function makeCurrent(trx: Db, clusterId: number, ring: string, id: string): Promise<void> {
  await withDbErrors(async () => {
    await trx(TABLE).where({ cluster_id: clusterId, ring, current: true }).update({ current: false });
    await trx(TABLE).where({ id }).update({ current: true });
  });
}
