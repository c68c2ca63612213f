import type { Knex } from 'knex';

/**
 * Runs `body` with every SQL text `db` sends meanwhile pushed onto the array it is given (a body
 * that checks one request at a time empties it in between), and stops listening however it ends.
 */
export async function withStatements<T>(db: Knex, body: (statements: string[]) => Promise<T>): Promise<T> {
  const statements: string[] = [];
  const spy = (q: { sql: string }) => statements.push(q.sql);
  db.on('query', spy);
  try {
    return await body(statements);
  } finally {
    db.off('query', spy);
  }
}
