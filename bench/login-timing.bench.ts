/**
 * Login timing benchmark: can a client tell an unknown username from a known one by how
 * long a failed login takes? It times failed logins on the real gateway (a child process with
 * real Postgres and Redis) for
 *
 *   - unknown:  a username that does not exist,
 *   - wrong:    an existing, enabled user with a wrong password,
 *   - disabled: an existing, disabled user with its right password,
 *
 * through V3 (POST /auth/v3/auth/tokens) and V1 (GET /auth/v1.0), and the same three for S3
 * signatures (POST /auth/v3/s3tokens, V4: a wrong signature for an existing key, an access key that
 * does not exist, a disabled user's key with its right signature; measured after the password
 * cases, with 10 times their rounds), one request at a time (as an
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
import { bootstrap, createDatabase, findClusterByName, migrateLatest, SYSTEM_ACTING } from '@cairn/management-api';
import { closeRedis, createLogger, createRedis } from '@cairn/auth-gateway';
import { hashPassword } from '../packages/domain/src/password-hash';
import { createHash, randomBytes } from 'node:crypto';
import { generateS3AccessKey, generateS3Secret } from '../packages/domain/src/s3-keys';
import { parseS3SecretKeys, sealS3Secret } from '../packages/domain/src/s3-secret-crypto';
import { signatureV4 } from '../packages/domain/src/s3-signature';
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
  {
    key: 'wrong',
    label: 'existing user, wrong password',
    s3Label: 'existing user, wrong signature',
    user: KNOWN,
    password: WRONG_PASSWORD,
  },
  { key: 'unknown', label: 'unknown user', s3Label: 'unknown access key', user: ABSENT, password: WRONG_PASSWORD },
  {
    key: 'disabled',
    label: 'disabled user, right password',
    s3Label: 'disabled user, right signature',
    user: FROZEN,
    password: PASSWORD,
  },
] as const;
type CaseKey = (typeof CASES)[number]['key'];
const APIS = ['v3', 'v1', 's3'] as const;
const S3_ROUNDS_FACTOR = 10;
type ApiKey = (typeof APIS)[number];

// ---------------------------------------------------------------------------------------------
// The gateway child

const GATEWAY_ROLE = 'gateway';

async function serve(role: string): Promise<void> {
  if (role !== GATEWAY_ROLE) throw new Error(`unknown role ${role}`);
  await serveGateway(CLUSTER, {
    CAIRN_S3_SECRET_KEYS: process.env.BENCH_CHILD_S3_KEYS ?? '',
    CAIRN_S3TOKENS_REQUIRE_SERVICE_TOKEN: 'false',
    CAIRN_LOGIN_FAILURE_LIMIT: '100000',
    CAIRN_LOGIN_ADDRESS_FAILURE_LIMIT: '1000000',
    CAIRN_LOGIN_USER_FAILURE_LIMIT: '10000000',
  });
}

// ---------------------------------------------------------------------------------------------
// Requests: one at a time over one keep-alive connection

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

/** The run's S3 secret key (the child's CAIRN_S3_SECRET_KEYS) and each case's access key and secret. */
const S3_KEYS = `timing:${randomBytes(32).toString('base64')}`;
const S3_CREDENTIALS: Record<string, { access: string; secret: string }> = {
  [KNOWN]: { access: generateS3AccessKey(), secret: generateS3Secret() },
  [FROZEN]: { access: generateS3AccessKey(), secret: generateS3Secret() },
  // Never stored: an access key that does not exist.
  [ABSENT]: { access: generateS3AccessKey(), secret: generateS3Secret() },
};

/** s3token's body for a V4 GET: the known user's key signed with another secret, the others with their own. */
function s3Body(user: string): string {
  const { access, secret } = S3_CREDENTIALS[user]!;
  const signWith = user === KNOWN ? generateS3Secret() : secret;
  const stamp = new Date()
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
  const canonical = createHash('sha256')
    .update(`GET\n/bucket/object\n\nhost:s3.example.com\n\nhost\nUNSIGNED-PAYLOAD`)
    .digest('hex');
  const sts = ['AWS4-HMAC-SHA256', stamp, `${stamp.slice(0, 8)}/RegionOne/s3/aws4_request`, canonical].join('\n');
  const signature = signatureV4(Buffer.from(sts), signWith, {
    date: stamp.slice(0, 8),
    region: 'RegionOne',
    service: 's3',
  });
  return JSON.stringify({ credentials: { access, token: Buffer.from(sts).toString('base64url'), signature } });
}

function send(port: number, api: ApiKey, user: string, password: string): Promise<{ status: number; ms: number }> {
  const body =
    api === 'v3'
      ? JSON.stringify({
          auth: {
            identity: {
              methods: ['password'],
              password: { user: { name: user, domain: { id: 'default' }, password } },
            },
          },
        })
      : api === 's3'
        ? s3Body(user)
        : undefined;
  const options =
    api === 'v1'
      ? { path: '/auth/v1.0', method: 'GET', headers: { 'x-auth-user': user, 'x-auth-key': password } }
      : {
          path: api === 'v3' ? '/auth/v3/auth/tokens' : '/auth/v3/s3tokens',
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body!) },
        };
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

const quantile = (sorted: number[], q: number): number =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;

// ---------------------------------------------------------------------------------------------
// Main

