import type { Knex } from 'knex';

/**
 * A fingerprint of the management database: row count and an md5 over every row of each table that
 * holds state. Refused requests must leave it exactly as it was.
 */
export const STATE_TABLES = [
  'clusters',
  'storage_users',
  'operators',
  'operator_clusters',
  'api_keys',
  'storage_policies',
  'devices',
  'cluster_user_counts',
  'storage_user_id_buckets',
  'capacity_reports',
  'audit_log',
];

export type Snapshot = Record<string, { count: number; checksum: string }>;

export async function snapshot(db: Knex): Promise<Snapshot> {
  const present = await db('information_schema.tables')
    .where({ table_schema: 'public' })
    .whereIn('table_name', STATE_TABLES)
    .pluck('table_name');
  const out: Snapshot = {};
  for (const table of STATE_TABLES.filter((t) => present.includes(t))) {
    // Table names come from the list above only.
    const result = await db.raw(
      `SELECT count(*)::int AS count, coalesce(md5(string_agg(t::text, '|' ORDER BY t::text)), '') AS checksum FROM "${table}" t`,
    );
    const row = (result.rows ?? result)[0] as { count: number; checksum: string };
    out[table] = { count: Number(row.count), checksum: row.checksum };
  }
  return out;
}

/** Tables whose fingerprint differs, with before and after. */
export function changedTables(before: Snapshot, after: Snapshot): string[] {
  const names = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...names]
    .filter((t) => JSON.stringify(before[t]) !== JSON.stringify(after[t]))
    .map((t) => `${t}: ${JSON.stringify(before[t])} -> ${JSON.stringify(after[t])}`);
}
