import type { Knex } from 'knex';

/**
 * `stepped_up_until`: until when a console session may mint lasting credentials (API keys,
 * operators, more power for an operator, a backup), set when the operator re-enters an API key
 * (POST session/step_up/). NULL: never stepped up. Compared with the database's clock, like the
 * session's other times.
 *
 * Expand-only: one nullable column, no rewrite, no backfill; the previous release reads and writes
 * the table as before (it does not ask for a step-up, so roll the whole fleet before relying on it).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE console_sessions ADD COLUMN stepped_up_until timestamptz(3)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE console_sessions DROP COLUMN stepped_up_until');
}
