import { USER_CHANGES_CHANNEL } from '@cairn/contract';
import type { Knex } from 'knex';

/**
 * Every committed insert, update or delete of storage users is announced on the channel
 * `cairn_storage_users`, whoever wrote it (this API, a bulk load, an operator with psql), so that
 * gateways holding user rows in memory drop them as soon as the change commits: Postgres delivers
 * notifications at commit, and drops them with a rollback.
 *
 * Payload: `{"cluster_id": 1, "user": "alice"}` per changed row; a statement that changes more
 * than 64 rows sends `{"cluster_id": 1, "all": true}` per cluster instead (a notification is at
 * most 8000 bytes, and a million of them would fill the queue of a bulk load).
 *
 * Postgres allows transition tables only on single-event triggers, hence three triggers sharing
 * one function.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION cairn_announce_user_changes() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF (SELECT count(*) FROM changed_users) <= 64 THEN
        PERFORM pg_notify('${USER_CHANGES_CHANNEL}', json_build_object('cluster_id', cluster_id, 'user', username)::text)
          FROM changed_users;
      ELSE
        PERFORM pg_notify('${USER_CHANGES_CHANNEL}', json_build_object('cluster_id', cluster_id, 'all', true)::text)
          FROM (SELECT DISTINCT cluster_id FROM changed_users) c;
      END IF;
      RETURN NULL;
    END $$`);
  await knex.raw(`CREATE TRIGGER storage_users_announced_on_insert AFTER INSERT ON storage_users
    REFERENCING NEW TABLE AS changed_users FOR EACH STATEMENT EXECUTE FUNCTION cairn_announce_user_changes()`);
  await knex.raw(`CREATE TRIGGER storage_users_announced_on_update AFTER UPDATE ON storage_users
    REFERENCING NEW TABLE AS changed_users FOR EACH STATEMENT EXECUTE FUNCTION cairn_announce_user_changes()`);
  await knex.raw(`CREATE TRIGGER storage_users_announced_on_delete AFTER DELETE ON storage_users
    REFERENCING OLD TABLE AS changed_users FOR EACH STATEMENT EXECUTE FUNCTION cairn_announce_user_changes()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER storage_users_announced_on_delete ON storage_users');
  await knex.raw('DROP TRIGGER storage_users_announced_on_update ON storage_users');
  await knex.raw('DROP TRIGGER storage_users_announced_on_insert ON storage_users');
  await knex.raw('DROP FUNCTION cairn_announce_user_changes()');
}
