import { isEmbedded, type Db } from './database';

/**
 * Runs a pg named prepared statement on a pooled connection, bypassing knex's builder and runner
 * (the largest cost in the API process on the hottest reads, by CPU profile). Postgres parses and
 * plans a named statement once per connection. Rows come back as arrays.
 *
 * Null when `db` is embedded PGlite or a transaction (the caller then uses knex): a transaction's
 * statements must run on its own connection, which the pool does not hand out.
 */

export interface NamedStatement {
  /** Unique per SQL text: Postgres keeps it per connection under this name. */
  name: string;
  text: string;
}

interface PgClient {
  query(config: { name: string; text: string; values: unknown[]; rowMode: 'array' }): Promise<{ rows: unknown[][] }>;
}

export async function runPrepared(db: Db, statement: NamedStatement, values: unknown[]): Promise<unknown[][] | null> {
  if (db.isTransaction || isEmbedded(db as never)) return null;
  const connection = (await db.client.acquireConnection()) as PgClient;
  try {
    const { rows } = await connection.query({ name: statement.name, text: statement.text, values, rowMode: 'array' });
    return rows;
  } finally {
    await db.client.releaseConnection(connection);
  }
}
