import { mkdirSync, realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import knex, { type Knex } from 'knex';
import ClientPgLite from 'knex-pglite';
import { PGlite } from '@electric-sql/pglite';
import { migrationSource } from './migrations';
import { keepDatabaseDefaults } from './database-defaults';
import { lockDataDir, type DataDirLock } from './data-dir-lock';
import { needsSetUp, setUpDataDir } from './pglite-setup';
import { registerEmbedded } from './embedded';
import { registerPreparedStatements } from './prepared';
import { restrictTree, restrictUmask, type ModesRestricted } from './data-dir-modes';

/** A knex handle or a transaction: repositories accept either so one transaction can span steps. */
export type Db = Knex | Knex.Transaction;

export interface DatabaseOptions {
  /** Postgres URL; without it, embedded PGlite. */
  url?: string;
  /** PGlite data directory; `memory://` keeps everything in memory (tests). */
  dataDir?: string;
  /**
   * For an in-memory PGlite: start from this archive of a data directory (what dumpEmbedded and
   * `cairn backup` write) instead of an empty database. Tests start each file from one migrated copy.
   */
  loadDataDir?: Blob;
  poolMax?: number;
  /**
   * Postgres only: prepare the statements whose text is fixed per route under a name (see
   * prepared.ts). Default true; false behind PgBouncer in transaction mode before 1.21.
   */
  preparedStatements?: boolean;
  /** How many statement names a handle prepares at most (see prepared.ts); tests lower it. */
  preparedStatementsMax?: number;
  /**
   * Told when an existing data directory was open to other users and has just been made its
   * owner's only (directories 0700, files 0600): the caller says so in its log.
   */
  onModesRestricted?: (dir: string, changed: ModesRestricted) => void;
}

export function createDatabase(options: DatabaseOptions): Knex {
  if (options.url) {
    const db = knex({
      client: 'pg',
      connection: { connectionString: options.url, application_name: 'cairn-management-api' },
      pool: { min: 0, max: options.poolMax ?? 10 },
      acquireConnectionTimeout: 5000,
    });
    if (options.preparedStatements !== false) registerPreparedStatements(db, options.preparedStatementsMax);
    return db;
  }
  const dataDir = options.dataDir ?? 'memory://';
  const pgliteOptions = { startParams: pgliteStartParams() };
  const pglite = dataDir.startsWith('memory://')
    ? new PGlite(dataDir, { ...pgliteOptions, ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}) })
    : openDataDir(dataDir, pgliteOptions, options.onModesRestricted);
  const db = knex({
    client: ClientPgLite as unknown as typeof knex.Client,
    dialect: 'postgres',
    connection: { pglite } as Knex.StaticConnectionConfig,
  });
  registerEmbedded(db, pglite);
  return db;
}

/**
 * Every open of a PGlite data directory goes through here: the directory is locked for this
 * process (see lockDataDir) before anything reads or sets it up, and stays locked until the
 * database is closed (db.destroy()) or the process exits. A second process is refused at once.
 *
 * The directory is its owner's only (see data-dir-modes): this process's umask becomes 077 before
 * anything is created, a new directory is set up that way, and an existing one that is not (made
 * by an earlier release, or copied with other modes) is made so before PGlite opens it.
 */
function openDataDir(
  dataDir: string,
  options: PGliteOptions,
  onModesRestricted?: DatabaseOptions['onModesRestricted'],
): PGlite {
  restrictUmask();
  mkdirSync(resolve(dataDir), { recursive: true });
  // The real path: one directory reached through a symlink must give the same lock.
  const dir = realpathSync(resolve(dataDir));
  const lock = lockDataDir(dir);
  try {
    if (needsSetUp(dir)) setUpDataDir(dir, options);
    else {
      const changed = restrictTree(dir);
      if (changed.directories + changed.files > 0) onModesRestricted?.(dir, changed);
    }
    return new LockedPGlite(dir, options, lock);
  } catch (e) {
    lock.release();
    throw e;
  }
}

