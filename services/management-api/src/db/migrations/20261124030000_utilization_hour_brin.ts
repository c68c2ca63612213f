import type { Knex } from 'knex';

/**
 * A BRIN index on `hour` of the hourly utilization tables, for the reads of one hour range for every
 * account (the daily rollup, the summary's hours that are not rolled up yet). The hourly tables are
 * partitioned by week (repositories/utilization-partitions.ts), and their keys lead with the
 * account, so without it such a read scans the whole week. Rows arrive a collection round (or a log
 * batch) at a time, in time order, so the heap is ordered by hour and a few block ranges per day
 * say exactly where a day is: the index is a few pages per partition and costs inserts nothing
 * measurable. Created on the parents, it is made for every partition, present and future.
 */
const TABLES = ['utilization_storage_hourly', 'utilization_transfer_hourly'] as const;

export async function up(knex: Knex): Promise<void> {
  for (const table of TABLES) await knex.raw('CREATE INDEX ?? ON ?? USING brin (hour)', [`${table}_hour_brin`, table]);
}

export async function down(knex: Knex): Promise<void> {
  for (const table of TABLES) await knex.raw('DROP INDEX ??', [`${table}_hour_brin`]);
}
