import type { Knex } from 'knex';

/**
 * The gateway token a storage user's sign-in got, kept with its session so that "My keys" can call
 * the cluster's gateway (its OS-EC2 and application credential APIs) as that user
 * (services/self-keys.ts). Sealed under a key derived from the session id, which is stored only as
 * its SHA-256: the row alone does not open it. Null for a session opened before this column.
 * Expand-only: a nullable column, so older replicas run beside it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE storage_user_sessions ADD COLUMN gateway_token_sealed text');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE storage_user_sessions DROP COLUMN gateway_token_sealed');
}
