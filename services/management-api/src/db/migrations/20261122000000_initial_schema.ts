import type { Knex } from 'knex';

/**
 * Clusters, their storage users, operators with API keys, storage policies and devices.
 * Errors are never caught here: a failed migration must stop the deploy, inside its transaction.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('clusters', (t) => {
    t.increments('id').primary();
    t.string('name', 255).notNullable().unique();
    t.uuid('uuid').notNullable().unique();
    t.text('auth_url').notNullable();
    t.text('storage_url').notNullable();
    t.string('region', 255).notNullable().defaultTo('RegionOne');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('storage_users', (t) => {
    t.bigIncrements('id').primary();
    // RESTRICT: a cluster cannot vanish from under its users (the API explains why with a 400).
    t.integer('cluster_id').notNullable().references('id').inTable('clusters').onDelete('RESTRICT');
    t.string('username', 255).notNullable();
    t.text('password_hash').notNullable();
    t.boolean('is_superuser').notNullable().defaultTo(false);
    t.boolean('enabled').notNullable().defaultTo(true);
    t.bigInteger('generation').notNullable().defaultTo(1);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['cluster_id', 'username'], { indexName: 'storage_users_cluster_username_unique' });
  });
  // Serves `user`, `user__startswith` and username ordering across clusters.
  await knex.raw('CREATE INDEX storage_users_username_idx ON storage_users (username text_pattern_ops)');
  // Serves "page 1 of one cluster, ordered by id" without a sort.
  await knex.raw('CREATE INDEX storage_users_cluster_id_id_idx ON storage_users (cluster_id, id)');

  await knex.schema.createTable('operators', (t) => {
    t.increments('id').primary();
    t.string('name', 64).notNullable().unique();
    t.string('role', 16).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw("ALTER TABLE operators ADD CONSTRAINT operators_role_check CHECK (role IN ('admin', 'reader'))");

  await knex.schema.createTable('operator_clusters', (t) => {
    t.integer('operator_id').notNullable().references('id').inTable('operators').onDelete('CASCADE');
    t.integer('cluster_id').notNullable().references('id').inTable('clusters').onDelete('CASCADE');
    t.primary(['operator_id', 'cluster_id']);
  });

  await knex.schema.createTable('api_keys', (t) => {
    t.bigIncrements('id').primary();
    t.integer('operator_id').notNullable().references('id').inTable('operators').onDelete('CASCADE');
    t.binary('key_hash').notNullable().unique();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['operator_id']);
  });

  await knex.schema.createTable('storage_policies', (t) => {
    t.increments('id').primary();
    t.integer('cluster_id').notNullable().references('id').inTable('clusters').onDelete('CASCADE');
    t.integer('policy_index').notNullable();
    t.string('name', 255).notNullable();
    t.boolean('is_default').notNullable().defaultTo(false);
    t.unique(['cluster_id', 'policy_index']);
    t.unique(['cluster_id', 'name']);
  });

  await knex.schema.createTable('devices', (t) => {
    t.bigIncrements('id').primary();
    t.integer('cluster_id').notNullable().references('id').inTable('clusters').onDelete('CASCADE');
    t.string('node', 255).notNullable();
    t.string('device', 255).notNullable();
    // Indexes of the storage policies whose object rings list this device.
    t.specificType('policy_indexes', 'integer[]').notNullable().defaultTo('{}');
    t.bigInteger('size_bytes').nullable();
    t.bigInteger('used_bytes').nullable();
    t.bigInteger('avail_bytes').nullable();
    t.timestamp('reported_at', { useTz: true }).nullable();
    t.unique(['cluster_id', 'node', 'device']);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of [
    'devices',
    'storage_policies',
    'api_keys',
    'operator_clusters',
    'operators',
    'storage_users',
    'clusters',
  ]) {
    await knex.schema.dropTable(table);
  }
}
