import type { Knex } from 'knex';
import { REPLACE_FOREIGN_HASH_FUNCTION } from '@cairn/contract';

/**
 * Imported users keep the hash of the system they came from until their first login, when the
 * gateway replaces it with Cairn's scrypt hash of the same password. `password_scheme` says which
 * a user has, so operators can list who has not logged in since an import.
 *
 * Expand-only, for a release that runs beside the previous one: the column has a constant default
 * (no table rewrite), and a row trigger derives it from `password_hash` on every insert and every
 * change of the hash, so writers that do not know the column (the previous release's API) keep it
 * right. cairn_password_scheme() follows passwordScheme() of packages/domain (foreign-password-hash.ts),
 * by prefix only: the API validates a hash fully before storing it. Cairn's own `$scrypt$` ends in
 * '=' (padded base64), passlib's never does.
 *
 * The gateway's rehash goes through cairn_replace_foreign_password_hash(), SECURITY DEFINER, with
 * EXECUTE granted to the gateway's role by `cairn migrate --gateway-role` and revoked from PUBLIC: a
 * compare-and-set that replaces only a foreign hash, only with a Cairn scrypt one, and only while
 * the stored hash is the one the gateway verified. It leaves `generation` alone (same password:
 * tokens stay valid) and needs no grant on the table, whose statement triggers write counter tables
 * the gateway's role may not touch.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION cairn_password_scheme(hash text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
      SELECT CASE
        WHEN hash LIKE '$2a$%' OR hash LIKE '$2b$%' OR hash LIKE '$2y$%' THEN 'bcrypt'
        WHEN hash LIKE '$pbkdf2-sha512$%' THEN 'pbkdf2-sha512'
        WHEN hash LIKE '$scrypt$%' AND right(hash, 1) = '=' THEN 'scrypt'
        WHEN hash LIKE '$scrypt$%' THEN 'passlib-scrypt'
        ELSE 'unknown'
      END $$`);
  await knex.raw(`ALTER TABLE storage_users ADD COLUMN password_scheme text NOT NULL DEFAULT 'scrypt'`);
  await knex.raw(`
    CREATE FUNCTION cairn_set_password_scheme() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      NEW.password_scheme := cairn_password_scheme(NEW.password_hash);
      RETURN NEW;
    END $$`);
  await knex.raw(`CREATE TRIGGER storage_users_password_scheme BEFORE INSERT OR UPDATE OF password_hash ON storage_users
    FOR EACH ROW EXECUTE FUNCTION cairn_set_password_scheme()`);
  // Who has not logged in since an import: a small index, empty once everyone has.
  await knex.raw(
    `CREATE INDEX storage_users_foreign_scheme ON storage_users (cluster_id, password_scheme) WHERE password_scheme <> 'scrypt'`,
  );
  await knex.raw(`
    CREATE FUNCTION ${REPLACE_FOREIGN_HASH_FUNCTION}(user_id bigint, old_hash text, new_hash text) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
    BEGIN
      UPDATE storage_users SET password_hash = new_hash
       WHERE id = user_id AND password_hash = old_hash
         AND cairn_password_scheme(old_hash) NOT IN ('scrypt', 'unknown')
         AND cairn_password_scheme(new_hash) = 'scrypt';
      RETURN FOUND;
    END $$`);
  await knex.raw(`REVOKE ALL ON FUNCTION ${REPLACE_FOREIGN_HASH_FUNCTION}(bigint, text, text) FROM PUBLIC`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP FUNCTION ${REPLACE_FOREIGN_HASH_FUNCTION}(bigint, text, text)`);
  await knex.raw('DROP INDEX storage_users_foreign_scheme');
  await knex.raw('DROP TRIGGER storage_users_password_scheme ON storage_users');
  await knex.raw('DROP FUNCTION cairn_set_password_scheme()');
  await knex.raw('ALTER TABLE storage_users DROP COLUMN password_scheme');
  await knex.raw('DROP FUNCTION cairn_password_scheme(text)');
}
