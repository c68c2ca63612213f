import type { Knex } from 'knex';

/**
 * Utilization: per account, per storage policy, per hour, storage (maxima) and transfer (sums).
 *
 * Hourly rows are partitioned by time (by week, see repositories/utilization-partitions.ts) and
 * daily rollups by month (declarative range partitioning, which embedded PGlite supports too):
 * retention drops whole partitions instead of deleting billions of rows, and a range query touches
 * only its partitions. Partitions are created ahead by the
 * maintenance run and on demand by writes (repositories/utilization-partitions.ts); there is no
 * default partition, so a row for a day without a partition is refused, never silently misplaced.
 *
 * Keys lead with (cluster_id, account): one account's records, and a run of accounts in name order
 * (the summary, exports), are each one contiguous index range per partition. The hourly keys
 * include the figures, so those reads are index-only once a partition is vacuumed: samples arrive
 * a round at a time, which scatters one account's hours over as many heap pages as it has hours.
 *
 * policy_index -1 holds an account's totals (storage: X-Account-Bytes-Used & co; transfer:
 * requests whose policy is unknown, such as account and container requests).
 *
 * Storage coverage: `slots` is a bitmask of the collection slots of the hour (slot_count of them,
 * 3600 / the collector's interval) in which the account was sampled; OR-ing it makes re-sent
 * samples harmless, and popcount / slot_count is the hour's pct_complete.
 */
export async function up(knex: Knex): Promise<void> {
  // Every account name ever created per cluster: deleted users' data stays in Swift and still costs.
  await knex.schema.createTable('utilization_accounts', (t) => {
    t.integer('cluster_id').notNullable().references('id').inTable('clusters').onDelete('CASCADE');
    t.string('account', 300).notNullable();
    t.timestamp('first_seen', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['cluster_id', 'account']);
  });
  await knex.raw(`
    CREATE FUNCTION cairn_remember_accounts() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO utilization_accounts (cluster_id, account)
        SELECT cluster_id, 'AUTH_' || username FROM new_users
        ON CONFLICT DO NOTHING;
      RETURN NULL;
    END $$`);
  await knex.raw(`CREATE TRIGGER storage_users_accounts_remembered AFTER INSERT ON storage_users
    REFERENCING NEW TABLE AS new_users FOR EACH STATEMENT EXECUTE FUNCTION cairn_remember_accounts()`);
  await knex.raw(`INSERT INTO utilization_accounts (cluster_id, account)
    SELECT cluster_id, 'AUTH_' || username FROM storage_users ON CONFLICT DO NOTHING`);

  await knex.raw(`CREATE TABLE utilization_storage_hourly (
    cluster_id integer NOT NULL,
    policy_index smallint NOT NULL,
    account varchar(300) NOT NULL,
    hour timestamptz NOT NULL,
    bytes_used bigint NOT NULL,
    object_count bigint NOT NULL,
    container_count bigint NOT NULL,
    slots bigint NOT NULL DEFAULT 0,
    slot_count smallint NOT NULL DEFAULT 1,
    PRIMARY KEY (cluster_id, account, policy_index, hour) INCLUDE (bytes_used, object_count, container_count, slots, slot_count)
  ) PARTITION BY RANGE (hour)`);
  await knex.raw(`CREATE TABLE utilization_transfer_hourly (
    cluster_id integer NOT NULL,
    policy_index smallint NOT NULL,
    account varchar(300) NOT NULL,
    hour timestamptz NOT NULL,
    bytes_in bigint NOT NULL,
    bytes_out bigint NOT NULL,
    req_count bigint NOT NULL,
    PRIMARY KEY (cluster_id, account, policy_index, hour) INCLUDE (bytes_in, bytes_out, req_count)
  ) PARTITION BY RANGE (hour)`);
  await knex.raw(`CREATE TABLE utilization_storage_daily (
    cluster_id integer NOT NULL,
    policy_index smallint NOT NULL,
    account varchar(300) NOT NULL,
    day date NOT NULL,
    byte_hours bigint NOT NULL,
    bytes_used_peak bigint NOT NULL,
    object_count bigint NOT NULL,
    container_count bigint NOT NULL,
    covered_hours real NOT NULL,
    sampled_hours smallint NOT NULL,
    PRIMARY KEY (cluster_id, account, policy_index, day)
  ) PARTITION BY RANGE (day)`);
  await knex.raw(`CREATE TABLE utilization_transfer_daily (
    cluster_id integer NOT NULL,
    policy_index smallint NOT NULL,
    account varchar(300) NOT NULL,
    day date NOT NULL,
    bytes_in bigint NOT NULL,
    bytes_out bigint NOT NULL,
    req_count bigint NOT NULL,
    PRIMARY KEY (cluster_id, account, policy_index, day)
  ) PARTITION BY RANGE (day)`);

  // Which minutes of each hour the access logs ingested so far cover (a bitmask of 60 bits).
  await knex.schema.createTable('utilization_transfer_coverage', (t) => {
    t.integer('cluster_id').notNullable().references('id').inTable('clusters').onDelete('CASCADE');
    t.timestamp('hour', { useTz: true }).notNullable();
    t.bigInteger('minutes').notNullable().defaultTo(0);
    t.primary(['cluster_id', 'hour']);
  });
  // Transfer batches already counted: a re-sent batch is acknowledged and ignored.
  await knex.schema.createTable('utilization_transfer_batches', (t) => {
    t.integer('cluster_id').notNullable().references('id').inTable('clusters').onDelete('CASCADE');
    t.string('batch_id', 128).notNullable();
    t.timestamp('received_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['cluster_id', 'batch_id']);
  });
  // The storage policies a cluster's samples have named: the summary's per-policy columns.
  await knex.schema.createTable('utilization_policies', (t) => {
    t.integer('cluster_id').notNullable().references('id').inTable('clusters').onDelete('CASCADE');
    t.smallint('policy_index').notNullable();
    t.primary(['cluster_id', 'policy_index']);
  });
  // Days whose hourly rows have been rolled up into the daily tables.
  await knex.schema.createTable('utilization_rollups', (t) => {
    t.date('day').primary();
    t.timestamp('rolled_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of [
    'utilization_policies',
    'utilization_rollups',
    'utilization_transfer_batches',
    'utilization_transfer_coverage',
    'utilization_transfer_daily',
    'utilization_storage_daily',
    'utilization_transfer_hourly',
    'utilization_storage_hourly',
  ]) {
    await knex.raw(`DROP TABLE ${table}`);
  }
  await knex.raw('DROP TRIGGER storage_users_accounts_remembered ON storage_users');
  await knex.raw('DROP FUNCTION cairn_remember_accounts()');
  await knex.schema.dropTable('utilization_accounts');
}
