import type { Knex } from 'knex';

/**
 * What monitoring reads about the collectors, kept in Postgres so that every replica of the API
 * exports the same figures whichever replica a collector posted to:
 *
 * - `collector_runs`: per cluster and collector (`capacity`: device reports; `storage`: account
 *   samples; `transfer`: access-log batches), when the API first and last accepted a post from it.
 *   One row each, updated in the transaction of the post.
 * - `utilization_storage_coverage`: per cluster and hour, the collection slots of the hour in which
 *   the storage collector posted at least one batch (a bit mask, OR-ed like an account's `slots`),
 *   so an hour whose rounds did not all run is found without reading the accounts' rows.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE TABLE collector_runs (
    cluster_id integer NOT NULL REFERENCES clusters(id) ON DELETE CASCADE,
    collector text NOT NULL CHECK (collector IN ('capacity', 'storage', 'transfer')),
    first_success_at timestamptz NOT NULL,
    last_success_at timestamptz NOT NULL,
    PRIMARY KEY (cluster_id, collector)
  )`);
  await knex.raw(`CREATE TABLE utilization_storage_coverage (
    cluster_id integer NOT NULL REFERENCES clusters(id) ON DELETE CASCADE,
    hour timestamptz NOT NULL,
    slots bigint NOT NULL,
    slot_count smallint NOT NULL,
    PRIMARY KEY (cluster_id, hour)
  )`);
  // What the existing tables already tell.
  await knex.raw(`INSERT INTO collector_runs (cluster_id, collector, first_success_at, last_success_at)
    SELECT cluster_id, 'capacity', computed_at, computed_at FROM capacity_reports`);
  await knex.raw(`INSERT INTO collector_runs (cluster_id, collector, first_success_at, last_success_at)
    SELECT cluster_id, 'transfer', min(received_at), max(received_at) FROM utilization_transfer_batches GROUP BY cluster_id`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE utilization_storage_coverage');
  await knex.raw('DROP TABLE collector_runs');
}
