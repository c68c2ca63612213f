import { TABLES } from '@cairn/contract';
import type { Knex } from 'knex';

/**
 * `storage_user_usage`: each user's row of utilization_storage_latest (its account `AUTH_<user>`'s
 * totals at its latest sampled hour), keyed by the user's id, so that a page of users reads each
 * user's usage by a bigint primary key: a smaller index and cheaper comparisons than the account's
 * (cluster_id, name) key, which the page had to build per row ('AUTH_' || username) to look up.
 *
 * A mirror of utilization_storage_latest for the accounts that are Cairn users, kept by statement
 * triggers: on that table (its rows are inserted and moved forward by the hourly samples' triggers,
 * moved back or deleted by retention) and on storage_users (a user created after its account was
 * sampled, e.g. an imported one, gets the account's latest row). A user's name and cluster never
 * change, and deleting a user deletes its row (foreign key). A user created in the same instant as
 * its account's sample is written, by another transaction, may miss that sample (neither sees the
 * other's uncommitted row) and shows the next hourly one.
 *
 * Expand-only: a new table, filled from utilization_storage_latest, and triggers that keep it from
 * the previous release's writes (its collector writes the hourly table, whose triggers write the
 * latest one).
 */
const LATEST = 'utilization_storage_latest';
const USAGE = 'storage_user_usage';
/** An account's user: `AUTH_<user>` in the same cluster (usernames are COLLATE "C", as their index). */
const USER_OF_ACCOUNT = (l: string) =>
  `u.cluster_id = ${l}.cluster_id AND left(${l}.account, 5) = 'AUTH_' AND u.username = substr(${l}.account, 6) COLLATE "C"`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE TABLE ${USAGE} (
    user_id bigint PRIMARY KEY,
    hour timestamptz NOT NULL,
    bytes_used bigint NOT NULL,
    object_count bigint NOT NULL
  )`);
  await knex.raw(`
    CREATE FUNCTION cairn_keep_user_usage() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO ${USAGE} AS s (user_id, hour, bytes_used, object_count)
        SELECT u.id, l.hour, l.bytes_used, l.object_count
          FROM changed l JOIN ${TABLES.storageUsers} u ON ${USER_OF_ACCOUNT('l')}
        ON CONFLICT (user_id) DO UPDATE
          SET hour = excluded.hour, bytes_used = excluded.bytes_used, object_count = excluded.object_count;
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE FUNCTION cairn_forget_user_usage() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM ${USAGE} s USING gone l, ${TABLES.storageUsers} u WHERE ${USER_OF_ACCOUNT('l')} AND s.user_id = u.id;
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE FUNCTION cairn_usage_of_new_users() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO ${USAGE} (user_id, hour, bytes_used, object_count)
        SELECT n.id, l.hour, l.bytes_used, l.object_count
          FROM new_users n JOIN ${LATEST} l
            ON l.cluster_id = n.cluster_id AND l.account = ('AUTH_' || n.username) COLLATE "default";
      RETURN NULL;
    END $$`);
  // Serialises with the writes: those wait for the backfill, so none is missed or read twice.
  await knex.raw(`LOCK TABLE ${LATEST}, ${TABLES.storageUsers} IN SHARE ROW EXCLUSIVE MODE`);
  // A trigger with transition tables takes one event.
  for (const event of ['insert', 'update'])
    await knex.raw(`CREATE TRIGGER ${USAGE}_on_latest_${event} AFTER ${event.toUpperCase()} ON ${LATEST}
      REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION cairn_keep_user_usage()`);
  await knex.raw(`CREATE TRIGGER ${USAGE}_on_latest_delete AFTER DELETE ON ${LATEST}
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION cairn_forget_user_usage()`);
  await knex.raw(`CREATE TRIGGER ${USAGE}_on_user_insert AFTER INSERT ON ${TABLES.storageUsers}
    REFERENCING NEW TABLE AS new_users FOR EACH STATEMENT EXECUTE FUNCTION cairn_usage_of_new_users()`);
  await knex.raw(`INSERT INTO ${USAGE} (user_id, hour, bytes_used, object_count)
    SELECT u.id, l.hour, l.bytes_used, l.object_count FROM ${LATEST} l JOIN ${TABLES.storageUsers} u ON ${USER_OF_ACCOUNT('l')}`);
  // After the backfill: checked in one pass instead of row by row.
  await knex.raw(`ALTER TABLE ${USAGE} ADD CONSTRAINT ${USAGE}_user_id_fkey
    FOREIGN KEY (user_id) REFERENCES ${TABLES.storageUsers} (id) ON DELETE CASCADE`);
}

export async function down(knex: Knex): Promise<void> {
  for (const event of ['insert', 'update', 'delete'])
    await knex.raw(`DROP TRIGGER ${USAGE}_on_latest_${event} ON ${LATEST}`);
  await knex.raw(`DROP TRIGGER ${USAGE}_on_user_insert ON ${TABLES.storageUsers}`);
  await knex.raw('DROP FUNCTION cairn_keep_user_usage()');
  await knex.raw('DROP FUNCTION cairn_forget_user_usage()');
  await knex.raw('DROP FUNCTION cairn_usage_of_new_users()');
  await knex.raw(`DROP TABLE ${USAGE}`);
}
