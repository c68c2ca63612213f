import type { Knex } from 'knex';

/**
 * An exact per-cluster user count, kept by statement-level triggers in the same transaction as
 * every insert and delete, so `total_count` of a list filtered by cluster (or not filtered at
 * all) is a primary-key read instead of a count over up to millions of index entries.
 * Users never move between clusters, so updates need no trigger.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('cluster_user_counts', (t) => {
    t.integer('cluster_id').primary().references('id').inTable('clusters').onDelete('CASCADE');
    t.bigInteger('user_count').notNullable().defaultTo(0);
  });
  await knex.raw(`
    CREATE FUNCTION cairn_count_inserted_users() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO cluster_user_counts (cluster_id, user_count)
        SELECT cluster_id, count(*) FROM inserted_users GROUP BY cluster_id
      ON CONFLICT (cluster_id) DO UPDATE SET user_count = cluster_user_counts.user_count + EXCLUDED.user_count;
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE FUNCTION cairn_count_deleted_users() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE cluster_user_counts c SET user_count = c.user_count - d.n
        FROM (SELECT cluster_id, count(*) AS n FROM deleted_users GROUP BY cluster_id) d
        WHERE c.cluster_id = d.cluster_id;
      RETURN NULL;
    END $$`);
  await knex.raw(`CREATE TRIGGER storage_users_counted_on_insert AFTER INSERT ON storage_users
    REFERENCING NEW TABLE AS inserted_users FOR EACH STATEMENT EXECUTE FUNCTION cairn_count_inserted_users()`);
  await knex.raw(`CREATE TRIGGER storage_users_counted_on_delete AFTER DELETE ON storage_users
    REFERENCING OLD TABLE AS deleted_users FOR EACH STATEMENT EXECUTE FUNCTION cairn_count_deleted_users()`);
  await knex.raw(`INSERT INTO cluster_user_counts (cluster_id, user_count)
    SELECT id, (SELECT count(*) FROM storage_users u WHERE u.cluster_id = c.id) FROM clusters c`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER storage_users_counted_on_delete ON storage_users');
  await knex.raw('DROP TRIGGER storage_users_counted_on_insert ON storage_users');
  await knex.raw('DROP FUNCTION cairn_count_deleted_users()');
  await knex.raw('DROP FUNCTION cairn_count_inserted_users()');
  await knex.schema.dropTable('cluster_user_counts');
}
