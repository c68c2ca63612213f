import type { Knex } from 'knex';

/**
 * `ring_versions`: every Swift ring (`<ring>.ring.gz`) pushed for a cluster, kept whole so that any
 * version can be served again, with what the API read from it (md5, part power, replicas, device
 * count) and, when the push came from a plan, the plan's id, step and JSON. `version` counts per
 * cluster and ring from 1. Exactly one version of a (cluster, ring) is `current` (the partial unique
 * index): the one nodes pull; a rollback moves the mark to an older version and deletes nothing.
 *
 * Deleting a cluster deletes its rings, as it does its device reports. Expand-only: a new table.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE TABLE ring_versions (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    cluster_id integer NOT NULL REFERENCES clusters(id) ON DELETE CASCADE,
    ring text NOT NULL CONSTRAINT ring_versions_ring_name
      CHECK (ring IN ('account', 'container', 'object') OR ring ~ '^object-[1-9][0-9]{0,9}$'),
    version integer NOT NULL CHECK (version >= 1),
    ring_gz bytea NOT NULL,
    size_bytes integer NOT NULL CHECK (size_bytes >= 0),
    md5 char(32) NOT NULL CONSTRAINT ring_versions_md5_hex CHECK (md5 ~ '^[0-9a-f]{32}$'),
    part_power smallint NOT NULL CHECK (part_power BETWEEN 0 AND 32),
    replicas double precision NOT NULL CHECK (replicas > 0),
    device_count integer NOT NULL CHECK (device_count >= 0),
    plan_id text CHECK (char_length(plan_id) BETWEEN 1 AND 255),
    plan_step integer CHECK (plan_step >= 0),
    plan jsonb,
    current boolean NOT NULL DEFAULT false,
    created_by text NOT NULL,
    created_by_id integer,
    created_at timestamptz(3) NOT NULL DEFAULT now(),
    CONSTRAINT ring_versions_version_unique UNIQUE (cluster_id, ring, version)
  )`);
  await knex.raw('CREATE UNIQUE INDEX ring_versions_current ON ring_versions (cluster_id, ring) WHERE current');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE ring_versions');
}
