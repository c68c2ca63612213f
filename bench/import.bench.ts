/**
 * Import benchmark: `cairn users import` of BENCH_IMPORT_USERS users (default 100,000) given as
 * password hashes, against a management API child on Postgres and on embedded PGlite. A benchmark,
 * not a test: figures, PASS/FAIL against the target (at most 60 s each), non-zero exit only when
 * something is broken.
 *
 *   pnpm bench:import
 *   BENCH_IMPORT_USERS=20000 BENCH_IMPORT_DATABASES=pglite pnpm bench:import
 *
 * The CLI is the real one, a process of its own (node --import tsx, as the e2e tests run it),
 * timed from its start to its exit; the file is JSON lines of bcrypt, pbkdf2-sha512 and passlib
 * scrypt hashes made by passlib (the import only checks their format, so a few are reused). Then
 * the same file is imported again: every user is skipped.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { bootstrap, createDeps, migrateLatest, readConfig } from '@cairn/management-api';
import { startChild, stopChild } from './lib/children';
import { intEnv, stringEnv } from './lib/env';
import { ADMIN_KEY, ADMIN_USER, API_ROLE, HEADERS, serveApi } from './lib/api-child';
import { runBenchmark, type Cleanups } from './lib/main';
import { throwawayDatabase } from './lib/postgres';
import { fmtInt } from './lib/report';

const SETTINGS = {
  users: intEnv('BENCH_IMPORT_USERS', 100_000),
  databases: stringEnv('BENCH_IMPORT_DATABASES', 'postgres,pglite')
    .split(',')
    .map((s) => s.trim()),
  pgServerUrl: stringEnv('BENCH_PG_URL', 'postgres://postgres@127.0.0.1:5432/postgres'),
};
const TARGET_SECONDS = 60;
const REPO = join(__dirname, '..');

/** Made by passlib 1.7.4 (Keystone's bcrypt, pbkdf2_sha512 and scrypt defaults but bcrypt's cost). */
const HASHES = [
  '$2b$12$z0CAFxCXcRwPhsEOY6hrZeDECoK698MjCIOda.mwB2bnaU/hkkPqe',
  '$pbkdf2-sha512$25000$f08pJWRMidE6R2jtPafUWg$etF1jpysf6F5uScQV1dFw8ez6h2fVT4djlty8r9VDwlwVoDn9YuRsq2p3k5hzMttxqrkUk9Z8TmrcN21oJ5HFQ',
  '$scrypt$ln=16,r=8,p=1$QKiVknKOcc5ZC6H0fs9Zaw$IX0ITKeHpM4OK8sq6yjN7hbyZCq62S3/jy/05ZQ7Et4',
];

function runCli(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; seconds: number; last: string }> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--conditions=cairn-source', '--import', 'tsx', join(REPO, 'packages/cli/src/main.ts'), ...args],
      { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let tail = '';
    const keep = (d: Buffer) => (tail = (tail + d.toString()).slice(-2000));
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.once('error', reject);
    child.once('exit', (code) =>
      resolve({ code, seconds: (performance.now() - t0) / 1000, last: tail.trim().split('\n').pop() ?? '' }),
    );
  });
}

async function countUsers(port: number): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${port}/api/v1/users/?cluster=1&limit=1`, { headers: HEADERS });
  return ((await res.json()) as { meta: { total_count: number } }).meta.total_count;
}

async function benchOne(cleanups: Cleanups, database: string, file: string): Promise<{ first: number; again: number }> {
  const work = mkdtempSync(join(tmpdir(), 'cairn-bench-import-'));
  cleanups.push(async () => rmSync(work, { recursive: true, force: true }));
  const childEnv: NodeJS.ProcessEnv = { ...process.env };
  let config;
  if (database === 'postgres') {
    const created = await throwawayDatabase(cleanups, SETTINGS.pgServerUrl);
    childEnv.BENCH_CHILD_DATABASE_URL = created.url;
    config = readConfig({ DATABASE_URL: created.url, LOG_LEVEL: 'warn' });
  } else {
    childEnv.BENCH_CHILD_DATA_DIR = join(work, 'pglite');
    config = readConfig({ CAIRN_DATA_DIR: childEnv.BENCH_CHILD_DATA_DIR, LOG_LEVEL: 'warn' });
  }
  const deps = createDeps(config);
  await migrateLatest(deps.db);
  await bootstrap(deps.db, {
    adminUser: ADMIN_USER,
    adminKey: ADMIN_KEY,
    defaultCluster: 'bench',
    defaultAuthUrl: 'http://127.0.0.1:5000/auth',
    defaultStorageUrl: 'http://127.0.0.1:8080/v1',
  });
  await deps.db.destroy();

  const child = await startChild(__filename, API_ROLE, childEnv);
  cleanups.push(() => stopChild(child));
  const cliEnv = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    CAIRN_API_URL: `http://127.0.0.1:${child.port}`,
    CAIRN_API_KEY: `${ADMIN_USER}:${ADMIN_KEY}`,
  };
  const first = await runCli(['users', 'import', '--cluster', 'bench', file], cliEnv);
  console.log(`  ${database}: ${first.last}`);
  if (first.code !== 0) throw new Error(`${database}: the import exited with ${first.code}: ${first.last}`);
  const count = await countUsers(child.port);
  if (count !== SETTINGS.users) throw new Error(`${database}: ${count} users after the import, not ${SETTINGS.users}`);
  const again = await runCli(['users', 'import', '--cluster', 'bench', file], cliEnv);
  console.log(`  ${database}, again: ${again.last}`);
  if (again.code !== 0 || (await countUsers(child.port)) !== SETTINGS.users)
    throw new Error(`${database}: the second import changed something or failed: ${again.last}`);
  await stopChild(child);
  return { first: first.seconds, again: again.seconds };
}

async function main(cleanups: Cleanups): Promise<void> {
  const started = new Date();
  console.log(
    `import benchmark: ${fmtInt(SETTINGS.users)} users given as hashes, on ${SETTINGS.databases.join(' and ')}`,
  );
  const work = mkdtempSync(join(tmpdir(), 'cairn-bench-import-file-'));
  cleanups.push(async () => rmSync(work, { recursive: true, force: true }));
  const file = join(work, 'users.jsonl');
  const lines: string[] = [];
  for (let i = 0; i < SETTINGS.users; i++) {
    lines.push(
      JSON.stringify({
        user: `imported${String(i).padStart(7, '0')}`,
        password_hash: HASHES[i % HASHES.length],
        is_superuser: false,
        enabled: true,
      }),
    );
  }
  writeFileSync(file, `${lines.join('\n')}\n`);

  const results: Array<[string, { first: number; again: number }]> = [];
  for (const database of SETTINGS.databases) results.push([database, await benchOne(cleanups, database, file)]);

  console.log(`\nResults (${started.toISOString()}; one API process, the CLI timed from start to exit)`);
  for (const [database, r] of results) {
    const pass = r.first <= TARGET_SECONDS;
    console.log(
      `${`import ${fmtInt(SETTINGS.users)} users, ${database}`.padEnd(40)} ${`${r.first.toFixed(1)} s (again, all skipped: ${r.again.toFixed(1)} s)`.padEnd(40)} ${pass ? 'PASS' : 'FAIL'} <= ${TARGET_SECONDS} s`,
    );
  }
}

runBenchmark({ serve: serveApi, main });
