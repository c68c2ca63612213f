/**
 * Login timing benchmark (issue #6): can a client tell an unknown username from a known one by how
 * long a failed login takes? It times failed logins on the real gateway (a child process with
 * real Postgres and Redis) for
 *
 *   - unknown:  a username that does not exist,
 *   - wrong:    an existing, enabled user with a wrong password,
 *   - disabled: an existing, disabled user with its right password,
 *
 * through V3 (POST /auth/v3/auth/tokens) and V1 (GET /auth/v1.0), one request at a time (as an
 * attacker probing latency would, so the machine's load is the same for every case), the cases
 * interleaved in a fresh random order every round so drift in the machine's speed hits all alike.
 * It prints each case's median (and p10/p90), and the ratio of each median to the `wrong` one. The
 * target: every ratio within 5 %. A benchmark, not a test: it exits non-zero only when something is
 * broken (an unexpected status), never because a target was missed.
 *
 *   pnpm bench:timing                                         # full run: 300 rounds (about 4 min)
 *   BENCH_TIMING_ROUNDS=10 BENCH_TIMING_WARMUP=2 pnpm bench:timing   # smoke run
 *
 * Environment (all optional):
 *   BENCH_PG_URL          Postgres server for the throwaway database cairn_bench_timing_<random>
 *                         (default postgres://postgres@127.0.0.1:5432/postgres)
 *   BENCH_REDIS_URL       the gateway's REDIS_URL (default redis://127.0.0.1:6379); the run's keys
 *                         are deleted at the end
 *   BENCH_TIMING_ROUNDS   measured rounds; each round sends every case once per API (default 300)
 *   BENCH_TIMING_WARMUP   unmeasured rounds first (default 10)
 *
 * The failure limits are raised (CAIRN_LOGIN_FAILURE_LIMIT, CAIRN_LOGIN_ADDRESS_FAILURE_LIMIT,
 * CAIRN_LOGIN_USER_FAILURE_LIMIT) so no answer is a 429; every answer is checked to be the API's
 * refusal (V3 401, V1 401).
 */
import { request, Agent } from 'node:http';
import { performance } from 'node:perf_hooks';
import { randomInt } from 'node:crypto';
import { bootstrap, createDatabase, findClusterByName, migrateLatest } from '@cairn/management-api';
import { closeRedis, createLogger, createRedis } from '../services/auth-gateway/src';
import { hashPassword } from '../packages/domain/src/password-hash';
import { startChild, stopChild } from './lib/children';
import { serveGateway } from './lib/gateway-child';
import { intEnv, stringEnv } from './lib/env';
import { runBenchmark, type Cleanups } from './lib/main';
import { throwawayDatabase } from './lib/postgres';
import { fmtMs, table } from './lib/report';

const SETTINGS = {
  rounds: intEnv('BENCH_TIMING_ROUNDS', 300),
  warmup: intEnv('BENCH_TIMING_WARMUP', 10, 0),
  pgServerUrl: stringEnv('BENCH_PG_URL', 'postgres://postgres@127.0.0.1:5432/postgres'),
  redisUrl: stringEnv('BENCH_REDIS_URL', 'redis://127.0.0.1:6379'),
};

/** Within this fraction of the `wrong` median, a case cannot be told apart by its median. */
const TARGET = 0.05;
const CLUSTER = 'timing';
/** Not secrets: they only ever open a throwaway benchmark database. Names of equal length. */
const PASSWORD = 'timing-password-not-a-secret';
const WRONG_PASSWORD = 'timing-wrong-password-not-a-secret';
const KNOWN = 'timing-known';
const FROZEN = 'timing-frozn';
const ABSENT = 'timing-nouse';

const CASES = [
  { key: 'wrong', label: 'existing user, wrong password', user: KNOWN, password: WRONG_PASSWORD },
  { key: 'unknown', label: 'unknown user', user: ABSENT, password: WRONG_PASSWORD },
  { key: 'disabled', label: 'disabled user, right password', user: FROZEN, password: PASSWORD },
] as const;
type CaseKey = (typeof CASES)[number]['key'];
const APIS = ['v3', 'v1'] as const;
type ApiKey = (typeof APIS)[number];

// ---------------------------------------------------------------------------------------------
// The gateway child

const GATEWAY_ROLE = 'gateway';

async function serve(role: string): Promise<void> {
  if (role !== GATEWAY_ROLE) throw new Error(`unknown role ${role}`);
  await serveGateway(CLUSTER, { CAIRN_LOGIN_FAILURE_LIMIT: '100000', CAIRN_LOGIN_ADDRESS_FAILURE_LIMIT: '1000000', CAIRN_LOGIN_USER_FAILURE_LIMIT: '10000000' });
}

// ---------------------------------------------------------------------------------------------
// Requests: one at a time over one keep-alive connection

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

