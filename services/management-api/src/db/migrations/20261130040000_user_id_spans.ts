import type { Knex } from 'knex';

/**
 * Counters over spans of 64 id buckets (2^18 consecutive ids: span = id >> 18), per cluster and
 * flags like the buckets (storage_user_id_buckets), so a deep page ordered by id, cluster, enabled
 * or is_superuser sums two short lists of counters instead of every bucket: the spans, to find the
 * span the offset falls in, then that span's 64 buckets (per cluster and flags). At 10,000,000 users
 * over 10 clusters that is at most about 400 + 640 rows instead of 24,420 (repositories/list-planner.ts).
 *
 * Kept by the same statement-level triggers as the buckets, in the same transaction, each upserting
 * the spans first and the buckets second, both in key order, so concurrent statements lock counter
 * rows in one order and cannot deadlock. The index on the buckets' `bucket` lets an unrestricted
 * list read one span's buckets without reading every cluster's.
 */
const BUCKET_BITS = 12;
const SPAN_BITS = 18;

/** Upserts of the buckets and spans from `source` (rows with cluster_id, enabled, is_superuser, bucket, n). */
const upserts = (source: string, spans: boolean) => `
      ${
        spans
          ? `INSERT INTO storage_user_id_spans (cluster_id, enabled, is_superuser, span, n)
        SELECT cluster_id, enabled, is_superuser, bucket >> ${SPAN_BITS - BUCKET_BITS}, sum(n) FROM (${source}) AS c
         GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
      ON CONFLICT (cluster_id, enabled, is_superuser, span) DO UPDATE SET n = storage_user_id_spans.n + EXCLUDED.n;`
          : ''
      }
      INSERT INTO storage_user_id_buckets (cluster_id, enabled, is_superuser, bucket, n)
        SELECT cluster_id, enabled, is_superuser, bucket, sum(n) FROM (${source}) AS c
         GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
      ON CONFLICT (cluster_id, enabled, is_superuser, bucket) DO UPDATE SET n = storage_user_id_buckets.n + EXCLUDED.n;`;

const inserted = `SELECT cluster_id, enabled, is_superuser, id >> ${BUCKET_BITS} AS bucket, 1 AS n FROM inserted_users`;
const deleted = `SELECT cluster_id, enabled, is_superuser, id >> ${BUCKET_BITS} AS bucket, -1 AS n FROM deleted_users`;
const moved = `
            SELECT o.cluster_id, o.enabled, o.is_superuser, o.id >> ${BUCKET_BITS} AS bucket, -1 AS n
              FROM old_users o JOIN new_users w ON w.id = o.id
             WHERE (o.enabled, o.is_superuser) IS DISTINCT FROM (w.enabled, w.is_superuser)
            UNION ALL
            SELECT w.cluster_id, w.enabled, w.is_superuser, w.id >> ${BUCKET_BITS}, 1
              FROM old_users o JOIN new_users w ON w.id = o.id
             WHERE (o.enabled, o.is_superuser) IS DISTINCT FROM (w.enabled, w.is_superuser)`;

async function triggerFunctions(knex: Knex, spans: boolean): Promise<void> {
  for (const [name, source] of [
    ['cairn_bucket_inserted_users', inserted],
    ['cairn_bucket_deleted_users', deleted],
    ['cairn_bucket_updated_users', moved],
  ] as const) {
    await knex.raw(`
    CREATE OR REPLACE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN${upserts(source, spans)}
      RETURN NULL;
    END $$`);
  }
  await knex.raw(`
    CREATE OR REPLACE FUNCTION cairn_uncount_truncated_users() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      ${spans ? 'DELETE FROM storage_user_id_spans;' : ''}
      DELETE FROM storage_user_id_buckets;
      UPDATE cluster_user_counts SET user_count = 0;
      RETURN NULL;
    END $$`);
}

export async function up(knex: Knex): Promise<void> {
  // No write may slip in between the backfill below and the new trigger functions.
  await knex.raw('LOCK TABLE storage_users IN SHARE ROW EXCLUSIVE MODE');
  await knex.raw(`CREATE TABLE storage_user_id_spans (
      cluster_id integer NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
      enabled boolean NOT NULL,
      is_superuser boolean NOT NULL,
      span bigint NOT NULL,
      n bigint NOT NULL,
      PRIMARY KEY (cluster_id, enabled, is_superuser, span))`);
  await knex.raw('CREATE INDEX storage_user_id_buckets_bucket_idx ON storage_user_id_buckets (bucket)');
  await triggerFunctions(knex, true);
  await knex.raw(`INSERT INTO storage_user_id_spans (cluster_id, enabled, is_superuser, span, n)
    SELECT cluster_id, enabled, is_superuser, bucket >> ${SPAN_BITS - BUCKET_BITS}, sum(n)
      FROM storage_user_id_buckets GROUP BY 1, 2, 3, 4`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('LOCK TABLE storage_users IN SHARE ROW EXCLUSIVE MODE');
  await triggerFunctions(knex, false);
  await knex.raw('DROP INDEX storage_user_id_buckets_bucket_idx');
  await knex.raw('DROP TABLE storage_user_id_spans');
}
