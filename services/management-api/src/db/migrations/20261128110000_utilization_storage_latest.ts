import type { Knex } from 'knex';

/**
 * `utilization_storage_latest`: per account, its totals (policy_index -1) at the latest hour in
 * `utilization_storage_hourly`, so that a page of users reads each user's usage with one index
 * lookup in the page's own statement instead of probing the hourly partitions newest first.
 *
 * Kept by two statement triggers on the hourly table (one per event: a trigger with transition
 * tables takes one), so every writer keeps it, a collector of the previous release included: an
 * upsert's inserted and updated rows each move an account's row forward to their hour, never
 * back, with the hour's values as the hourly row holds them after the upsert. Retention, which
 * drops hourly partitions (no row trigger fires), moves the rows of the dropped hours back to what
 * the remaining partitions hold (repositories/utilization-partitions.ts).
 *
 * Expand-only: a new table, filled from the hourly rows, and triggers that keep the previous
 * release's writes correct.
 */
export async function up(knex: Knex): Promise<void> {
  // No foreign key to clusters: the hourly rows have none either, and a sample must not fail on it.
  await knex.raw(`CREATE TABLE utilization_storage_latest (
    cluster_id integer NOT NULL,
    account varchar(300) NOT NULL,
    hour timestamptz NOT NULL,
    bytes_used bigint NOT NULL,
    object_count bigint NOT NULL,
    PRIMARY KEY (cluster_id, account)
  )`);
  await knex.raw(`
    CREATE FUNCTION cairn_keep_latest_storage() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO utilization_storage_latest AS l (cluster_id, account, hour, bytes_used, object_count)
        SELECT DISTINCT ON (cluster_id, account) cluster_id, account, hour, bytes_used, object_count
          FROM sampled WHERE policy_index = -1
         ORDER BY cluster_id, account, hour DESC
        ON CONFLICT (cluster_id, account) DO UPDATE
          SET hour = excluded.hour, bytes_used = excluded.bytes_used, object_count = excluded.object_count
          WHERE l.hour <= excluded.hour;
      RETURN NULL;
    END $$`);
  // Serialises with the writes: those wait for the backfill, so none is missed or read twice.
  await knex.raw('LOCK TABLE utilization_storage_hourly IN SHARE ROW EXCLUSIVE MODE');
  for (const event of ['insert', 'update'])
    await knex.raw(`CREATE TRIGGER utilization_storage_latest_on_${event} AFTER ${event.toUpperCase()} ON utilization_storage_hourly
      REFERENCING NEW TABLE AS sampled FOR EACH STATEMENT EXECUTE FUNCTION cairn_keep_latest_storage()`);
  await knex.raw(`INSERT INTO utilization_storage_latest (cluster_id, account, hour, bytes_used, object_count)
    SELECT DISTINCT ON (cluster_id, account) cluster_id, account, hour, bytes_used, object_count
      FROM utilization_storage_hourly WHERE policy_index = -1
     ORDER BY cluster_id, account, hour DESC`);
}

export async function down(knex: Knex): Promise<void> {
  for (const event of ['insert', 'update'])
    await knex.raw(`DROP TRIGGER utilization_storage_latest_on_${event} ON utilization_storage_hourly`);
  await knex.raw('DROP FUNCTION cairn_keep_latest_storage()');
  await knex.raw('DROP TABLE utilization_storage_latest');
}
