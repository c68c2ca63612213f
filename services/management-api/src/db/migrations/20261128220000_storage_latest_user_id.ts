import { TABLES } from '@cairn/contract';
import type { Knex } from 'knex';

/**
 * `utilization_storage_latest.user_id`: the Cairn user whose account `AUTH_<user>` the row is (NULL:
 * no user has that account), with a unique index, so that a page of users reads each user's usage
 * by its bigint id: a smaller index and cheaper comparisons than the (cluster_id, account) key,
 * which the page had to build per row ('AUTH_' || username) to look up.
 *
 * Set once per row, not on the hourly path: the hourly samples' upserts move existing rows
 * forward without looking their user up again, and only rows inserted (an account's first sample, or its first
 * after retention emptied it) get their user looked up, by a statement trigger. A user created after
 * its account was sampled (an import) is set on its account's row by a trigger on storage_users;
 * deleting a user sets it back to NULL (foreign key). A user's name and cluster never change. A
 * user created in the same instant as its account's first sample is written, by another
 * transaction, may miss it (neither sees the other's uncommitted row): the hourly upsert also looks
 * up the user of a row that has none (an index lookup, only for such rows), so it shows the next
 * hourly sample.
 *
 * Expand-only: a nullable column, an index and triggers; the previous release neither reads nor
 * writes the column, and its writes (a collector's post, a user's creation) keep it through the
 * triggers.
 */
const LATEST = 'utilization_storage_latest';
/** An account's user: `AUTH_<user>` in the same cluster (usernames are COLLATE "C", as their index). */
const USER_OF_ACCOUNT = (l: string) =>
  `u.cluster_id = ${l}.cluster_id AND left(${l}.account, 5) = 'AUTH_' AND u.username = substr(${l}.account, 6) COLLATE "C"`;

/** The hourly table's trigger function (migration 20261128110000), `set`: more of what an update sets. */
const keepLatest = (set = '') => `
  CREATE OR REPLACE FUNCTION cairn_keep_latest_storage() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO utilization_storage_latest AS l (cluster_id, account, hour, bytes_used, object_count)
      SELECT DISTINCT ON (cluster_id, account) cluster_id, account, hour, bytes_used, object_count
        FROM sampled WHERE policy_index = -1
       ORDER BY cluster_id, account, hour DESC
      ON CONFLICT (cluster_id, account) DO UPDATE
        SET hour = excluded.hour, bytes_used = excluded.bytes_used, object_count = excluded.object_count${set}
        WHERE l.hour <= excluded.hour;
    RETURN NULL;
  END $$`;

export async function up(knex: Knex): Promise<void> {
  // Serialises with the writes: those wait for the backfill, so none is missed.
  await knex.raw(`LOCK TABLE ${LATEST}, ${TABLES.storageUsers} IN SHARE ROW EXCLUSIVE MODE`);
  await knex.raw(`ALTER TABLE ${LATEST} ADD COLUMN user_id bigint`);
  await knex.raw(`
    CREATE FUNCTION cairn_latest_storage_users() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE ${LATEST} l SET user_id = u.id FROM added a, ${TABLES.storageUsers} u
       WHERE l.cluster_id = a.cluster_id AND l.account = a.account AND ${USER_OF_ACCOUNT('a')};
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE FUNCTION cairn_latest_storage_of_new_users() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE ${LATEST} l SET user_id = n.id FROM new_users n
       WHERE l.cluster_id = n.cluster_id AND l.account = ('AUTH_' || n.username) COLLATE "default";
      RETURN NULL;
    END $$`);
  // coalesce: the lookup runs only for a row without its user.
  await knex.raw(
    keepLatest(
      `, user_id = coalesce(l.user_id, (SELECT u.id FROM ${TABLES.storageUsers} u WHERE ${USER_OF_ACCOUNT('l')}))`,
    ),
  );
  await knex.raw(`CREATE TRIGGER ${LATEST}_user_on_insert AFTER INSERT ON ${LATEST}
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION cairn_latest_storage_users()`);
  await knex.raw(`CREATE TRIGGER ${LATEST}_of_new_users AFTER INSERT ON ${TABLES.storageUsers}
    REFERENCING NEW TABLE AS new_users FOR EACH STATEMENT EXECUTE FUNCTION cairn_latest_storage_of_new_users()`);
  await knex.raw(`UPDATE ${LATEST} l SET user_id = u.id FROM ${TABLES.storageUsers} u WHERE ${USER_OF_ACCOUNT('l')}`);
  await knex.raw(`CREATE UNIQUE INDEX ${LATEST}_user_id ON ${LATEST} (user_id)`);
  // After the backfill: checked in one pass instead of row by row.
  await knex.raw(`ALTER TABLE ${LATEST} ADD CONSTRAINT ${LATEST}_user_id_fkey
    FOREIGN KEY (user_id) REFERENCES ${TABLES.storageUsers} (id) ON DELETE SET NULL`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP TRIGGER ${LATEST}_user_on_insert ON ${LATEST}`);
  await knex.raw(`DROP TRIGGER ${LATEST}_of_new_users ON ${TABLES.storageUsers}`);
  await knex.raw(keepLatest());
  await knex.raw('DROP FUNCTION cairn_latest_storage_users()');
  await knex.raw('DROP FUNCTION cairn_latest_storage_of_new_users()');
  await knex.raw(`ALTER TABLE ${LATEST} DROP COLUMN user_id`);
}
