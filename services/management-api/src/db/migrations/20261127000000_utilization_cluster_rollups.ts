import type { Knex } from 'knex';

/**
 * Rollups per cluster and day. Maintenance rolls each cluster's day in a transaction of its own, so
 * one cluster's failure leaves every other cluster's days (and its own other days) rolled; this
 * table says which (cluster, day) pairs the daily tables hold, and the summary reads it per cluster.
 *
 * Expand step: `utilization_rollups` (one row per day, every cluster) stays, and is kept meaning
 * what the previous release expects, so replicas of both releases can run side by side:
 * - a day is marked there only once every cluster's rollup of it succeeded (the new maintenance
 *   does that), so the previous release never reads a rollup a cluster is missing;
 * - writes mark a day stale in both tables; a write made by the previous release deletes only the
 *   day's row there, and the trigger below then marks that day stale here for every cluster.
 * A later release drops the old table and the trigger.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('utilization_cluster_rollups', (t) => {
    t.integer('cluster_id').notNullable().references('id').inTable('clusters').onDelete('CASCADE');
    t.date('day').notNullable();
    t.timestamp('rolled_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['cluster_id', 'day']);
  });
  // What was rolled for every cluster at once is rolled for each.
  await knex.raw(`INSERT INTO utilization_cluster_rollups (cluster_id, day, rolled_at)
    SELECT c.id, r.day, r.rolled_at FROM utilization_rollups r CROSS JOIN clusters c`);
  await knex.raw(`
    CREATE FUNCTION cairn_forget_cluster_rollups() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM utilization_cluster_rollups WHERE day = OLD.day;
      RETURN NULL;
    END $$`);
  await knex.raw(`CREATE TRIGGER utilization_rollups_forgotten AFTER DELETE ON utilization_rollups
    FOR EACH ROW EXECUTE FUNCTION cairn_forget_cluster_rollups()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER utilization_rollups_forgotten ON utilization_rollups');
  await knex.raw('DROP FUNCTION cairn_forget_cluster_rollups()');
  await knex.schema.dropTable('utilization_cluster_rollups');
}
