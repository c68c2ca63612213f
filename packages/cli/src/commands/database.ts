import type { createDatabase } from '@cairn/management-api';
import { managementApi } from '../servers';

/** The host commands' database: DATABASE_URL, else embedded PGlite under CAIRN_DATA_DIR. */
export async function withDatabase<T>(fn: (db: ReturnType<typeof createDatabase>) => Promise<T>): Promise<T> {
  const { createDatabase, readConfig } = await managementApi();
  const config = readConfig();
  const db = createDatabase({ url: config.databaseUrl, dataDir: config.dataDir, poolMax: 2 });
  try {
    return await fn(db);
  } finally {
    await db.destroy();
  }
}
