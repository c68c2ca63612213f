import { TABLES } from '@cairn/contract';
import type { Knex } from 'knex';

/**
 * Keystone V3 application credentials: a named secret a storage user makes for itself (through the
 * gateway's `/v3/users/{id}/application_credentials`), optionally expiring, with some or all of
 * its roles and optionally access rules. Only a SHA-256 of the secret is stored: the secret is 64
 * random bytes, so no dictionary or KDF is needed to make a dump of this table useless.
 *
 * Deleting a user deletes its credentials (the cascade). The gateway reads a credential by id at
 * every validation of a token made from it (a cache of a fraction of a second), so a deleted row
 * voids its tokens on every replica without a notice. Expand-only: a new table, nothing existing
 * changes, so older replicas run beside it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE TABLE ${TABLES.applicationCredentials} (
    id varchar(32) PRIMARY KEY CONSTRAINT application_credentials_id_format CHECK (id ~ '^[0-9a-f]{32}$'),
    storage_user_id bigint NOT NULL REFERENCES storage_users(id) ON DELETE CASCADE,
    name varchar(255) NOT NULL,
    description text,
    secret_hash text NOT NULL,
    expires_at timestamptz(3),
    roles jsonb NOT NULL DEFAULT '[]',
    unrestricted boolean NOT NULL DEFAULT false,
    access_rules jsonb,
    created_at timestamptz(3) NOT NULL DEFAULT now(),
    CONSTRAINT application_credentials_user_name_unique UNIQUE (storage_user_id, name)
  )`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP TABLE ${TABLES.applicationCredentials}`);
}