async function main(cleanups: Cleanups): Promise<void> {
  const started = new Date();
  console.log(
    `login timing benchmark: ${SETTINGS.warmup} warm-up + ${SETTINGS.rounds} measured rounds of ${CASES.length} cases × ${APIS.length} APIs, one request at a time`,
  );

  const created = await throwawayDatabase(cleanups, SETTINGS.pgServerUrl, 'cairn_bench_timing_');
  const db = createDatabase({ url: created.url, poolMax: 1 });
  cleanups.push(() => db.destroy());
  await migrateLatest(db);
  await bootstrap(db, {
    adminUser: 'bench-admin',
    defaultCluster: CLUSTER,
    defaultAuthUrl: 'http://127.0.0.1:5000/auth',
    defaultStorageUrl: 'http://127.0.0.1:8080/v1',
  });
  const cluster = await findClusterByName(db, SYSTEM_ACTING.cli, CLUSTER);
  if (!cluster) throw new Error(`bootstrap did not create the cluster '${CLUSTER}'`);
  // Real hashes with the default scrypt parameters, as the management API stores them; each its own salt.
  const ids = (await db('storage_users')
    .insert([
      { cluster_id: cluster.id, username: KNOWN, password_hash: await hashPassword(PASSWORD) },
      { cluster_id: cluster.id, username: FROZEN, password_hash: await hashPassword(PASSWORD), enabled: false },
    ])
    .returning(['id', 'username'])) as Array<{ id: number; username: string }>;
  const keyring = parseS3SecretKeys(S3_KEYS);
  if (!keyring.ok) throw new Error(keyring.problems.join(' '));
  await db('s3_credentials').insert(
    ids.map(({ id, username }) => {
      const { access, secret } = S3_CREDENTIALS[username]!;
      return { storage_user_id: id, access_key: access, secret_sealed: sealS3Secret(keyring.keyring, access, secret) };
    }),
  );

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

  const starting = startChild(__filename, GATEWAY_ROLE, {
    ...process.env,
    BENCH_CHILD_DATABASE_URL: created.url,
    BENCH_CHILD_REDIS_URL: SETTINGS.redisUrl,
    BENCH_CHILD_S3_KEYS: S3_KEYS,
  });
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
  // The password APIs first, then S3 on its own: an S3 check takes under a millisecond, and
  // measured between scrypt runs it would mostly measure what those leave behind (the thread
  // pool, GC). S3 gets S3_ROUNDS_FACTOR times the rounds: it is cheap, and its medians need them.
  const groups: Array<{ apis: readonly ApiKey[]; factor: number }> = [
    { apis: ['v3', 'v1'], factor: 1 },
    { apis: ['s3'], factor: S3_ROUNDS_FACTOR },
  ];
  for (const { apis, factor } of groups) {
    const jobs = apis.flatMap((api) => CASES.map((c) => ({ api, c })));
    for (let round = 0; round < (SETTINGS.warmup + SETTINGS.rounds) * factor; round++) {
      for (const { api, c } of shuffled(jobs)) {
        const { status, ms } = await send(gateway.port, api, c.user, c.password);
        if (status !== 401) throw new Error(`${api} ${c.label}: expected 401, got ${status}`);
        if (round >= SETTINGS.warmup * factor) times.get(slot(api, c.key))!.push(ms);
      }
    }
  }

  const rows: string[][] = [];
  const misses: string[] = [];
  for (const api of APIS) {
    const median = (key: CaseKey) =>
      quantile(
        times
          .get(slot(api, key))!
          .slice()
          .sort((a, b) => a - b),
        0.5,
      );
    const reference = median('wrong');
    for (const c of CASES) {
      const sorted = times
        .get(slot(api, c.key))!
        .slice()
        .sort((a, b) => a - b);
      const m = quantile(sorted, 0.5);
      const ratio = m / reference;
      const pass = Math.abs(ratio - 1) <= TARGET;
      if (!pass)
        misses.push(
          `${api.toUpperCase()} ${api === 's3' ? c.s3Label : c.label}: median ${fmtMs(m)} ms is ${((ratio - 1) * 100).toFixed(1)} % off the reference (wrong password or signature) median`,
        );
      rows.push([
        api.toUpperCase(),
        api === 's3' ? c.s3Label : c.label,
        String(sorted.length),
        fmtMs(quantile(sorted, 0.1)),
        fmtMs(m),
        fmtMs(quantile(sorted, 0.9)),
        ratio.toFixed(3),
        c.key === 'wrong' ? '(reference)' : `${pass ? 'PASS' : 'FAIL'} within ${TARGET * 100} %`,
      ]);
    }
  }
  console.log(
    `\nResults (${started.toISOString()}; ${SETTINGS.rounds} rounds after ${SETTINGS.warmup} warm-up; latency in ms)`,
  );
  console.log(table(['API', 'case', 'n', 'p10', 'median', 'p90', 'median / wrong', 'target'], rows));
  if (SETTINGS.rounds < 100)
    console.log(
      `\nnote: ${SETTINGS.rounds} rounds is a smoke run; medians of fewer than ~100 samples move by several % on a busy machine.`,
    );
  console.log(misses.length ? `\nMissed targets:\n  ${misses.join('\n  ')}` : '\nAll targets met.');
}

runBenchmark({ serve, main });
