import { chmodSync, lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { isMainThread } from 'node:worker_threads';

/**
 * An embedded data directory holds every password and API key hash and the sealed S3 secrets: it
 * is its owner's only, directories 0700 and files 0600, as Postgres keeps its own. PGlite does not
 * see to that by itself: its initdb leaves most files 0666 and directories 0777 less the umask,
 * and files it creates later through the C library (fopen: the relcache and statistics files) are
 * chmodded 0644 by its own file system layer, whatever the process's umask. So:
 *
 * - the process's umask is 077 before anything is created (restrictUmask): the data directory,
 *   its parent when made, and every directory PGlite makes are 0700;
 * - a new data directory is walked once set up, and every data directory at each open and close
 *   (restrictTree): at rest, everything in it is 0700/0600, and while it is open the few files
 *   PGlite has created 0644 meanwhile sit in 0700 directories, which no one else can enter.
 */
export const DATA_DIR_MODE = 0o700;
export const DATA_FILE_MODE = 0o600;

/**
 * From now on, whatever this process creates is its owner's only (umask 077). A worker thread
 * cannot set the umask (it is the process's): there the walks are what applies.
 */
export function restrictUmask(): void {
  if (isMainThread) process.umask(0o077);
}

export interface ModesRestricted {
  /** Directories that were not 0700 and now are. */
  directories: number;
  /** Files that were not 0600 and now are. */
  files: number;
}

/** Makes `dir` and everything in it its owner's only; counts what it changed. Symlinks are left alone. */
export function restrictTree(dir: string): ModesRestricted {
  const changed: ModesRestricted = { directories: 0, files: 0 };
  const visit = (path: string) => {
    const st = lstatSync(path);
    if (st.isSymbolicLink()) return;
    const directory = st.isDirectory();
    const wanted = directory ? DATA_DIR_MODE : DATA_FILE_MODE;
    if ((st.mode & 0o7777) !== wanted) {
      chmodSync(path, wanted);
      if (directory) changed.directories++;
      else changed.files++;
    }
    if (directory) for (const name of readdirSync(path)) visit(join(path, name));
  };
  visit(dir);
  return changed;
}
