import type { Knex } from 'knex';

/**
 * The application credential a storage user's session signed in with (null: a password). Every
 * request of the session requires that credential to still exist and not to have expired
 * (repositories/storage-user-sessions.ts), so deleting it ends the session at once, as it voids the
 * credential's tokens at the gateway. No foreign key: the gateway deletes credentials, and the
 * check is the session lookup's join, which a deleted row already fails.
 * Expand-only: a nullable column, so older replicas run beside it (their sessions have none).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE storage_user_sessions ADD COLUMN application_credential_id varchar(32)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE storage_user_sessions DROP COLUMN application_credential_id');
}
