import type { Knex } from 'knex';

/**
 * Capacity is computed by the domain's pure statistics when devices are reported (in the same
 * transaction) and kept per cluster, so reading it costs one row whatever the cluster's size.
 * Devices also remember whether they were mounted when reported.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('devices', (t) => {
    t.boolean('mounted').notNullable().defaultTo(true);
  });
  await knex.schema.createTable('capacity_reports', (t) => {
    t.integer('cluster_id').primary().references('id').inTable('clusters').onDelete('CASCADE');
    t.jsonb('elements').notNullable();
    t.timestamp('computed_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  // Filters by policy test membership in the array.
  await knex.raw('CREATE INDEX devices_policy_indexes_idx ON devices USING gin (policy_indexes)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX devices_policy_indexes_idx');
  await knex.schema.dropTable('capacity_reports');
  await knex.schema.alterTable('devices', (t) => {
    t.dropColumn('mounted');
  });
}
