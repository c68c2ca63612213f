import type { Knex } from 'knex';

/**
 * Transfer by request class, API and network (docs/utilization.md): counts per class, the failed
 * requests among them, and the S3 and internal-network shares of the totals.
 *
 * NOT NULL DEFAULT 0: Postgres adds a column with a constant default without rewriting a table, so
 * this is quick however many partitions and rows there are, and rows written before it read 0 in
 * every new column: their hours are known by totals only (req_count larger than the classes' sum).
 * The hourly key's INCLUDE list is left as it is (rebuilding every partition's key would take
 * the migration as long as the table is large); the summary reads these columns from the heap.
 * The column list is written out here, not read from the code, so this migration never changes.
 */
const COLUMNS = [
  'req_get',
  'req_head',
  'req_put',
  'req_post',
  'req_delete',
  'req_list',
  'req_copy',
  'req_other',
  'req_errors',
  's3_bytes_in',
  's3_bytes_out',
  's3_req_count',
  'internal_bytes_in',
  'internal_bytes_out',
  'internal_req_count',
] as const;
const TABLES = ['utilization_transfer_hourly', 'utilization_transfer_daily'] as const;

export async function up(knex: Knex): Promise<void> {
  for (const table of TABLES)
    await knex.raw(`ALTER TABLE ?? ${COLUMNS.map(() => 'ADD COLUMN ?? bigint NOT NULL DEFAULT 0').join(', ')}`, [
      table,
      ...COLUMNS,
    ]);
}

export async function down(knex: Knex): Promise<void> {
  for (const table of TABLES)
    await knex.raw(`ALTER TABLE ?? ${COLUMNS.map(() => 'DROP COLUMN ??').join(', ')}`, [table, ...COLUMNS]);
}