function send(port: number, api: ApiKey, user: string, password: string): Promise<{ status: number; ms: number }> {
  const body =
    api === 'v3' ? JSON.stringify({ auth: { identity: { methods: ['password'], password: { user: { name: user, domain: { id: 'default' }, password } } } } }) : undefined;
  const options =
    api === 'v3'
      ? { path: '/auth/v3/auth/tokens', method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body!) } }
      : { path: '/auth/v1.0', method: 'GET', headers: { 'x-auth-user': user, 'x-auth-key': password } };
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request({ host: '127.0.0.1', port, agent, ...options }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

function shuffled<T>(items: readonly T[]): T[] {
  const out = items.slice();
  for (let i = out.length - 1; i > 0; i--) {
    const j = randomInt(i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

const quantile = (sorted: number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;

// ---------------------------------------------------------------------------------------------
// Main

async function main(cleanups: Cleanups): Promise<void> {
  const started = new Date();
  console.log(`login timing benchmark: ${SETTINGS.warmup} warm-up + ${SETTINGS.rounds} measured rounds of ${CASES.length} cases × ${APIS.length} APIs, one request at a time`);

  const created = await throwawayDatabase(cleanups, SETTINGS.pgServerUrl, 'cairn_bench_timing_');
  const db = createDatabase({ url: created.url, poolMax: 1 });
  cleanups.push(() => db.destroy());
  await migrateLatest(db);
  await bootstrap(db, { adminUser: 'bench-admin', defaultCluster: CLUSTER, defaultAuthUrl: 'http://127.0.0.1:5000/auth', defaultStorageUrl: 'http://127.0.0.1:8080/v1' });
  const cluster = await findClusterByName(db, CLUSTER);
  if (!cluster) throw new Error(`bootstrap did not create the cluster '${CLUSTER}'`);
  // Real hashes with the default scrypt parameters, as the management API stores them; each its own salt.
  await db('storage_users').insert([
    { cluster_id: cluster.id, username: KNOWN, password_hash: await hashPassword(PASSWORD) },
    { cluster_id: cluster.id, username: FROZEN, password_hash: await hashPassword(PASSWORD), enabled: false },
  ]);

  const redis = createRedis(SETTINGS.redisUrl, createLogger('warn'));
  const prefix = `cairn:${cluster.uuid}:`;
  cleanups.push(async () => {
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      keys.push(...batch);
    } while (cursor !== '0');
    if (keys.length) await redis.unlink(...keys);
    console.log(`deleted ${keys.length} Redis keys under ${prefix}`);
    await closeRedis(redis);
  });
  await redis.ping();

  const starting = startChild(__filename, GATEWAY_ROLE, { ...process.env, BENCH_CHILD_DATABASE_URL: created.url, BENCH_CHILD_REDIS_URL: SETTINGS.redisUrl });
  cleanups.push(async () => {
    agent.destroy();
    const child = await starting.catch(() => undefined);
    if (child) await stopChild(child);
  });
  const gateway = await starting;

  // The right password works for the known user: the refusals below are about the password only.
  const check = await send(gateway.port, 'v3', KNOWN, PASSWORD);
  if (check.status !== 201) throw new Error(`the known user's right password was refused (${check.status})`);

  const times = new Map<string, number[]>();
  const slot = (api: ApiKey, key: CaseKey) => `${api}/${key}`;
  for (const api of APIS) for (const c of CASES) times.set(slot(api, c.key), []);
  const jobs = APIS.flatMap((api) => CASES.map((c) => ({ api, c })));
  for (let round = 0; round < SETTINGS.warmup + SETTINGS.rounds; round++) {
    for (const { api, c } of shuffled(jobs)) {
      const { status, ms } = await send(gateway.port, api, c.user, c.password);
      if (status !== 401) throw new Error(`${api} ${c.label}: expected 401, got ${status}`);
      if (round >= SETTINGS.warmup) times.get(slot(api, c.key))!.push(ms);
    }
  }

  const rows: string[][] = [];
  const misses: string[] = [];
  for (const api of APIS) {
    const median = (key: CaseKey) => quantile(times.get(slot(api, key))!.slice().sort((a, b) => a - b), 0.5);
    const reference = median('wrong');
    for (const c of CASES) {
      const sorted = times.get(slot(api, c.key))!.slice().sort((a, b) => a - b);
      const m = quantile(sorted, 0.5);
      const ratio = m / reference;
      const pass = Math.abs(ratio - 1) <= TARGET;
      if (!pass) misses.push(`${api.toUpperCase()} ${c.label}: median ${fmtMs(m)} ms is ${((ratio - 1) * 100).toFixed(1)} % off the wrong-password median`);
      rows.push([
        api.toUpperCase(),
        c.label,
        String(sorted.length),
        fmtMs(quantile(sorted, 0.1)),
        fmtMs(m),
        fmtMs(quantile(sorted, 0.9)),
        ratio.toFixed(3),
        c.key === 'wrong' ? '(reference)' : `${pass ? 'PASS' : 'FAIL'} within ${TARGET * 100} %`,
      ]);
    }
  }
  console.log(`\nResults (${started.toISOString()}; ${SETTINGS.rounds} rounds after ${SETTINGS.warmup} warm-up; latency in ms)`);
  console.log(table(['API', 'case', 'n', 'p10', 'median', 'p90', 'median / wrong', 'target'], rows));
  if (SETTINGS.rounds < 100) console.log(`\nnote: ${SETTINGS.rounds} rounds is a smoke run; medians of fewer than ~100 samples move by several % on a busy machine.`);
  console.log(misses.length ? `\nMissed targets:\n  ${misses.join('\n  ')}` : '\nAll targets met.');
}

runBenchmark({ serve, main });
