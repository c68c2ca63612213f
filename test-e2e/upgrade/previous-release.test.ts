import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import knex, { type Knex } from 'knex';
import * as api from '@cairn/management-api';
import { REPO_ROOT } from '../support/processes';

/**
 * Upgrades without downtime (docs/releasing.md): during a rolling upgrade the previous release's
 * replicas keep running on the database this release's migrate job has migrated. This checks out
 * the previous release in a git worktree, builds it as a release is built, migrates a database
 * with this checkout's code, and runs the previous release's own smoke test
 * (test-e2e/upgrade/smoke.test.ts, on its built dist/) against that database.
 *
 * The previous release: the newest `v*` tag that is an ancestor of HEAD (not HEAD itself), or,
 * where no tag exists, the last commit that changed package.json's `"version"` from one value to
 * another (on that commit itself: its parent, the previous version's last state; a version that
 * only appeared, with none before it, has no previous release, and the test fails saying so);
 * CAIRN_PREVIOUS_RELEASE=<commit or tag> names another (to check an upgrade from it by hand).
 */
const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const git = (...args: string[]): string => execFileSync('git', args, { cwd: REPO_ROOT, encoding: 'utf8' }).trim();

function previousRelease(): { commit: string; name: string } | undefined {
  const given = process.env.CAIRN_PREVIOUS_RELEASE;
  if (given) return { commit: git('rev-parse', '--verify', `${given}^{commit}`), name: given };
  const head = git('rev-parse', 'HEAD');
  for (const tag of git('tag', '--list', 'v*', '--sort=-v:refname', '--merged', 'HEAD').split('\n').filter(Boolean)) {
    const commit = git('rev-list', '-n', '1', tag);
    if (commit !== head) return { commit, name: tag };
  }
  // Without tags, a release is a commit that changed "version" from one value to another. After
  // one, that commit is the previous release; on the release commit itself, the state just before
  // it is (the previous version's last commit). A version that only appeared, with none before it,
  // was never released.
  for (const change of git('log', '--format=%H', '-G"version"', 'HEAD', '--', 'package.json')
    .split('\n')
    .filter(Boolean)) {
    const parent = git('rev-list', '--parents', '-n', '1', change).split(' ')[1];
    const before = parent ? versionAt(parent) : undefined;
    const after = versionAt(change);
    if (before === after) continue;
    if (!before) return undefined;
    if (change !== head) return { commit: change, name: `${after} (commit ${change.slice(0, 12)})` };
    return { commit: parent!, name: `${before} (commit ${parent!.slice(0, 12)}, the last before ${after})` };
  }
  return undefined;
}

/** The root package.json's "version" at a commit, or undefined. */
function versionAt(commit: string): string | undefined {
  try {
    return (JSON.parse(git('show', `${commit}:package.json`)) as { version?: string }).version;
  } catch {
    return undefined;
  }
}

const found = previousRelease();
const previous = found ?? { commit: '', name: 'the previous release' };

describe('upgrade: the previous release runs on a database migrated by this one', () => {
  let worktree: string;
  let admin: Knex;
  let dbName: string;

  beforeAll(() => {
    // 1.0.0 is released, so a whole history always has a previous release: none means the history
    // was cut short, and the upgrade would go unchecked.
    if (!found)
      throw new Error(
        'No previous release in this history (no v* tag, and no commit that changed "version" in package.json): a shallow clone? Fetch the history (git fetch --unshallow), or name one with CAIRN_PREVIOUS_RELEASE=<tag or commit>.',
      );
    worktree = join(mkdtempSync(join(tmpdir(), 'cairn-previous-')), 'checkout');
    git('worktree', 'add', '--detach', worktree, previous.commit);
    admin = knex({ client: 'pg', connection: ADMIN_URL, pool: { min: 0, max: 1 } });
    dbName = `cairn_upgrade_${process.pid}_${randomBytes(4).toString('hex')}`;
  });
  afterAll(async () => {
    if (!found) return;
    await admin.raw(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    await admin.destroy();
    git('worktree', 'remove', '--force', worktree);
    rmSync(join(worktree, '..'), { recursive: true, force: true });
  });

  it(`when ${previous.name} runs its smoke test on this release's schema, then it passes`, async () => {
    const run = (cmd: string, args: string[], env: Record<string, string> = {}) => {
      const r = spawnSync(cmd, args, {
        cwd: worktree,
        env: { ...process.env, ...env },
        encoding: 'utf8',
        maxBuffer: 64 << 20,
      });
      if (r.status !== 0)
        throw new Error(
          `${cmd} ${args.join(' ')} in ${previous.name} failed (${r.status ?? r.signal}):\n${r.stdout.slice(-8000)}\n${r.stderr.slice(-8000)}`,
        );
    };
    run('pnpm', ['install', '--frozen-lockfile', '--offline']);
    run('pnpm', ['build']);
    if (!existsSync(join(worktree, 'test-e2e/upgrade/smoke.test.ts')))
      throw new Error(`${previous.name} has no test-e2e/upgrade/smoke.test.ts to run.`);

    await admin.raw(`CREATE DATABASE ${dbName}`);
    const url = new URL(ADMIN_URL);
    url.pathname = `/${dbName}`;
    const db = api.createDatabase({ url: url.toString(), poolMax: 1 });
    try {
      await api.migrateLatest(db);
    } finally {
      await db.destroy();
    }

    // The path only: an option that takes a list (--selectProjects) would swallow it and run every suite.
    run(
      process.execPath,
      [
        '--experimental-vm-modules',
        'node_modules/jest/bin/jest.js',
        '--runInBand',
        '--runTestsByPath',
        'test-e2e/upgrade/smoke.test.ts',
      ],
      {
        CAIRN_SMOKE_DATABASE_URL: url.toString(),
        // Releases up to 1.0.0 ran their processes from dist/ only with this set (later ones always do).
        CAIRN_E2E_DIST: '1',
      },
    );
  }, 1_200_000);
});
