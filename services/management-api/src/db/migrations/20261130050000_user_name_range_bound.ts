import type { Knex } from 'knex';

/**
 * A ceiling on the name ranges' target size (20261124020000_user_name_buckets), so that no range
 * ever holds more than NAME_RANGE_MAX_ROWS users: a statement that leaves a range with more than
 * twice the target cuts it. The list planner bounds its counts of a prefix's edge rows by it
 * (repositories/list-ranges.ts): those rows lie in one range, but Postgres cannot see that, and at
 * 10,000,000 users it estimated each count at a third of the table, so it planned parallel
 * workers and compiled the statement (JIT) to read a few thousand index entries. The CHECK makes
 * the ceiling a rule of the database, so the bound holds whatever the setting.
 */
export const NAME_RANGE_MAX_TARGET = 16_384;
export const NAME_RANGE_MAX_ROWS = 2 * NAME_RANGE_MAX_TARGET;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    `ALTER TABLE storage_user_name_bucket_settings
       ADD CONSTRAINT storage_user_name_bucket_settings_target_max CHECK (target_size <= ${NAME_RANGE_MAX_TARGET})`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(
    'ALTER TABLE storage_user_name_bucket_settings DROP CONSTRAINT storage_user_name_bucket_settings_target_max',
  );
}
