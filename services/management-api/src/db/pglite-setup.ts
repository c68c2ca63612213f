import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

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
 */
export function setUpDataDir(dir: string, options: { startParams: string[] }): void {
  const entry = require.resolve('@electric-sql/pglite');
  const run = spawnSync(process.execPath, ['-e', SETUP_SCRIPT, entry, dir, JSON.stringify(options)], {
    stdio: ['ignore', 'ignore', 'pipe'],
    encoding: 'utf8',
  });
  if (run.error) throw new Error(`could not set up the PGlite data directory ${dir}: ${run.error.message}`);
  if (run.status !== 0) {
    throw new Error(`could not set up the PGlite data directory ${dir} (exit ${run.status ?? run.signal}): ${run.stderr.trim()}`);
  }
}
