/**
 * Quota benchmark. A benchmark, not a test: figures, PASS/FAIL against the target, non-zero exit
 * only when something is broken.
 *
 *   pnpm bench:quotas
 *   BENCH_QUOTA_USERS=2000 BENCH_QUOTA_CONCURRENCY=16 BENCH_QUOTA_DB_USERS=100000 pnpm bench:quotas
 *
 * 1. Apply: a real Swift 2.30 proxy (Debian's packages, test-e2e/interop/swift-cluster.ts) with
 *    tempauth and account_quotas. BENCH_QUOTA_USERS users get a byte quota in one transaction (as
 *    a bulk change would); the clock runs from its commit until the reconciler (this process, on
 *    Postgres, woken by NOTIFY) has recorded every one as applied. In the same run a plain HTTP
 *    client sends the same POSTs (same headers, same reseller token, same concurrency) to as many
 *    other accounts. Two rounds: new accounts (each created by its first POST), then new quotas on
 *    the same accounts. Cairn's rate must be at least 80 % of the plain client's in both.
 * 2. Postgres side of a pass at BENCH_QUOTA_DB_USERS users (no Swift): reading them all pending and
 *    recording them applied, page by page as the reconciler does; then the drift check's reads of
 *    every applied user; then the empty poll (nothing pending).
 */
import { existsSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import {
  appliedQuotas,
  bootstrap,
  createDatabase,
  createLogger,
  migrateLatest,
  pendingQuotas,
  QuotaReconciler,
  recordQuotaOutcomes,
} from '@cairn/management-api';

import { startSwiftCluster } from '../test-e2e/interop/swift-cluster';
import { intEnv, stringEnv } from './lib/env';
import { runBenchmark, type Cleanups } from './lib/main';
import { throwawayDatabase } from './lib/postgres';
import { fmtInt } from './lib/report';

type Knex = ReturnType<typeof createDatabase>;

const SETTINGS = {
  users: intEnv('BENCH_QUOTA_USERS', 2000),
  concurrency: intEnv('BENCH_QUOTA_CONCURRENCY', 16),
  dbUsers: intEnv('BENCH_QUOTA_DB_USERS', 100_000),
  pgServerUrl: stringEnv('BENCH_PG_URL', 'postgres://postgres@127.0.0.1:5432/postgres'),
};
const TARGET_RATIO = 0.8;
const PAGE = 500;
/** Not secrets: they only ever open a loopback Swift. */
const RESELLER = { account: 'reseller', user: 'reseller', key: 'reseller-bench-key' };
const QUOTAS = ['10737418240', '21474836480'];
const HASH = '$scrypt$ln=15,r=8,p=3$c2FsdA$aGFzaA';

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

async function insertUsers(db: Knex, clusterId: number, prefix: string, n: number): Promise<void> {
  await db.raw(
    `INSERT INTO storage_users (cluster_id, username, password_hash) SELECT ?, ? || lpad(i::text, 7, '0'), ? FROM generate_series(1, ?) i`,
    [clusterId, prefix, HASH, n],
  );
}

/** Sets the quota of every user named `prefix…`, as one change: the same rows the API writes per user. */
async function setQuotas(db: Knex, clusterId: number, prefix: string, quota = QUOTAS[0]!): Promise<void> {
  await db.transaction(async (trx) => {
    await trx.raw('UPDATE storage_users SET quota_bytes = ? WHERE cluster_id = ? AND username LIKE ?', [
      quota,
      clusterId,
      `${prefix}%`,
    ]);
    await trx.raw(
      `INSERT INTO quota_applications (user_id, cluster_id) SELECT id, cluster_id FROM storage_users WHERE cluster_id = ? AND username LIKE ?
       ON CONFLICT (user_id) DO UPDATE SET wanted_version = quota_applications.wanted_version + 1`,
      [clusterId, `${prefix}%`],
    );
  });
}

async function pendingCount(db: Knex, clusterId: number): Promise<number> {
  const [row] = await db('quota_applications')
    .where('cluster_id', clusterId)
    .whereRaw('wanted_version > applied_version OR error IS NOT NULL')
    .count({ n: '*' });
  return Number((row as { n: string | number }).n);
}

/** The plain client: the same POSTs, `concurrency` at a time, nothing else. */
async function plainClient(
  storageUrl: string,
  token: string,
  prefix: string,
  n: number,
  concurrency: number,
  quota = QUOTAS[0]!,
): Promise<number> {
  let next = 1;
  const t0 = performance.now();
  const worker = async () => {
    while (next <= n) {
      const account = `AUTH_${prefix}${String(next++).padStart(7, '0')}`;
      const res = await fetch(`${storageUrl}/${account}`, {
        method: 'POST',
        headers: { 'X-Auth-Token': token, 'X-Account-Meta-Quota-Bytes': quota },
      });
      await res.arrayBuffer();
      if (res.status !== 204) throw new Error(`plain POST ${account}: HTTP ${res.status}`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return performance.now() - t0;
}

async function applyScenario(cleanups: Cleanups, db: Knex, url: string): Promise<boolean> {
  if (!existsSync('/usr/bin/swift-proxy-server')) {
    console.log('  Swift is not installed (pnpm interop:install): the apply scenario is skipped');
    return true;
  }
  const swift = await startSwiftCluster({
    pipeline: 'tempauth',
    tempauthUsers: [{ ...RESELLER, groups: ['.reseller_admin'] }],
    proxyPipeline: [
      'catch_errors',
      'gatekeeper',
      'healthcheck',
      'proxy-logging',
      'cache',
      'tempauth',
      'account_quotas',
      'proxy-logging',
      'proxy-server',
    ],
    extraProxyConfig: '[filter:account_quotas]\nuse = egg:swift#account_quotas\n',
    logLevel: 'WARNING',
  });
  cleanups.push(() => swift.stop().then(() => undefined));
  console.log(`  Swift 2.30 proxy with tempauth and account_quotas at ${swift.proxyUrl} (one worker)`);
  const [cluster] = (await db('clusters')
    .where({ name: 'bench' })
    .update({ auth_url: `${swift.proxyUrl}/auth`, storage_url: `${swift.proxyUrl}/v1` })
    .returning('id')) as Array<{ id: number }>;
  const clusterId = cluster!.id;
  await insertUsers(db, clusterId, 'cairn', SETTINGS.users);

  const login = await fetch(`${swift.proxyUrl}/auth/v1.0`, {
    headers: { 'X-Auth-User': `${RESELLER.account}:${RESELLER.user}`, 'X-Auth-Key': RESELLER.key },
  });
  const token = login.headers.get('x-auth-token')!;
  // Warm up both paths (a few accounts each) so neither pays for the first connections.
  await plainClient(`${swift.proxyUrl}/v1`, token, 'warm', 50, SETTINGS.concurrency);

  const reconciler = new QuotaReconciler({
    db,
    log: createLogger('warn'),
    credentials: { bench: { user: `${RESELLER.account}:${RESELLER.user}`, password: RESELLER.key } },
    sessionUrl: url,
    resyncMs: 3_600_000,
    pollMs: 1000,
    concurrency: SETTINGS.concurrency,
    timeoutMs: 30_000,
  });
  reconciler.start();
  cleanups.push(() => reconciler.stop());
  while (!reconciler.isLeader) await new Promise((r) => setTimeout(r, 50));
  await new Promise((r) => setTimeout(r, 500)); // its first pass (/info, login) is done

  // Round 1: new accounts (Swift creates each on the first POST); round 2: the quotas changed on
  // the same, existing accounts. Who goes first alternates.
  let pass = true;
  for (const round of [1, 2] as const) {
    const quota = QUOTAS[round - 1]!;
    const cairn = async () => {
      const t0 = performance.now();
      await setQuotas(db, clusterId, 'cairn', quota);
      while ((await pendingCount(db, clusterId)) > 0) await new Promise((r) => setTimeout(r, 20));
      return performance.now() - t0;
    };
    const plain = () =>
      plainClient(`${swift.proxyUrl}/v1`, token, 'plain', SETTINGS.users, SETTINGS.concurrency, quota);
    const plainMs = round === 1 ? await plain() : 0;
    const cairnMs = await cairn();
    const plainMs2 = round === 2 ? await plain() : plainMs;
    const [errors] = await db('quota_applications')
      .where('cluster_id', clusterId)
      .whereNotNull('error')
      .count({ n: '*' });
    if (Number((errors as { n: string }).n) > 0) throw new Error('some quotas ended in error');
    const plainRate = SETTINGS.users / (plainMs2 / 1000);
    const cairnRate = SETTINGS.users / (cairnMs / 1000);
    const ratio = cairnRate / plainRate;
    console.log(`  round ${round} (${round === 1 ? 'new accounts' : 'existing accounts'}):`);
    console.log(
      `    plain client: ${fmtInt(SETTINGS.users)} POSTs in ${seconds(plainMs2)} = ${plainRate.toFixed(0)}/s`,
    );
    console.log(
      `    Cairn:        ${fmtInt(SETTINGS.users)} quotas applied in ${seconds(cairnMs)} = ${cairnRate.toFixed(0)}/s (commit to last recorded)`,
    );
    const ok = ratio >= TARGET_RATIO;
    console.log(`    ratio ${(ratio * 100).toFixed(0)} % ${ok ? 'PASS' : 'FAIL'} (target >= ${TARGET_RATIO * 100} %)`);
    pass &&= ok;
  }
  return pass;
}

async function postgresScenario(db: Knex): Promise<void> {
  const [cluster] = (await db('clusters')
    .insert({
      name: 'bench-db',
      uuid: '00000000-0000-4000-8000-00000000000d',
      auth_url: 'http://127.0.0.1:9/auth',
      storage_url: 'http://127.0.0.1:9/v1',
    })
    .returning('id')) as Array<{ id: number }>;
  const clusterId = cluster!.id;
  await insertUsers(db, clusterId, 'u', SETTINGS.dbUsers);
  await setQuotas(db, clusterId, 'u');
  await db.raw('ANALYZE storage_users; ANALYZE quota_applications');
  console.log(`  ${fmtInt(SETTINGS.dbUsers)} users with a quota, all pending`);

  let t0 = performance.now();
  let after = '0';
  let n = 0;
  for (;;) {
    const page = await pendingQuotas(db, clusterId, after, PAGE);
    if (page.length === 0) break;
    after = page.at(-1)!.userId;
    n += page.length;
    await recordQuotaOutcomes(
      db,
      page.map((w) => ({ userId: w.userId, version: w.version, ok: true as const })),
    );
  }
  console.log(
    `  apply pass, Postgres side: ${fmtInt(n)} users read pending and recorded applied, in pages of ${PAGE}: ${seconds(performance.now() - t0)}`,
  );

  t0 = performance.now();
  after = '0';
  n = 0;
  for (;;) {
    const page = await appliedQuotas(db, clusterId, after, PAGE);
    if (page.length === 0) break;
    after = page.at(-1)!.userId;
    n += page.length;
  }
  console.log(
    `  drift pass, Postgres side: ${fmtInt(n)} applied users read in pages of ${PAGE}: ${seconds(performance.now() - t0)}`,
  );

  const idlePoll = async (when: string) => {
    t0 = performance.now();
    for (let i = 0; i < 100; i++) await pendingQuotas(db, clusterId, '0', PAGE);
    console.log(`  idle poll (nothing pending), ${when}: ${((performance.now() - t0) / 100).toFixed(2)} ms per poll`);
  };
  // Every applied row left a dead entry in the pending index; autovacuum removes them.
  await idlePoll('right after the pass');
  await db.raw('VACUUM ANALYZE quota_applications');
  await idlePoll('after vacuum');
}

async function main(cleanups: Cleanups): Promise<void> {
  console.log(
    `quota benchmark: ${fmtInt(SETTINGS.users)} users at concurrency ${SETTINGS.concurrency}; Postgres side at ${fmtInt(SETTINGS.dbUsers)} users`,
  );
  const created = await throwawayDatabase(cleanups, SETTINGS.pgServerUrl, 'cairn_bench_quotas_');
  const db = createDatabase({ url: created.url, poolMax: 10 });
  cleanups.push(() => db.destroy());
  await migrateLatest(db);
  await bootstrap(db, {
    adminUser: 'root',
    adminKey: 'bench-admin-key-0123456789abcdefghijklmn',
    defaultCluster: 'bench',
    defaultAuthUrl: 'http://127.0.0.1:5000/auth',
    defaultStorageUrl: 'http://127.0.0.1:8080/v1',
  });
  console.log('1. apply through a real Swift proxy');
  const pass = await applyScenario(cleanups, db, created.url);
  console.log('2. Postgres side of a reconcile pass');
  await postgresScenario(db);
  if (!pass) console.log('the apply target was missed (see above)');
}

runBenchmark({ serve: () => Promise.reject(new Error('no child roles')), main });
