import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../support/processes';

/** Written last into a finished build; a directory without it is not used. */
const DONE = '.cairn-built';

/**
 * Where built releases are kept: ~/.cache/cairn/previous-release (or under XDG_CACHE_HOME). On the
 * machine's own disk rather than in the checkout, so a fresh clone on the same machine (CI's)
 * finds the build the last run made.
 */
export function releaseCacheDir(): string {
  return join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'cairn', 'previous-release');
}

/** Runs a command in `cwd`; throws with the tail of its output when it fails. */
export function runIn(cwd: string, what: string, cmd: string, args: string[], env: Record<string, string> = {}): void {
  const r = spawnSync(cmd, args, { cwd, env: { ...process.env, ...env }, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0)
    throw new Error(
      `${cmd} ${args.join(' ')} in ${what} failed (${r.status ?? r.signal}):\n${r.stdout.slice(-8000)}\n${r.stderr.slice(-8000)}`,
    );
}

/**
 * The tree of `commit`, installed and built as a release is built (`pnpm install --frozen-lockfile
 * --prefer-offline`, `pnpm build`); its directory. Its lockfile may name packages this checkout's no
 * longer does, which a fresh machine's store lacks: those are fetched once, the rest come from the
 * store. A commit's tree never changes, so neither does its
 * build: it is made once per machine (and platform) and reused by later runs. It is made in a
 * directory of its own and renamed into place only when complete, so a failed build leaves nothing
 * behind and two runs building at once both end with a complete one. Delete releaseCacheDir() to
 * build again.
 */
export function builtRelease(commit: string, name: string): string {
  const cache = releaseCacheDir();
  const dir = join(cache, `${commit}-${process.platform}-${process.arch}`);
  if (existsSync(join(dir, DONE))) return dir;
  mkdirSync(cache, { recursive: true });
  const building = mkdtempSync(join(cache, `${commit.slice(0, 12)}.building-`));
  try {
    // The commit's files only: no .git, nothing untracked.
    const tar = `${building}.tar`;
    execFileSync('git', ['archive', '--format=tar', '-o', tar, commit], { cwd: REPO_ROOT });
    try {
      execFileSync('tar', ['-xf', tar, '-C', building]);
    } finally {
      rmSync(tar, { force: true });
    }
    runIn(building, name, 'pnpm', ['install', '--frozen-lockfile', '--prefer-offline']);
    runIn(building, name, 'pnpm', ['build']);
    writeFileSync(join(building, DONE), `${commit}\n`);
  } catch (e) {
    rmSync(building, { recursive: true, force: true });
    throw e;
  }
  // Not one this function finished (those have DONE): in the way of the rename.
  if (existsSync(dir) && !existsSync(join(dir, DONE))) rmSync(dir, { recursive: true, force: true });
  try {
    renameSync(building, dir);
  } catch (e) {
    // Another run finished the same build first: use that one.
    rmSync(building, { recursive: true, force: true });
    if (!existsSync(join(dir, DONE))) throw e;
  }
  return dir;
}
