import { createApp, createDeps, readConfig } from '@cairn/management-api';
import { serveApp } from './children';

/** The admin the benchmarks bootstrap into their throwaway database, and the headers it signs with. */
export const ADMIN_USER = 'bench-admin';
/** Not a secret: it only ever opens a throwaway benchmark database on loopback. */
export const ADMIN_KEY = 'cairn-bench-admin-key-not-a-secret-0123456789';
export const HEADERS = { authorization: `ApiKey ${ADMIN_USER}:${ADMIN_KEY}`, accept: 'application/json' };
export const API_ROLE = 'api';

/**
 * The forked child's side: the management API as in production, on the database the parent made
 * (BENCH_CHILD_DATABASE_URL), or on embedded PGlite in BENCH_CHILD_DATA_DIR.
 */
export async function serveApi(role: string): Promise<void> {
  if (role !== API_ROLE) throw new Error(`unknown role ${role}`);
  const config = readConfig({
    DATABASE_URL: process.env.BENCH_CHILD_DATABASE_URL,
    CAIRN_DATA_DIR: process.env.BENCH_CHILD_DATA_DIR,
    LOG_LEVEL: 'warn',
    CAIRN_MIGRATE_ON_START: 'false',
  });
  const deps = createDeps(config);
  serveApp(createApp(deps), () => deps.db.destroy());
}
