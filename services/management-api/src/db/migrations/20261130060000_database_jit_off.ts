import type { Knex } from 'knex';

/**
 * Cairn's database runs without JIT compilation by default (`ALTER DATABASE … SET jit = off`).
 *
 * Every statement Cairn sends reads a few hundred pages at most, but some carry a fallback branch
 * that rarely runs (the plain OFFSET walk of a name prefix the id buckets cannot serve) and is
 * costed in full: at 10,000,000 users that puts the whole statement over `jit_above_cost`, and
 * Postgres then compiles it at every execution, 37 ms for a statement that runs in 7 ms.
 *
 * A database default is the weakest of Postgres' settings: a role's own setting (`ALTER ROLE …
 * SET jit = on`) or a session's still win. It is left alone where the database already has a
 * `jit` setting of its own, and where the migrating role may not alter the database (neither its
 * owner nor a superuser); docs/deployment.md says what to run then.
 */
const MAY_ALTER = `(SELECT rolsuper FROM pg_roles WHERE rolname = current_user)
  OR pg_has_role(current_user, (SELECT datdba FROM pg_database WHERE datname = current_database()), 'USAGE')`;
const HAS_OWN_JIT = `EXISTS (
  SELECT 1 FROM pg_db_role_setting s
   WHERE s.setdatabase = (SELECT oid FROM pg_database WHERE datname = current_database())
     AND s.setrole = 0 AND EXISTS (SELECT 1 FROM unnest(s.setconfig) c WHERE c LIKE 'jit=%'))`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`DO $$ BEGIN
    IF (${MAY_ALTER}) AND NOT ${HAS_OWN_JIT} THEN
      EXECUTE format('ALTER DATABASE %I SET jit = off', current_database());
    END IF;
  END $$`);
}

/**
 * Resets a database default of off, which `up` sets; an operator's own `jit = off` looks the same
 * and goes too (a rollback then runs with the server's default).
 */
export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DO $$ BEGIN
    IF (${MAY_ALTER}) AND EXISTS (
      SELECT 1 FROM pg_db_role_setting s
       WHERE s.setdatabase = (SELECT oid FROM pg_database WHERE datname = current_database())
         AND s.setrole = 0 AND 'jit=off' = ANY (s.setconfig)) THEN
      EXECUTE format('ALTER DATABASE %I RESET jit', current_database());
    END IF;
  END $$`);
}
