import { createDatabase, readConfig } from '@cairn/management-api';

/** The host commands' database: DATABASE_URL, else embedded PGlite under CAIRN_DATA_DIR. */
export async function withDatabase<T>(fn: (db: ReturnType<typeof createDatabase>) => Promise<T>): Promise<T> {
  const config = readConfig();
  const db = createDatabase({ url: config.databaseUrl, dataDir: config.dataDir, poolMax: 2 });
  try {
    return await fn(db);
  } finally {
    await db.destroy();
  }
}
