import type { Knex } from 'knex';

/**
 * How many users each cluster has per bucket of 4096 consecutive ids (bucket = id >> 12), kept by
 * statement-level triggers in the same transaction as every insert and delete, like
 * `cluster_user_counts`. A deep page ordered by id (`?offset=900000`) then finds the bucket its
 * offset falls in by summing a few thousand counters instead of walking 900,000 index entries, and
 * walks fewer than 4096 rows from the bucket's first id (see repositories/list-planner.ts; the 12
 * bits are declared in repositories/storage-users.ts and must stay unless a new migration rebuilds
 * this table).
 *
 * Both counters depend on a user's id and cluster never changing (users never move: nothing
 * updates either column). A guard trigger makes that a rule of the database, so a hand-written
 * UPDATE fails loudly instead of silently breaking the counts.
 *
 * Each statement's changes are applied as one upsert ordered by (cluster_id, bucket): concurrent
 * statements lock counter rows in the same order, so they can wait for each other but not deadlock.
 * Deletes upsert negative counts (their rows always exist); emptied buckets stay as zero rows,
 * which the sums ignore and a later insert reuses. TRUNCATE fires no delete trigger, so it empties
 * the buckets (and zeroes cluster_user_counts, which had no such trigger) by a trigger of its own.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('storage_user_id_buckets', (t) => {
    t.integer('cluster_id').notNullable().references('id').inTable('clusters').onDelete('CASCADE');
    t.bigInteger('bucket').notNullable();
    t.bigInteger('n').notNullable();
    t.primary(['cluster_id', 'bucket']);
  });
  await knex.raw(`
    CREATE FUNCTION cairn_bucket_inserted_users() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO storage_user_id_buckets (cluster_id, bucket, n)
        SELECT cluster_id, id >> 12, count(*) FROM inserted_users GROUP BY 1, 2 ORDER BY 1, 2
      ON CONFLICT (cluster_id, bucket) DO UPDATE SET n = storage_user_id_buckets.n + EXCLUDED.n;
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE FUNCTION cairn_bucket_deleted_users() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO storage_user_id_buckets (cluster_id, bucket, n)
        SELECT cluster_id, id >> 12, -count(*) FROM deleted_users GROUP BY 1, 2 ORDER BY 1, 2
      ON CONFLICT (cluster_id, bucket) DO UPDATE SET n = storage_user_id_buckets.n + EXCLUDED.n;
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE FUNCTION cairn_uncount_truncated_users() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM storage_user_id_buckets;
      UPDATE cluster_user_counts SET user_count = 0;
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE FUNCTION cairn_refuse_user_move() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'storage_users.id and storage_users.cluster_id never change (user counters depend on them)'
        USING ERRCODE = 'feature_not_supported';
    END $$`);
  await knex.raw(`CREATE TRIGGER storage_users_bucketed_on_insert AFTER INSERT ON storage_users
    REFERENCING NEW TABLE AS inserted_users FOR EACH STATEMENT EXECUTE FUNCTION cairn_bucket_inserted_users()`);
  await knex.raw(`CREATE TRIGGER storage_users_bucketed_on_delete AFTER DELETE ON storage_users
    REFERENCING OLD TABLE AS deleted_users FOR EACH STATEMENT EXECUTE FUNCTION cairn_bucket_deleted_users()`);
  await knex.raw(`CREATE TRIGGER storage_users_uncounted_on_truncate AFTER TRUNCATE ON storage_users
    FOR EACH STATEMENT EXECUTE FUNCTION cairn_uncount_truncated_users()`);
  await knex.raw(`CREATE TRIGGER storage_users_never_move BEFORE UPDATE OF id, cluster_id ON storage_users
    FOR EACH ROW WHEN (OLD.id IS DISTINCT FROM NEW.id OR OLD.cluster_id IS DISTINCT FROM NEW.cluster_id)
    EXECUTE FUNCTION cairn_refuse_user_move()`);
  // The triggers above hold storage_users against writes until this transaction ends, so no row
  // can slip in between this backfill and the triggers.
  await knex.raw(`INSERT INTO storage_user_id_buckets (cluster_id, bucket, n)
    SELECT cluster_id, id >> 12, count(*) FROM storage_users GROUP BY 1, 2`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER storage_users_never_move ON storage_users');
  await knex.raw('DROP TRIGGER storage_users_uncounted_on_truncate ON storage_users');
  await knex.raw('DROP TRIGGER storage_users_bucketed_on_delete ON storage_users');
  await knex.raw('DROP TRIGGER storage_users_bucketed_on_insert ON storage_users');
  await knex.raw('DROP FUNCTION cairn_refuse_user_move()');
  await knex.raw('DROP FUNCTION cairn_uncount_truncated_users()');
  await knex.raw('DROP FUNCTION cairn_bucket_deleted_users()');
  await knex.raw('DROP FUNCTION cairn_bucket_inserted_users()');
  await knex.schema.dropTable('storage_user_id_buckets');
}
