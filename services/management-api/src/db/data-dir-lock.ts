import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';

/**
 * One process per embedded database. PGlite is Postgres in a single process: two processes that
 * open one data directory each run their own Postgres over the same files, and whatever one of
 * them writes the other neither sees nor keeps (its own writes, at its next checkpoint, win). So
 * whoever opens a data directory first holds `<dir>.lock` until it closes the database or exits,
 * and any other process is refused before it opens (or writes) anything.
 *
 * The lock file is created with O_EXCL and names its holder: pid, host, when it was taken and, on
 * Linux, the holder's start time as the kernel counts it. A holder that died without removing it
 * (SIGKILL, a power cut) is recognised by its pid no longer running, or running as another process
 * (pid reuse: a restarted container is often pid 1 again), and its lock is taken over. A lock from
 * another host (a data directory on a shared disk) cannot be checked and is respected.
 */

interface Holder {
  pid: number;
  hostname: string;
  /** When the lock was taken (for people reading the file or the refusal). */
  since: string;
  /** The holder's start time in clock ticks since boot (/proc/<pid>/stat), where there is /proc. */
  processStart?: string;
}

export interface DataDirLock {
  readonly file: string;
  /** Removes the lock file if it is still this process's; idempotent. */
  release(): void;
}

/** Refused: another process has the data directory open. */
export class DataDirInUseError extends Error {
  override readonly name = 'DataDirInUseError';
}

/** Lock files this process holds: a second open of one of them in this process is refused too. */
const heldHere = new Set<string>();

/** `dir` must be an absolute, resolved path (the same directory always gives the same lock file). */
export function lockDataDir(dir: string): DataDirLock {
  const file = `${dir}.lock`;
  const mine: Holder = {
    pid: process.pid,
    hostname: hostname(),
    since: new Date().toISOString(),
    processStart: processStartOf(process.pid),
  };
  const content = `${JSON.stringify(mine)}\n`;
  // A few rounds: each lost race (the file vanished, a stale lock was just taken over) looks again.
  for (let round = 0; round < 5; round++) {
    if (createExclusive(file, content)) return hold(file, content);
    const found = readLock(file);
    if (found === undefined) continue;
    if (found.holder === undefined) throw unreadable(dir, file);
    if (isAlive(file, found.holder)) throw inUse(dir, file, found.holder);
    takeOver(dir, file, found.raw, content);
  }
  throw new DataDirInUseError(
    `The embedded database in ${dir} is being opened by other processes at this moment; try again.`,
  );
}

function hold(file: string, content: string): DataDirLock {
  heldHere.add(file);
  const release = () => {
    process.removeListener('exit', release);
    if (!heldHere.delete(file)) return;
    if (readLock(file)?.raw === content) rmSync(file, { force: true });
  };
  // A normal exit (process.exit included) releases it; a crash leaves it, and the next start takes it over.
  process.on('exit', release);
  return { file, release };
}

/**
 * Removes a stale lock so the caller can create its own. Two processes may find the same stale
 * lock at once: removing it is guarded by a second O_EXCL file, so that one of them can never
 * remove the lock the other has just created in its place. That guard is held for a few system
 * calls only; one left behind by a process killed in between is removed when its holder is gone.
 */
function takeOver(dir: string, file: string, staleRaw: string, content: string): void {
  const guard = `${file}.takeover`;
  if (!createExclusive(guard, content)) {
    const other = readLock(guard)?.holder;
    if (other && isAlive(guard, other)) throw inUse(dir, file, other);
    rmSync(guard, { force: true });
    return;
  }
  try {
    if (readLock(file)?.raw === staleRaw) rmSync(file, { force: true });
  } finally {
    rmSync(guard, { force: true });
  }
}

function createExclusive(file: string, content: string): boolean {
  let fd: number;
  try {
    fd = openSync(file, 'wx', 0o600);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  }
  try {
    writeSync(fd, content);
  } finally {
    closeSync(fd);
  }
  return true;
}

/** undefined: no such file (any more); `holder` undefined: a file that does not name one. */
function readLock(file: string): { raw: string; holder?: Holder } | undefined {
  let raw: string;
  try {
    raw = readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  try {
    const parsed = JSON.parse(raw) as Partial<Holder>;
    if (Number.isInteger(parsed.pid) && typeof parsed.hostname === 'string' && typeof parsed.since === 'string')
      return { raw, holder: parsed as Holder };
  } catch {
    // Not JSON: not a lock this code wrote whole.
  }
  return { raw };
}

function isAlive(file: string, holder: Holder): boolean {
  if (holder.hostname !== hostname()) return true;
  // This process's pid: held by an earlier open in this process, or left by a dead one that had it.
  if (holder.pid === process.pid) return heldHere.has(file);
  try {
    process.kill(holder.pid, 0);
  } catch (e) {
    // EPERM: it runs, as another user.
    if ((e as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  const start = processStartOf(holder.pid);
  return !(holder.processStart !== undefined && start !== undefined && start !== holder.processStart);
}

/** Field 22 of /proc/<pid>/stat (after the command name, which may hold spaces and parentheses). */
function processStartOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

function inUse(dir: string, file: string, holder: Holder): DataDirInUseError {
  const who =
    holder.hostname === hostname() ? `process ${holder.pid}` : `process ${holder.pid} on host ${holder.hostname}`;
  return new DataDirInUseError(
    `The embedded database in ${dir} is in use by ${who} (since ${holder.since}), and it admits one process at a time. ` +
      'Nothing was done. Stop that process first (a running `cairn start` stops with Ctrl-C or SIGTERM), ' +
      'or, while it runs, do this through its management API (for example POST /api/v1/operators/ creates an operator).' +
      (holder.hostname === hostname()
        ? ''
        : ` The holder cannot be checked from here: if it no longer uses this directory, remove ${file}.`),
  );
}

function unreadable(dir: string, file: string): DataDirInUseError {
  return new DataDirInUseError(
    `The embedded database in ${dir} is locked by ${file}, which does not say which process holds it. Nothing was done. ` +
      'If no Cairn process uses this directory, remove that file and try again.',
  );
}
