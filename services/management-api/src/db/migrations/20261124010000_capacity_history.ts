import type { Knex } from 'knex';

/**
 * The history of each ring set's capacity, for trends and the "reaches 80 % around …" estimate:
 * one sample per cluster, ring set and hour (the last report of the hour wins), written in the
 * transaction of the device report it comes from. Hourly is enough for a trend over weeks and
 * small: five ring sets sampled every hour are about 44,000 rows (a few MB) a year per cluster,
 * so samples are kept as long as their cluster; deleting the cluster deletes them. The numbers are
 * capacity/list/'s, as reported at the time.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE TABLE capacity_history (
    cluster_id integer NOT NULL REFERENCES clusters(id) ON DELETE CASCADE,
    ring_set text NOT NULL,
    hour timestamptz NOT NULL,
    total_raw_tb double precision NOT NULL,
    total_used_tb double precision NOT NULL,
    total_free_tb double precision NOT NULL,
    total_used_pct double precision,
    reported_at timestamptz NOT NULL,
    PRIMARY KEY (cluster_id, hour, ring_set)
  )`);
  // What exists today is the first sample.
  await knex.raw(`INSERT INTO capacity_history (cluster_id, ring_set, hour, total_raw_tb, total_used_tb, total_free_tb, total_used_pct, reported_at)
    SELECT r.cluster_id, e->>'ring_set', date_trunc('hour', r.computed_at), (e->>'total_raw_tb')::float8, (e->>'total_used_tb')::float8,
           (e->>'total_free_tb')::float8, (e->>'total_used_pct')::float8, r.computed_at
      FROM capacity_reports r, jsonb_array_elements(r.elements) AS e`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE capacity_history');
}
