import type { Knex } from 'knex';

/**
 * Settings Cairn's Postgres database gets as its own defaults (`ALTER DATABASE … SET`), made at
 * every migrate (the migrate job, or a start that migrates) rather than once by a migration: a
 * dump (`pg_dump` without `--create`) carries no database settings, so a database restored from
 * one gets them again at its first migrate.
 *
 * Every statement Cairn sends reads a few hundred pages at most, but some carry fallback branches
 * that rarely run (the plain OFFSET walk of a name prefix the id buckets cannot serve) and are
 * costed in full, and a named statement may be run with the generic plan Postgres made without its
 * values. Both made Postgres reach for machinery that costs more than such a statement:
 *
 * - `jit = off`: at 10,000,000 users a fallback branch put the whole statement over
 *   `jit_above_cost`, and Postgres compiled it at every execution: 37 ms for a statement that runs
 *   in 7 ms.
 * - `max_parallel_workers_per_gather = 0`: the generic plan of the deep page of a name prefix,
 *   which cannot tell a prefix matching ten users from one matching ten million, read the page
 *   through parallel workers (`Gather Merge`), and Postgres kept that plan after five executions
 *   when the prefix matched every user: 86–147 ms a request at 10,000,000 users, starting the
 *   workers being most of it, where the same generic plan without workers runs in 2.6–4.2 ms.
 *
 * A database default is the weakest of Postgres' settings: a role's own (`ALTER ROLE … SET jit =
 * on`) or a session's still wins. A database with a setting of its own for one of them keeps it;
 * where the migrating role may not alter the database (neither its owner nor a superuser) nothing
 * is changed (docs/deployment.md says what to run then).
 */
const DEFAULTS: ReadonlyArray<readonly [name: string, value: string]> = [
  ['jit', 'off'],
  ['max_parallel_workers_per_gather', '0'],
];

const KEEP_DEFAULTS = `DO $$
DECLARE
  db oid := (SELECT oid FROM pg_database WHERE datname = current_database());
  setting text[];
BEGIN
  -- Replicas starting together would otherwise update the same catalog row at once.
  PERFORM pg_advisory_xact_lock(hashtext('cairn database defaults'));
  IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)
     OR pg_has_role(current_user, (SELECT datdba FROM pg_database WHERE oid = db), 'USAGE') THEN
    FOREACH setting SLICE 1 IN ARRAY ARRAY[${DEFAULTS.map(([n, v]) => `['${n}', '${v}']`).join(', ')}] LOOP
      IF NOT EXISTS (SELECT 1 FROM pg_db_role_setting s, unnest(s.setconfig) AS c
                      WHERE s.setdatabase = db AND s.setrole = 0 AND c LIKE setting[1] || '=%') THEN
        EXECUTE format('ALTER DATABASE %I SET %s = %s', current_database(), setting[1], setting[2]);
      END IF;
    END LOOP;
  END IF;
END $$`;

/** Postgres only: embedded PGlite has no JIT, no parallel workers and no other sessions. */
export async function keepDatabaseDefaults(db: Knex): Promise<void> {
  await db.raw(KEEP_DEFAULTS);
}
