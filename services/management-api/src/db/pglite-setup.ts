import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, renameSync, rmdirSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { restrictTree } from './data-dir-modes';

/**
 * Runs in a child `node`: opens the data directory once (PGlite runs initdb into it when it holds
 * no database) and closes it. Plain JavaScript passed with `-e`, so the same child works from the
 * built dist/, under tsx and under jest, none of which would run another TypeScript file alike.
 */
const SETUP_SCRIPT = `
const [entry, dataDir, options] = process.argv.slice(1);
const { PGlite } = require(entry);
PGlite.create(dataDir, JSON.parse(options))
  .then((pg) => pg.close())
  .catch((e) => { process.stderr.write((e instanceof Error ? e.message : require('node:util').inspect(e)) + '\\n'); process.exit(1); });
`;

/** True when `dir` holds no Postgres cluster yet: PGlite's own test before it runs initdb. */
export const needsSetUp = (dir: string): boolean => !existsSync(join(dir, 'PG_VERSION'));

/**
 * Creates the Postgres cluster in a new data directory in a short-lived child process. PGlite's
 * initdb grows the WebAssembly memory of the process that runs it by hundreds of MB, and that
 * memory is never given back while the process lives; a child that exits returns all of it, so
 * the long-running process opens a ready data directory at the size of any later start. Blocks:
 * it runs once, at the first start, before anything listens.
 *
 * initdb writes PG_VERSION, the mark of a set-up directory, early: killed after that, it would
 * leave a directory that looks ready and is not. So it runs in a sibling staging directory that
 * takes `dir`'s place in one rename when it is complete; a staging directory a killed set-up left
 * behind is thrown away. `dir` must be empty (createDatabase makes it); where it cannot be replaced
 * (a mount point), the set-up runs in it directly. Either way what initdb wrote is made its owner's
 * only (directories 0700, files 0600) before the directory is used.
 */
export function setUpDataDir(dir: string, options: { startParams: string[] }): void {
  const fail = (why: string) => new Error(`could not set up the PGlite data directory ${dir}: ${why}`);
  if (existsSync(dir) && readdirSync(dir).length > 0) {
    throw fail('it is not empty but holds no database (no PG_VERSION); remove it, or choose another data directory');
  }
  const staging = join(dirname(dir), `.${basename(dir)}.setting-up`);
  rmSync(staging, { recursive: true, force: true });
  try {
    runSetUp(staging, options, fail);
    if (existsSync(dir)) rmdirSync(dir);
    renameSync(staging, dir);
  } catch (e) {
    rmSync(staging, { recursive: true, force: true });
    const code = (e as { code?: unknown }).code;
    if (code === 'EBUSY' || code === 'EXDEV' || code === 'EPERM') return runSetUp(dir, options, fail);
    throw e;
  }
}

function runSetUp(dir: string, options: { startParams: string[] }, fail: (why: string) => Error): void {
  const entry = require.resolve('@electric-sql/pglite');
  const run = spawnSync(process.execPath, ['-e', SETUP_SCRIPT, entry, dir, JSON.stringify(options)], {
    stdio: ['ignore', 'ignore', 'pipe'],
    encoding: 'utf8',
  });
  if (run.error) throw fail(run.error.message);
  if (run.status !== 0) throw fail(`exit ${run.status ?? run.signal}: ${run.stderr.trim()}`);
  restrictTree(dir);
}
