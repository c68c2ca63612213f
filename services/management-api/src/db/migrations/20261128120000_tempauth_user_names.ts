import { TABLES } from '@cairn/contract';
import type { Knex } from 'knex';

/**
 * `storage_users.tempauth_user`: the tempauth user name a user imported from tempauth had
 * (`user_<account>_<user>`, imported as the Cairn user `<account>`), so that its clients keep
 * logging in over V1 as `<account>:<user>` (docs/auth-gateway.md). NULL for every other user.
 *
 * Expand-only: one nullable column, no rewrite, no backfill; the previous release neither reads
 * nor writes it, and its gateways answer such a login 401 as before.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE ${TABLES.storageUsers}
    ADD COLUMN tempauth_user text CHECK (char_length(tempauth_user) BETWEEN 1 AND 255)`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE ${TABLES.storageUsers} DROP COLUMN tempauth_user`);
}