type PGliteOptions = { startParams: string[] };

/** A PGlite that gives its data directory's lock back when it is closed (knex's destroy closes it). */
class LockedPGlite extends PGlite {
  constructor(
    private readonly dir: string,
    options: PGliteOptions,
    private readonly lock: DataDirLock,
  ) {
    super(dir, options);
  }

  override async close(): Promise<void> {
    try {
      await super.close();
      // What PGlite created 0644 while open (see data-dir-modes) is its owner's only at rest.
      try {
        restrictTree(this.dir);
      } catch (e) {
        // Removed while open (a test's temporary directory): nothing left to protect.
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      }
    } finally {
      this.lock.release();
    }
  }
}

/**
 * Postgres's page cache inside embedded PGlite. It lives in PGlite's WebAssembly memory, which
 * grows and is never given back: at Postgres's default of 128MB, the first start's initdb and the
 * reads that follow leave an idle launcher at several hundred MB of RSS. A control plane's tables
 * fit a 16MB cache many times over. (A new data directory's initdb runs in a child process, see
 * setUpDataDir, so its memory is not kept either.) Production runs on Postgres, where this does
 * not apply.
 */
const PGLITE_SHARED_BUFFERS = '16MB';

/** How every embedded database here is started (a restored data directory is checked with the same). */
export const pgliteStartParams = (): string[] => [
  ...PGlite.defaultStartParams,
  '-c',
  `shared_buffers=${PGLITE_SHARED_BUFFERS}`,
];

/**
 * Applies this release's pending migrations. Migrations recorded in the database that this
 * release does not know are a newer release's (a rolling upgrade: its migrate job ran first, and
 * a replica of this release restarts meanwhile). Expand/contract (docs/releasing.md) keeps this
 * release working on that schema, so they are left alone rather than refused as a corrupt list.
 */
export async function migrateLatest(db: Knex): Promise<string[]> {
  if (!isEmbedded(db)) await keepDatabaseDefaults(db);
  if (await schemaIsCurrent(db)) return [];
  const [, applied] = (await db.migrate.latest({ migrationSource, disableMigrationsListValidation: true })) as [
    number,
    string[],
  ];
  return applied;
}

/** Where knex records the migrations it applied (its default table, in the current schema). */
const MIGRATIONS_TABLE = 'knex_migrations';

/**
 * True when every migration this release knows is recorded as applied: nothing for knex to do.
 * knex's own check before it finds that out takes eleven statements (information_schema four
 * times, taking and giving back its lock); on embedded PGlite, whose catalog is cold at a start,
 * they cost about half a second of CPU at every start. These two read the same record. A
 * migration is recorded in the transaction that applies it, so a recorded one is complete.
 */
async function schemaIsCurrent(db: Knex): Promise<boolean> {
  const found = (await db.raw('SELECT to_regclass(?) AS t', [MIGRATIONS_TABLE])) as { rows: { t: string | null }[] };
  if (found.rows[0]?.t == null) return false;
  const recorded = new Set((await db(MIGRATIONS_TABLE).select('name')).map((r: { name: string }) => r.name));
  const known = await migrationSource.getMigrations([]);
  return known.every((m) => recorded.has(migrationSource.getMigrationName(m)));
}

/** Reverts the last batch: the migrations the last `cairn migrate` (or start) applied together. */
export async function migrateRollbackLast(db: Knex): Promise<string[]> {
  const [, reverted] = (await db.migrate.rollback({ migrationSource }, false)) as [number, string[]];
  return reverted;
}

export async function migrateRollbackAll(db: Knex): Promise<string[]> {
  const [, reverted] = (await db.migrate.rollback({ migrationSource }, true)) as [number, string[]];
  return reverted;
}

export const isEmbedded = (db: Knex): boolean => db.client.config.client !== 'pg';
