import { TABLES } from '@cairn/contract';
import type { Knex } from 'knex';

/**
 * The change log and the heartbeat a gateway reading a hot standby follows (NOTIFY is not
 * replicated: a standby's sessions never hear it). Expand-only: the NOTIFY triggers stay, these
 * triggers come next to them, and nothing that exists changes.
 *
 * `change_log`: one row per fact the NOTIFY channels announce (a user, a cluster or an S3
 * credential inserted, updated or deleted; a statement changing more than 64 users logs one row
 * per cluster with no key; a TRUNCATE one row with neither), written by the trigger in the same
 * transaction as the change, so a standby replays both at once. The functions are SECURITY
 * DEFINER: the gateway's own role writes S3 credentials, and needs no right on the log for that.
 *
 * `replication_heartbeat`: one row, set to now() every second by the management API.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE TABLE ${TABLES.changeLog} (
    seq bigserial PRIMARY KEY,
    kind text NOT NULL CHECK (kind IN ('user', 'cluster', 's3_credential')),
    cluster_id integer,
    key text,
    logged_at timestamptz NOT NULL DEFAULT clock_timestamp()
  )`);
  await knex.raw(
    `CREATE TABLE ${TABLES.heartbeat} (id smallint PRIMARY KEY CHECK (id = 1), beat_at timestamptz NOT NULL)`,
  );
  await knex.raw(`INSERT INTO ${TABLES.heartbeat} (id, beat_at) VALUES (1, now())`);

  await knex.raw(`
    CREATE FUNCTION cairn_log_user_changes() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
    BEGIN
      IF (SELECT count(*) FROM changed_users) <= 64 THEN
        INSERT INTO ${TABLES.changeLog} (kind, cluster_id, key) SELECT 'user', cluster_id, username FROM changed_users;
      ELSE
        INSERT INTO ${TABLES.changeLog} (kind, cluster_id) SELECT DISTINCT 'user', cluster_id FROM changed_users;
      END IF;
      RETURN NULL;
    END $$`);
  for (const [op, ref] of [
    ['insert', 'NEW'],
    ['update', 'NEW'],
    ['delete', 'OLD'],
  ] as const) {
    await knex.raw(`CREATE TRIGGER storage_users_logged_on_${op} AFTER ${op.toUpperCase()} ON ${TABLES.storageUsers}
      REFERENCING ${ref} TABLE AS changed_users FOR EACH STATEMENT EXECUTE FUNCTION cairn_log_user_changes()`);
  }
  await knex.raw(`
    CREATE FUNCTION cairn_log_cluster_changes() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
    BEGIN
      INSERT INTO ${TABLES.changeLog} (kind, cluster_id) VALUES ('cluster', CASE WHEN TG_OP = 'DELETE' THEN OLD.id ELSE NEW.id END);
      RETURN NULL;
    END $$`);
  await knex.raw(`CREATE TRIGGER clusters_logged AFTER INSERT OR UPDATE OR DELETE ON ${TABLES.clusters}
    FOR EACH ROW EXECUTE FUNCTION cairn_log_cluster_changes()`);
  await knex.raw(`
    CREATE FUNCTION cairn_log_s3_credential_changes() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
    BEGIN
      IF TG_OP <> 'INSERT' THEN
        INSERT INTO ${TABLES.changeLog} (kind, key) VALUES ('s3_credential', OLD.access_key);
      END IF;
      IF TG_OP <> 'DELETE' THEN
        INSERT INTO ${TABLES.changeLog} (kind, key) VALUES ('s3_credential', NEW.access_key);
      END IF;
      RETURN NULL;
    END $$`);
  await knex.raw(`CREATE TRIGGER s3_credentials_logged AFTER INSERT OR UPDATE OR DELETE ON ${TABLES.s3Credentials}
    FOR EACH ROW EXECUTE FUNCTION cairn_log_s3_credential_changes()`);
  // TRUNCATE fires no row trigger: one row without a key (forget every row of that kind).
  await knex.raw(`
    CREATE FUNCTION cairn_log_truncate() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
    BEGIN
      INSERT INTO ${TABLES.changeLog} (kind) VALUES (TG_ARGV[0]);
      RETURN NULL;
    END $$`);
  await knex.raw(
    `CREATE TRIGGER storage_users_truncate_logged AFTER TRUNCATE ON ${TABLES.storageUsers} FOR EACH STATEMENT EXECUTE FUNCTION cairn_log_truncate('user')`,
  );
  await knex.raw(
    `CREATE TRIGGER s3_credentials_truncate_logged AFTER TRUNCATE ON ${TABLES.s3Credentials} FOR EACH STATEMENT EXECUTE FUNCTION cairn_log_truncate('s3_credential')`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP TRIGGER s3_credentials_truncate_logged ON ${TABLES.s3Credentials}`);
  await knex.raw(`DROP TRIGGER storage_users_truncate_logged ON ${TABLES.storageUsers}`);
  await knex.raw('DROP FUNCTION cairn_log_truncate()');
  await knex.raw(`DROP TRIGGER s3_credentials_logged ON ${TABLES.s3Credentials}`);
  await knex.raw('DROP FUNCTION cairn_log_s3_credential_changes()');
  await knex.raw(`DROP TRIGGER clusters_logged ON ${TABLES.clusters}`);
  await knex.raw('DROP FUNCTION cairn_log_cluster_changes()');
  for (const op of ['insert', 'update', 'delete'])
    await knex.raw(`DROP TRIGGER storage_users_logged_on_${op} ON ${TABLES.storageUsers}`);
  await knex.raw('DROP FUNCTION cairn_log_user_changes()');
  await knex.raw(`DROP TABLE ${TABLES.heartbeat}`);
  await knex.raw(`DROP TABLE ${TABLES.changeLog}`);
}
