import { APPLICATION_CREDENTIAL_CHANGES_CHANNEL, TABLES } from '@cairn/contract';
import type { Knex } from 'knex';

/**
 * Announces every committed change of an application credential (its id on
 * APPLICATION_CREDENTIAL_CHANGES_CHANNEL), as S3 credentials are announced, so that a gateway may
 * serve credential logins from memory behind its change-notice fence instead of reading the row
 * from Postgres at every login. Expand-only: a trigger on an existing table; a gateway that does
 * not listen reads the rows as before. A standby never hears NOTIFY: a gateway there keeps reading
 * every login's credential afresh.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION cairn_announce_application_credential_changes() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('${APPLICATION_CREDENTIAL_CHANGES_CHANNEL}',
        json_build_object('id', CASE WHEN TG_OP = 'DELETE' THEN OLD.id ELSE NEW.id END)::text);
      RETURN NULL;
    END $$`);
  await knex.raw(`CREATE TRIGGER application_credentials_announced AFTER INSERT OR UPDATE OR DELETE ON ${TABLES.applicationCredentials}
    FOR EACH ROW EXECUTE FUNCTION cairn_announce_application_credential_changes()`);
  // TRUNCATE (also `TRUNCATE storage_users CASCADE`) fires no row trigger: one notice without an
  // id tells listeners to forget every credential.
  await knex.raw(`
    CREATE FUNCTION cairn_announce_application_credentials_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('${APPLICATION_CREDENTIAL_CHANGES_CHANNEL}', json_build_object('all', true)::text);
      RETURN NULL;
    END $$`);
  await knex.raw(`CREATE TRIGGER application_credentials_truncate_announced AFTER TRUNCATE ON ${TABLES.applicationCredentials}
    FOR EACH STATEMENT EXECUTE FUNCTION cairn_announce_application_credentials_truncated()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP TRIGGER application_credentials_truncate_announced ON ${TABLES.applicationCredentials}`);
  await knex.raw('DROP FUNCTION cairn_announce_application_credentials_truncated()');
  await knex.raw(`DROP TRIGGER application_credentials_announced ON ${TABLES.applicationCredentials}`);
  await knex.raw('DROP FUNCTION cairn_announce_application_credential_changes()');
}
