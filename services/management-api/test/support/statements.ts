import type { Knex } from 'knex';

/** A statement as knex sent it: its SQL text and its bound values. */
export interface SentStatement {
  sql: string;
  bindings: unknown[];
}

/**
 * Runs `body` with every statement `db` sends meanwhile pushed onto the array it is given (a body
 * that checks one request at a time empties it in between), stops listening however it ends, and
 * resolves to that array.
 */
export async function withStatements(
  db: Knex,
  body: (statements: SentStatement[]) => Promise<unknown>,
): Promise<SentStatement[]> {
  const statements: SentStatement[] = [];
  const spy = (q: { sql: string; bindings?: unknown[] }) => statements.push({ sql: q.sql, bindings: q.bindings ?? [] });
  db.on('query', spy);
  try {
    await body(statements);
  } finally {
    db.off('query', spy);
  }
  return statements;
}
