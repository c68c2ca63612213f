import { S3_CREDENTIAL_CHANGES_CHANNEL, TABLES } from '@cairn/contract';
import type { Knex } from 'knex';

/**
 * S3 credentials: a storage user's access keys with their secrets sealed (AES-256-GCM under a
 * configured key, `v1:<key id>:…`; packages/domain/src/s3-secret-crypto.ts). The secret has to be
 * recoverable, because checking an S3 signature means computing the same HMAC; it is never stored
 * or shown in the clear after the answer that created it.
 *
 * Deleting a user deletes its credentials (the cascade), and every committed insert, update or
 * delete, cascaded ones included, is announced on `cairn_s3_credentials` with the access key, so
 * the gateways forget a deleted credential at once. Ids are never reused: the gateway's cache is
 * keyed by them, and a credential deleted and another created must not look alike.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE TABLE ${TABLES.s3Credentials} (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    storage_user_id bigint NOT NULL REFERENCES storage_users(id) ON DELETE CASCADE,
    access_key varchar(128) NOT NULL UNIQUE CONSTRAINT s3_credentials_access_key_format CHECK (access_key ~ '^[A-Z0-9]{20}$'),
    secret_sealed text NOT NULL,
    created_at timestamptz(3) NOT NULL DEFAULT now()
  )`);
  // A user's credentials, in creation order (the OS-EC2 list and the management API's ?user=).
  await knex.raw(`CREATE INDEX s3_credentials_user_idx ON ${TABLES.s3Credentials} (storage_user_id, id)`);
  await knex.raw(`
    CREATE FUNCTION cairn_announce_s3_credential_changes() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('${S3_CREDENTIAL_CHANGES_CHANNEL}',
        json_build_object('access_key', CASE WHEN TG_OP = 'DELETE' THEN OLD.access_key ELSE NEW.access_key END)::text);
      RETURN NULL;
    END $$`);
  await knex.raw(`CREATE TRIGGER s3_credentials_announced AFTER INSERT OR UPDATE OR DELETE ON ${TABLES.s3Credentials}
    FOR EACH ROW EXECUTE FUNCTION cairn_announce_s3_credential_changes()`);
  // TRUNCATE (also `TRUNCATE storage_users CASCADE`) fires no row trigger: one notice without an
  // access key tells listeners to forget every credential.
  await knex.raw(`
    CREATE FUNCTION cairn_announce_s3_credentials_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('${S3_CREDENTIAL_CHANGES_CHANNEL}', json_build_object('all', true)::text);
      RETURN NULL;
    END $$`);
  await knex.raw(`CREATE TRIGGER s3_credentials_truncate_announced AFTER TRUNCATE ON ${TABLES.s3Credentials}
    FOR EACH STATEMENT EXECUTE FUNCTION cairn_announce_s3_credentials_truncated()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP TABLE ${TABLES.s3Credentials}`);
  await knex.raw('DROP FUNCTION cairn_announce_s3_credential_changes()');
  await knex.raw('DROP FUNCTION cairn_announce_s3_credentials_truncated()');
}
