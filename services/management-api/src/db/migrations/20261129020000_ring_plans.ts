import type { Knex } from 'knex';

/**
 * `ring_plans`: ring plans computed by Swift's ring builder on a ring host (`cairn rings plan
 * --cluster`, `cairn rings plans push`), kept per cluster so that the console's "What if" panel
 * can show a plan's exact figures. The plan JSON is kept whole; the figures lists show and filter
 * on are copied into columns when it is stored (a plan is never changed afterwards).
 *
 * Deleting a cluster deletes its plans, as it does its ring versions. Expand-only: a new table.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE TABLE ring_plans (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    cluster_id integer NOT NULL REFERENCES clusters(id) ON DELETE CASCADE,
    name text CHECK (char_length(name) BETWEEN 1 AND 255),
    ring text NOT NULL CONSTRAINT ring_plans_ring_name
      CHECK (ring IN ('account', 'container', 'object') OR ring ~ '^object-[1-9][0-9]{0,9}$'),
    seed bigint NOT NULL CHECK (seed >= 0),
    swift_version text NOT NULL,
    computed_at timestamptz(3),
    parts_total bigint NOT NULL CHECK (parts_total >= 0),
    parts_moved bigint NOT NULL CHECK (parts_moved >= 0),
    parts_moved_pct double precision NOT NULL,
    replicas_moved bigint NOT NULL CHECK (replicas_moved >= 0),
    bytes_to_move bigint CHECK (bytes_to_move >= 0),
    device_count integer NOT NULL CHECK (device_count >= 0),
    steps_computed integer NOT NULL CHECK (steps_computed >= 0),
    steps_estimated integer NOT NULL CHECK (steps_estimated >= 0),
    plan jsonb NOT NULL,
    created_by text NOT NULL,
    created_by_id integer,
    created_at timestamptz(3) NOT NULL DEFAULT now()
  )`);
  await knex.raw('CREATE INDEX ring_plans_cluster_created ON ring_plans (cluster_id, created_at, id)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE ring_plans');
}
