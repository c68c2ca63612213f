import type { Knex } from 'knex';

/**
 * Settings Cairn's Postgres database gets as its own defaults (`ALTER DATABASE … SET`), made at
 * every migrate (the migrate job, or a start that migrates) rather than once by a migration: a
 * dump (`pg_dump` without `--create`) carries no database settings, so a database restored from
 * one gets them again at its first migrate.
 *
 * `jit = off`: every statement Cairn sends reads a few hundred pages at most, but some carry a
 * fallback branch that rarely runs (the plain OFFSET walk of a name prefix the id buckets cannot
 * serve) and is costed in full; at 10,000,000 users that put the whole statement over
 * `jit_above_cost`, and Postgres compiled it at every execution: 37 ms for a statement that runs
 * in 7 ms.
 *
 * A database default is the weakest of Postgres' settings: a role's own (`ALTER ROLE … SET jit =
 * on`) or a session's still wins. A database with a `jit` setting of its own keeps it; where the
 * migrating role may not alter the database (neither its owner nor a superuser) nothing is changed
 * (docs/deployment.md says what to run then).
 */
const KEEP_JIT_OFF = `DO $$
DECLARE
  db oid := (SELECT oid FROM pg_database WHERE datname = current_database());
BEGIN
  -- Replicas starting together would otherwise update the same catalog row at once.
  PERFORM pg_advisory_xact_lock(hashtext('cairn database defaults'));
  IF ((SELECT rolsuper FROM pg_roles WHERE rolname = current_user)
      OR pg_has_role(current_user, (SELECT datdba FROM pg_database WHERE oid = db), 'USAGE'))
     AND NOT EXISTS (SELECT 1 FROM pg_db_role_setting s, unnest(s.setconfig) AS c
                      WHERE s.setdatabase = db AND s.setrole = 0 AND c LIKE 'jit=%') THEN
    EXECUTE format('ALTER DATABASE %I SET jit = off', current_database());
  END IF;
END $$`;

/** Postgres only: embedded PGlite has no JIT and no other sessions. */
export async function keepDatabaseDefaults(db: Knex): Promise<void> {
  await db.raw(KEEP_JIT_OFF);
}
