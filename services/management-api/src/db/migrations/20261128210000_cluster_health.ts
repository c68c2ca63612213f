import type { Knex } from 'knex';

/**
 * Cluster health (docs/health.md): what `cairn health collect` posts each round and the findings
 * the rules draw from it.
 *
 * - `health_rounds`: one row per accepted round (its time and counts, the cluster's ring md5s);
 *   rounds older than 30 days are dropped as new ones arrive.
 * - `health_nodes`: the latest round's word per storage node (its recon documents, what the page
 *   shows, and what the next round's rules compare with: when it last answered, its quarantine
 *   count and when that last rose). A node no longer in the rings leaves with the next round.
 * - `health_node_samples`: async pending counts of the last hours, for "growing for an hour".
 * - `health_findings`: each finding opens once (opened_at) and closes (closed_at) when a round no
 *   longer finds it; at most one open per cluster, code, node, device and ring set ('' for none).
 * - `health_thresholds`: the thresholds an operator changed for a cluster; the others default.
 * - `collector_runs` learns the `health` collector.
 *
 * Expand-only: new tables and one more allowed value; the previous release neither reads nor
 * writes them.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE TABLE health_rounds (
    id bigserial PRIMARY KEY,
    cluster_id integer NOT NULL REFERENCES clusters(id) ON DELETE CASCADE,
    collected_at timestamptz NOT NULL,
    received_at timestamptz NOT NULL DEFAULT now(),
    node_count integer NOT NULL,
    answered_count integer NOT NULL,
    ring_md5 jsonb NOT NULL
  )`);
  await knex.raw('CREATE INDEX health_rounds_cluster_idx ON health_rounds (cluster_id, collected_at DESC)');
  await knex.raw(`CREATE TABLE health_nodes (
    cluster_id integer NOT NULL REFERENCES clusters(id) ON DELETE CASCADE,
    node text NOT NULL,
    round_id bigint NOT NULL,
    server_types text[] NOT NULL,
    answered boolean NOT NULL,
    error text,
    elapsed_ms integer NOT NULL,
    collected_at timestamptz NOT NULL,
    last_answered_at timestamptz,
    quarantined bigint,
    quarantined_rose_at timestamptz,
    recon jsonb NOT NULL,
    PRIMARY KEY (cluster_id, node)
  )`);
  await knex.raw(`CREATE TABLE health_node_samples (
    cluster_id integer NOT NULL REFERENCES clusters(id) ON DELETE CASCADE,
    node text NOT NULL,
    collected_at timestamptz NOT NULL,
    async_pending bigint NOT NULL,
    PRIMARY KEY (cluster_id, node, collected_at)
  )`);
  await knex.raw(`CREATE TABLE health_findings (
    id bigserial PRIMARY KEY,
    cluster_id integer NOT NULL REFERENCES clusters(id) ON DELETE CASCADE,
    code text NOT NULL CHECK (char_length(code) BETWEEN 1 AND 64),
    severity text NOT NULL CHECK (severity IN ('warning', 'critical')),
    node text NOT NULL DEFAULT '',
    device text NOT NULL DEFAULT '',
    ring_set text NOT NULL DEFAULT '',
    since timestamptz NOT NULL,
    sentence text NOT NULL,
    opened_at timestamptz NOT NULL,
    last_seen_at timestamptz NOT NULL,
    closed_at timestamptz
  )`);
  await knex.raw(`CREATE UNIQUE INDEX health_findings_open_idx ON health_findings (cluster_id, code, node, device, ring_set)
    WHERE closed_at IS NULL`);
  await knex.raw('CREATE INDEX health_findings_cluster_idx ON health_findings (cluster_id, id)');
  // The clusters list's worst severity: an index-only probe per cluster (repositories/health.ts).
  await knex.raw(`CREATE INDEX health_findings_open_severity_idx ON health_findings (cluster_id, severity)
    WHERE closed_at IS NULL`);
  await knex.raw(`CREATE TABLE health_thresholds (
    cluster_id integer PRIMARY KEY REFERENCES clusters(id) ON DELETE CASCADE,
    thresholds jsonb NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
  )`);
  await knex.raw('ALTER TABLE collector_runs DROP CONSTRAINT collector_runs_collector_check');
  await knex.raw(`ALTER TABLE collector_runs ADD CONSTRAINT collector_runs_collector_check
    CHECK (collector IN ('capacity', 'storage', 'transfer', 'health'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DELETE FROM collector_runs WHERE collector = 'health'`);
  await knex.raw('ALTER TABLE collector_runs DROP CONSTRAINT collector_runs_collector_check');
  await knex.raw(`ALTER TABLE collector_runs ADD CONSTRAINT collector_runs_collector_check
    CHECK (collector IN ('capacity', 'storage', 'transfer'))`);
  await knex.raw('DROP TABLE health_thresholds');
  await knex.raw('DROP TABLE health_findings');
  await knex.raw('DROP TABLE health_node_samples');
  await knex.raw('DROP TABLE health_nodes');
  await knex.raw('DROP TABLE health_rounds');
}
