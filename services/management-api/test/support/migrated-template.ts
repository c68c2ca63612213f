import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import knex, { type Knex } from 'knex';
import { createDatabase, migrateLatest } from '../../src/db/database';
import { dumpEmbedded } from '../../src/db/embedded';
import { isStaleTemplate, sweepStaleTemplateFiles, TEMPLATE_FILES_DIR, templateKey } from './template-key';

/**
 * Most test files start from a freshly migrated database. Running every migration for each one
 * costs seconds on PGlite (tens of seconds on a loaded machine), so the migrated state is made
 * once and copied: on Postgres a template database (`CREATE DATABASE … TEMPLATE`), on PGlite an
 * archive of the data directory loaded into a new in-memory database. Both are the database the
 * migrations make, named by templateKey() (template-key.ts), so an edited migration gets a
 * template of its own. An empty PGlite database is copied the same way, from an archive of what
 * initdb made.
 */

/**
 * A PGlite data directory as a gzipped tar (what `cairn backup` writes): a new in-memory database
 * after `prepare`, made once per kind and key in the temp dir.
 */
async function pgliteArchive(kind: string, prepare: (db: Knex) => Promise<unknown>): Promise<Buffer> {
  const dir = TEMPLATE_FILES_DIR;
  const file = join(dir, `pglite-${kind}-${templateKey()}.tar.gz`);
  try {
    return readFileSync(file);
  } catch {
    const db = createDatabase({ dataDir: 'memory://' });
    let archive: Buffer;
    try {
      await prepare(db);
      archive = Buffer.from(await (await dumpEmbedded(db))!.arrayBuffer());
    } finally {
      await db.destroy();
    }
    // Written whole under another name, then renamed: a concurrent reader sees all of it or none.
    mkdirSync(dir, { recursive: true });
    sweepStaleTemplateFiles();
    const partial = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
    writeFileSync(partial, archive);
    renameSync(partial, file);
    return archive;
  }
}

/** The migrated PGlite data directory as a gzipped tar. */
export const migratedPgliteArchive = (): Promise<Buffer> => pgliteArchive('migrated', migrateLatest);

/** An in-memory PGlite holding the migrated schema, loaded from migratedPgliteArchive(). */
export async function migratedPglite(): Promise<Knex> {
  const archive = await migratedPgliteArchive();
  return createDatabase({ dataDir: 'memory://', loadDataDir: new Blob([new Uint8Array(archive)]) });
}

/**
 * An in-memory PGlite as initdb leaves it, loaded from an archive of one: a new in-memory
 * database runs initdb (seconds of CPU), loading the archive takes a third of that.
 */
export async function emptyPglite(): Promise<Knex> {
  // A query: knex closes only a database it has connected to.
  const archive = await pgliteArchive('empty', (db) => db.raw('SELECT 1'));
  return createDatabase({ dataDir: 'memory://', loadDataDir: new Blob([new Uint8Array(archive)]) });
}

/** Drops the template databases of days before yesterday (isStaleTemplate); one in use stays. */
async function dropStaleTemplates(admin: Knex): Promise<void> {
  const rows: Array<{ datname: string }> = await admin('pg_database')
    .select('datname')
    .where('datname', 'like', 'cairn\\_template\\_%');
  for (const { datname } of rows.filter((r) => isStaleTemplate(r.datname)))
    await admin.raw('DROP DATABASE IF EXISTS ??', [datname]).catch(() => undefined);
}

/**
 * Creates database `name` on the server of `adminUrl` as a copy of the migrated template, making
 * the template first when it is missing (under an advisory lock: test runs in other worktrees may
 * want it at the same moment).
 */
export async function createMigratedPostgres(adminUrl: string, name: string): Promise<void> {
  const template = `cairn_template_${templateKey()}`;
  const admin = knex({ client: 'pg', connection: adminUrl, pool: { min: 1, max: 1 } });
  try {
    await admin.raw('SELECT pg_advisory_lock(hashtext(?))', [template]);
    const exists = await admin('pg_database').where({ datname: template }).first();
    if (!exists) {
      const building = `${template}_${process.pid}`;
      await admin.raw(`DROP DATABASE IF EXISTS ${building}`);
      await admin.raw(`CREATE DATABASE ${building}`);
      const url = new URL(adminUrl);
      url.pathname = `/${building}`;
      const db = createDatabase({ url: url.toString(), poolMax: 1 });
      try {
        await migrateLatest(db);
      } finally {
        await db.destroy();
      }
      // Renamed only once complete, so a template that exists is always a whole one.
      await admin.raw(`ALTER DATABASE ${building} RENAME TO ${template}`);
      await dropStaleTemplates(admin);
    }
    await admin.raw(`CREATE DATABASE ${name} TEMPLATE ${template}`);
  } finally {
    await admin.raw('SELECT pg_advisory_unlock(hashtext(?))', [template]).catch(() => undefined);
    await admin.destroy();
  }
}
