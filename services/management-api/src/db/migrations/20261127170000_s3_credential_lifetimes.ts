import { TABLES } from '@cairn/contract';
import type { Knex } from 'knex';

/**
 * S3 credentials that end:
 *
 * - `expires_at`: when the credential stops signing (NULL: never). The gateway compares it with
 *   the clock at every signature check, so an expired key is refused from its expiry on, however
 *   recently its row was read.
 * - `application_credential_id`: set on an EC2 credential made with a token of an application
 *   credential (Keystone keeps `app_cred_id` in the credential's blob). Its signatures then carry
 *   that credential's roles, and fail once it has expired. Deleting the application credential
 *   deletes the S3 credentials bound to it (the cascade): each delete is announced on
 *   `cairn_s3_credentials` by the existing row trigger, so every gateway forgets the key at once.
 *
 * Expand-only: two nullable columns and a partial index, no rewrite, no backfill; the previous
 * release reads and writes the table as before. That release's gateways do not know the columns
 * and would ignore an expiry or a binding, so make such credentials once every gateway runs this
 * release (docs/releasing.md).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE ${TABLES.s3Credentials}
    ADD COLUMN expires_at timestamptz(3),
    ADD COLUMN application_credential_id varchar(32) REFERENCES ${TABLES.applicationCredentials}(id) ON DELETE CASCADE`);
  // The cascade looks bound credentials up by their application credential; few rows have one.
  await knex.raw(
    `CREATE INDEX s3_credentials_application_credential_idx ON ${TABLES.s3Credentials} (application_credential_id) WHERE application_credential_id IS NOT NULL`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX s3_credentials_application_credential_idx');
  await knex.raw(`ALTER TABLE ${TABLES.s3Credentials} DROP COLUMN application_credential_id, DROP COLUMN expires_at`);
}
