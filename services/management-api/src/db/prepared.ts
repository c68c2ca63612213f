import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import type { Db } from './database';

/**
 * Named prepared statements for the statements every request of a route sends with only its values
 * changed (the list planner's compiled shapes, a user's detail). Sent unnamed, Postgres parses,
 * rewrites and plans such a statement again at every request; for a users page with its two
 * attached subqueries that was most of the database's time per request, more than running it
 * (pgbench on the page statement: 0.6–0.9 ms unnamed, 0.2 ms prepared). Named, each connection
 * parses it once, and Postgres keeps one generic plan after five runs where that plan costs no more
 * than the ones it made for each run's values; else it goes on planning every run (a list's first
 * page is written so that it does: see firstPageSql in repositories/list-planner.ts).
 *
 * A name is the hash of the statement's text, so one name always means one text on every
 * connection (node-postgres refuses a name reused for another text) and a shape compiled again
 * after the planner's cache was cleared finds its statement still prepared. Only fixed shapes are
 * named: a statement compiled with a request's own values is sent unnamed, else every connection
 * would keep each one for its lifetime.
 *
 * Session state: behind PgBouncer in transaction mode before 1.21 (or with max_prepared_statements
 * = 0), consecutive statements of a client may reach server connections that never saw the
 * statement, so createDatabase registers a handle here only when asked to
 * (CAIRN_DATABASE_PREPARED_STATEMENTS). A transaction's handle is not registered: its statements go
 * unnamed, which is always correct. Embedded PGlite is never registered (no protocol-level names).
 *
 * Names a handle's statements may be prepared under, first come first served. Each connection
 * keeps every statement it prepared for its lifetime, and the shapes an operator can ask for
 * (filters × lookups × numbers of values × orderings × clusters) are many, so the names are
 * bounded per handle (so per connection): a statement past the bound goes unnamed, as behind an
 * older PgBouncer. The everyday shapes are asked for first and keep theirs.
 */
const MAX_PREPARED_NAMES = 200;
const preparing = new WeakMap<Db, { max: number; names: Set<string> }>();

export function registerPreparedStatements(db: Knex, max = MAX_PREPARED_NAMES): void {
  preparing.set(db, { max, names: new Set() });
}

function admitted(db: Db, name: string): boolean {
  const handle = preparing.get(db);
  if (!handle) return false;
  if (handle.names.has(name)) return true;
  if (handle.names.size >= handle.max) return false;
  handle.names.add(name);
  return true;
}

/** The name a fixed statement is prepared under. */
export const statementName = (sql: string): string =>
  `cairn_${createHash('sha256').update(sql).digest('base64url').slice(0, 32)}`;

/** A statement compiled once: its text, its bindings (slots included) and its name. */
export interface FixedStatement {
  sql: string;
  bindings: readonly Knex.Value[];
  name: string;
}

export const fixedStatement = (sql: string, bindings: readonly Knex.Value[]): FixedStatement => ({
  sql,
  bindings,
  name: statementName(sql),
});

/** Runs a statement with these bindings; prepared under `name` where the handle prepares statements. */
export function runStatement<T>(db: Db, sql: string, bindings: readonly unknown[], name?: string): Promise<T> {
  const raw = db.raw(sql, bindings as Knex.RawBinding[]);
  return (name !== undefined && admitted(db, name) ? raw.options({ name }) : raw) as unknown as Promise<T>;
}
