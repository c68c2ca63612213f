import type { Knex } from 'knex';

/**
 * The console's sign-in sessions (repositories/console-sessions.ts). Only a SHA-256 of the session
 * id is stored, so a dump of this table signs no one in. Each session hangs off the API key it was
 * opened with: revoking the key (deleting its row, or the operator's) deletes its sessions, and
 * every request joins through api_keys anyway, so no replica can honour a session whose key is
 * gone. Expand-only: a new table, nothing existing changes, so older replicas run beside it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE TABLE console_sessions (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id_hash bytea NOT NULL CONSTRAINT console_sessions_id_hash_unique UNIQUE,
    api_key_id bigint NOT NULL REFERENCES api_keys(id) ON DELETE CASCADE,
    created_at timestamptz(3) NOT NULL DEFAULT now(),
    last_seen_at timestamptz(3) NOT NULL DEFAULT now(),
    expires_at timestamptz(3) NOT NULL
  )`);
  // The cascade from api_keys, and the maintenance that deletes ended sessions.
  await knex.raw('CREATE INDEX console_sessions_api_key_idx ON console_sessions (api_key_id)');
  await knex.raw('CREATE INDEX console_sessions_last_seen_idx ON console_sessions (last_seen_at)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE console_sessions');
}
