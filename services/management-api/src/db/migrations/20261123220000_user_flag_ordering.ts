import type { Knex } from 'knex';

/**
 * `order_by=enabled` / `is_superuser` (either direction, the id tie-breaker following it) fast on
 * page 1 and deep, as `order_by=id` and `order_by=cluster` are:
 *
 * - (enabled, id) and (is_superuser, id) indexes: page 1 walks one of them (forwards or backwards)
 *   instead of sorting every user (about 1 s at 1,000,000 users). Each costs one more btree entry
 *   per insert (measured cost in the list-planner commit).
 * - storage_user_id_buckets is split by the two flags as well: (cluster_id, enabled, is_superuser,
 *   bucket). A deep page then finds the flag value and bucket its offset falls in by a running sum
 *   over these counters, like a deep page ordered by id or cluster (repositories/list-planner.ts).
 *   Inserts and deletes upsert the same number of counter rows as before; an UPDATE that changes a
 *   flag moves its users from one counter to the other, in the same transaction, ordered like the
 *   other triggers' upserts so concurrent statements cannot deadlock. (Postgres allows no column
 *   list on a trigger with transition tables, so the update trigger runs on every UPDATE and picks
 *   out the rows whose flags changed.)
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE INDEX storage_users_enabled_id_idx ON storage_users (enabled, id)');
  await knex.raw('CREATE INDEX storage_users_is_superuser_id_idx ON storage_users (is_superuser, id)');
  // No write may slip in between the rebuild below and the new triggers.
  await knex.raw('LOCK TABLE storage_users IN SHARE ROW EXCLUSIVE MODE');
  await knex.raw('DELETE FROM storage_user_id_buckets');
  await knex.raw('ALTER TABLE storage_user_id_buckets DROP CONSTRAINT storage_user_id_buckets_pkey');
  await knex.raw(
    'ALTER TABLE storage_user_id_buckets ADD COLUMN enabled boolean NOT NULL, ADD COLUMN is_superuser boolean NOT NULL',
  );
  await knex.raw('ALTER TABLE storage_user_id_buckets ADD PRIMARY KEY (cluster_id, enabled, is_superuser, bucket)');
  await knex.raw(`
    CREATE OR REPLACE FUNCTION cairn_bucket_inserted_users() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO storage_user_id_buckets (cluster_id, enabled, is_superuser, bucket, n)
        SELECT cluster_id, enabled, is_superuser, id >> 12, count(*) FROM inserted_users GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
      ON CONFLICT (cluster_id, enabled, is_superuser, bucket) DO UPDATE SET n = storage_user_id_buckets.n + EXCLUDED.n;
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE OR REPLACE FUNCTION cairn_bucket_deleted_users() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO storage_user_id_buckets (cluster_id, enabled, is_superuser, bucket, n)
        SELECT cluster_id, enabled, is_superuser, id >> 12, -count(*) FROM deleted_users GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
      ON CONFLICT (cluster_id, enabled, is_superuser, bucket) DO UPDATE SET n = storage_user_id_buckets.n + EXCLUDED.n;
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE FUNCTION cairn_bucket_updated_users() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO storage_user_id_buckets (cluster_id, enabled, is_superuser, bucket, n)
        SELECT cluster_id, enabled, is_superuser, bucket, sum(n) FROM (
            SELECT o.cluster_id, o.enabled, o.is_superuser, o.id >> 12 AS bucket, -1 AS n
              FROM old_users o JOIN new_users w ON w.id = o.id
             WHERE (o.enabled, o.is_superuser) IS DISTINCT FROM (w.enabled, w.is_superuser)
            UNION ALL
            SELECT w.cluster_id, w.enabled, w.is_superuser, w.id >> 12, 1
              FROM old_users o JOIN new_users w ON w.id = o.id
             WHERE (o.enabled, o.is_superuser) IS DISTINCT FROM (w.enabled, w.is_superuser)
          ) AS moved
        GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
      ON CONFLICT (cluster_id, enabled, is_superuser, bucket) DO UPDATE SET n = storage_user_id_buckets.n + EXCLUDED.n;
      RETURN NULL;
    END $$`);
  await knex.raw(`CREATE TRIGGER storage_users_bucketed_on_update AFTER UPDATE ON storage_users
    REFERENCING OLD TABLE AS old_users NEW TABLE AS new_users FOR EACH STATEMENT EXECUTE FUNCTION cairn_bucket_updated_users()`);
  await knex.raw(`INSERT INTO storage_user_id_buckets (cluster_id, enabled, is_superuser, bucket, n)
    SELECT cluster_id, enabled, is_superuser, id >> 12, count(*) FROM storage_users GROUP BY 1, 2, 3, 4`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('LOCK TABLE storage_users IN SHARE ROW EXCLUSIVE MODE');
  await knex.raw('DROP TRIGGER storage_users_bucketed_on_update ON storage_users');
  await knex.raw('DROP FUNCTION cairn_bucket_updated_users()');
  await knex.raw('DELETE FROM storage_user_id_buckets');
  await knex.raw('ALTER TABLE storage_user_id_buckets DROP CONSTRAINT storage_user_id_buckets_pkey');
  await knex.raw('ALTER TABLE storage_user_id_buckets DROP COLUMN enabled, DROP COLUMN is_superuser');
  await knex.raw('ALTER TABLE storage_user_id_buckets ADD PRIMARY KEY (cluster_id, bucket)');
  await knex.raw(`
    CREATE OR REPLACE FUNCTION cairn_bucket_inserted_users() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO storage_user_id_buckets (cluster_id, bucket, n)
        SELECT cluster_id, id >> 12, count(*) FROM inserted_users GROUP BY 1, 2 ORDER BY 1, 2
      ON CONFLICT (cluster_id, bucket) DO UPDATE SET n = storage_user_id_buckets.n + EXCLUDED.n;
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE OR REPLACE FUNCTION cairn_bucket_deleted_users() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO storage_user_id_buckets (cluster_id, bucket, n)
        SELECT cluster_id, id >> 12, -count(*) FROM deleted_users GROUP BY 1, 2 ORDER BY 1, 2
      ON CONFLICT (cluster_id, bucket) DO UPDATE SET n = storage_user_id_buckets.n + EXCLUDED.n;
      RETURN NULL;
    END $$`);
  await knex.raw(`INSERT INTO storage_user_id_buckets (cluster_id, bucket, n)
    SELECT cluster_id, id >> 12, count(*) FROM storage_users GROUP BY 1, 2`);
  await knex.raw('DROP INDEX storage_users_is_superuser_id_idx');
  await knex.raw('DROP INDEX storage_users_enabled_id_idx');
}
