import type { Knex } from 'knex';

/**
 * Storage users' console sessions (repositories/storage-user-sessions.ts), apart from the
 * operators' (console_sessions): a storage user's session must never be mistaken for an operator's,
 * and the two hang off different rows. Only a SHA-256 of the session id is stored. Each session
 * hangs off its user (deleting the user deletes them) and keeps the user's `generation` at sign-in:
 * every request joins the user and requires it enabled and unchanged, so a disabled user, a new
 * password or a new superuser flag ends the session on the next request, on every replica.
 * Expand-only: a new table, nothing existing changes, so older replicas run beside it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE TABLE storage_user_sessions (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id_hash bytea NOT NULL CONSTRAINT storage_user_sessions_id_hash_unique UNIQUE,
    storage_user_id bigint NOT NULL REFERENCES storage_users(id) ON DELETE CASCADE,
    user_generation bigint NOT NULL,
    created_at timestamptz(3) NOT NULL DEFAULT now(),
    last_seen_at timestamptz(3) NOT NULL DEFAULT now(),
    expires_at timestamptz(3) NOT NULL
  )`);
  // The cascade from storage_users, and the maintenance that deletes ended sessions.
  await knex.raw('CREATE INDEX storage_user_sessions_user_idx ON storage_user_sessions (storage_user_id)');
  await knex.raw('CREATE INDEX storage_user_sessions_last_seen_idx ON storage_user_sessions (last_seen_at)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE storage_user_sessions');
}
