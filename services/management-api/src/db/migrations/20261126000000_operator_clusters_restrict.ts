import type { Knex } from 'knex';

/**
 * An operator limited to clusters is limited by its `operator_clusters` rows, and an operator with
 * none may reach every cluster. With ON DELETE CASCADE, deleting the only cluster an operator was
 * limited to removed its last row and so gave it every cluster. RESTRICT makes Postgres refuse
 * such a delete whatever runs at the same time; the clusters repository names the operators first.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('operator_clusters', (t) => {
    t.dropForeign(['cluster_id']);
    t.foreign('cluster_id').references('id').inTable('clusters').onDelete('RESTRICT');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('operator_clusters', (t) => {
    t.dropForeign(['cluster_id']);
    t.foreign('cluster_id').references('id').inTable('clusters').onDelete('CASCADE');
  });
}
