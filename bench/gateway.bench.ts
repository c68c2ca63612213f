/**
 * auth-gateway benchmark. A benchmark, not a test: it prints figures, compares them
 * with its targets and says PASS/FAIL, but exits non-zero only when something is broken
 * (setup failure, an unexpected status, socket errors or timeouts), never because a target was missed.
 *
 *   pnpm bench:gateway                                   # what docs/benchmarks.md reports (about 4 min)
 *   BENCH_DURATION=3 BENCH_WARMUP=1 pnpm bench:gateway   # quick smoke run
 *
 * Environment (all optional):
 *   BENCH_PG_URL       Postgres server on which the throwaway database cairn_bench_gw_<random> is
 *                      created and dropped (default postgres://postgres@127.0.0.1:5432/postgres)
 *   BENCH_REDIS_URL    the gateway's REDIS_URL (default redis://127.0.0.1:6379); the run's keys
 *                      (prefix cairn:<cluster uuid>:) are deleted at the end
 *   BENCH_DURATION     seconds measured per scenario (default 10)
 *   BENCH_WARMUP       seconds of unmeasured warm-up before each scenario (default 3)
 *   BENCH_CONNECTIONS  concurrent autocannon connections, every scenario (default 32)
 *   BENCH_ROTATE_USERS distinct existing users the wrong-password and the cold scenario each rotate
 *                      over (default 2000)
 *   BENCH_SCENARIOS    comma-separated subset of v1,tempauth,v1logged,v1anchor,v1stack,v1rounds,v1shared,v1fenced,
 *                      v1many,issue,appcred,validate,s3tokens,wrong,cold (default all)
 *   BENCH_WARM_USERS   users the warm V1 logins of v1many rotate over (default 100); each is logged in
 *                      once (one scrypt) right before, and the verification cache keeps a check for
 *                      60 s, so those logins, the warm-up and the measurement must fit in a minute
 *   BENCH_TEMPAUTH     0: skip Swift's tempauth even when the Debian Swift packages are installed
 *   BENCH_CPU_PROF     a directory: the gateway children and the V1 anchor run with --cpu-prof and write
 *                      their profiles there
 *   BENCH_PAIRED_ROUNDS rounds of the warm V1 login with its request log, its bare handler and the stacks
 *                      (those selected) measured in turn after the main run (default 8; 0: none),
 *                      BENCH_PAIRED_SECONDS (default 2) each after a 1 s warm-up; the median of the
 *                      rounds' ratios of the login to the bare handler is the verdict
 *
 * Scenarios, each against one server while the others sit idle, all with 32 connections:
 *   - express hello world: the baseline (./lib), measured first and again after every scenario.
 *   - V1 auth, warm cache, request log on (v1logged), and its anchor (v1anchor): the same warm login
 *     on a second gateway at LOG_LEVEL info, and bare express answering GET /auth/v1.0 with the
 *     headers a real login answered, with the runtime's request logging; both logs to /dev/null.
 *   - The warm V1 login's stack alone (v1stack): that anchor plus the Redis commands a real warm login
 *     sent (captured with MONITOR), all in one round trip, before answering; v1rounds: the same
 *     commands in the round trips the login sent them in, one after the other; v1shared: as
 *     v1rounds, with the round trips after the first shared by the requests waiting for them at
 *     once, as logins of one user share the lookup of its live token (TokenService.issue); and
 *     v1fenced: v1shared plus the change feed's fence as the login sends it (an empty query on a
 *     Postgres connection of its own, beside the first round trip, shared as UserChangeFeed shares it).
 *   - V1 auth, warm cache: GET /auth/v1.0 for one user with its right password. A successful check
 *     is remembered by the gateway for CAIRN_VERIFY_CACHE_SECONDS (60 s, not renewed by hits), so
 *     right before the warm-up the user's generation is bumped (as a password change does) and one
 *     login computes the hash and fills the cache: the whole warm-up + measurement then runs on a
 *     warm cache, with no scrypt at all. Each login still waits for the change-notice fence (one
 *     empty query on the gateway's LISTEN connection per turn of its event loop), uses the user row it
 *     read less than CAIRN_USER_CACHE_MS ago, checks the failure counter in Redis and issues a new
 *     token (a Redis SET).
 *   - tempauth V1 auth (Swift): the same request against a real Swift 2.30 proxy with tempauth and
 *     memcached, one proxy worker, started with test-e2e/interop/swift-cluster.ts. tempauth keeps
 *     keys in plain text in its config and hands out the user's existing token from memcached.
 *   - V1 auth, warm cache, users in turn (v1many): the warm login of BENCH_WARM_USERS users in turn
 *     instead of one. Logins of one user that arrive together share the lookup of its live token,
 *     and its row is read from Postgres at most every CAIRN_USER_CACHE_MS: with one user on 32
 *     connections most logins pay neither, with many users each pays them, as in production.
 *   - V3 token issue: POST /auth/v3/auth/tokens, password method, project scope, warm cache as above.
 *   - V3 token issue, application credential: POST /auth/v3/auth/tokens, method
 *     application_credential by id and secret, for the same user. The credential is read from
 *     Postgres at every login (a revoked one must fail at once) and its secret checked by one
 *     SHA-256 (it is 64 random bytes: no KDF, so no cache either). Compared with the password V3
 *     issue, measured beside it in the same run: it must be at least as fast.
 *   - V3 token validate: GET /auth/v3/auth/tokens, a superuser's token as X-Auth-Token and another
 *     user's token as X-Subject-Token (what keystonemiddleware in a Swift proxy does), with catalog.
 *   - s3tokens (V4): POST /auth/v3/s3tokens with the superuser's token as X-Auth-Token and a V4
 *     string to sign and signature of another user's S3 credential (what Swift's s3token posts for
 *     every S3 request): the service token's validation, the credential (remembered behind the
 *     notice fence), one AES-GCM opening, the V4 HMAC chain and the V3 document. Compared with
 *     V3 token validate, the call it stands beside in a proxy.
 *   - V1 wrong password: 401s; one full scrypt per request. The gateway answers 429 after
 *     CAIRN_LOGIN_FAILURE_LIMIT (10) failures per username from one address in 5 minutes, so the requests rotate over
 *     BENCH_ROTATE_USERS existing users (the limit is left at its default).
 *   - V1 auth, cold: a second gateway child with CAIRN_VERIFY_CACHE_SECONDS=0, so every login runs
 *     scrypt with the default parameters (N=2^15, r=8, p=3). The logins (right password) rotate over
 *     BENCH_ROTATE_USERS other users, so no two requests in flight are the same check: a gateway
 *     that lets identical checks in flight share one scrypt run would otherwise hash less often
 *     than it answers.
 *
 * Process layout as in management-api.bench.ts: autocannon in this process, the hello world and each
 * gateway in its own forked child (the real createDeps/startAuthGateway, LOG_LEVEL warn), Postgres,
 * Redis and Swift as their own processes on the same 2 cores. The CPU column says where the cores
 * went: the server under load (for tempauth: the proxy's process group, parent and worker), redis,
 * postgres, memcached, autocannon (this process) and the rest of the machine.
 */
import { createWriteStream, existsSync } from 'node:fs';
import express from 'express';
import { Client as PgClient } from 'pg';
import { requestIdOf, requestLogging } from '@cairn/runtime';
import { createDatabase, bootstrap, findClusterByName, migrateLatest, SYSTEM_ACTING } from '@cairn/management-api';
import { closeRedis, createLogger, createRedis, readConfig } from '@cairn/auth-gateway';
import {
  DEFAULT_SCRYPT_PARAMS,
  hashPassword,
  parsePasswordHash,
  verifyScryptPassword as verifyPassword,
} from '../packages/domain/src/password-hash';
import {
  generateApplicationCredentialSecret,
  hashApplicationCredentialSecret,
} from '../packages/domain/src/application-credential';
import { generateS3AccessKey, generateS3Secret } from '../packages/domain/src/s3-keys';
import { parseS3SecretKeys, sealS3Secret } from '../packages/domain/src/s3-secret-crypto';
import { signatureV4 } from '../packages/domain/src/s3-signature';
import { createHash, randomBytes } from 'node:crypto';
import { startSwiftCluster } from '../test-e2e/interop/swift-cluster';
import { BASELINE_ROLE, serveApp, startChild, stopChild, type Child } from './lib/children';
import { serveGateway } from './lib/gateway-child';
import { GATEWAY_REQUEST_ID } from '../services/auth-gateway/src/http/request-id';
import { party, type Party } from './lib/cpu';
import { intEnv, loadEnv, stringEnv } from './lib/env';
import {
  checkOnce,
  measureBracketed,
  measureInTurn,
  median,
  serverMsPerRequest,
  type CheckedResponse,
  type LoadSettings,
  type Measured,
  type Scenario,
} from './lib/load';
import { runBenchmark, type Cleanups } from './lib/main';
import { throwawayDatabase } from './lib/postgres';
import { fmtInt, fmtMs, printResults, ratio, verdict, type Verdict } from './lib/report';

// ---------------------------------------------------------------------------------------------
// Settings

const ALL_SCENARIOS = [
  'v1',
  'tempauth',
  'v1logged',
  'v1anchor',
  'v1stack',
  'v1rounds',
  'v1shared',
  'v1fenced',
  'v1many',
  'issue',
  'appcred',
  'validate',
  's3tokens',
  'wrong',
  'cold',
] as const;
type ScenarioKey = (typeof ALL_SCENARIOS)[number];

function scenarioSelection(): Set<ScenarioKey> {
  const raw = stringEnv('BENCH_SCENARIOS');
  if (!raw) return new Set(ALL_SCENARIOS);
  const keys = raw.split(',').map((k) => k.trim());
  const unknown = keys.filter((k) => !(ALL_SCENARIOS as readonly string[]).includes(k));
  if (unknown.length)
    throw new Error(`BENCH_SCENARIOS: unknown ${unknown.join(', ')} (known: ${ALL_SCENARIOS.join(', ')})`);
  return new Set(keys as ScenarioKey[]);
}

const SETTINGS = {
  ...loadEnv(32),
  rotateUsers: intEnv('BENCH_ROTATE_USERS', 2000),
  warmUsers: intEnv('BENCH_WARM_USERS', 100),
  pgServerUrl: stringEnv('BENCH_PG_URL', 'postgres://postgres@127.0.0.1:5432/postgres'),
  redisUrl: stringEnv('BENCH_REDIS_URL', 'redis://127.0.0.1:6379'),
  tempauth: stringEnv('BENCH_TEMPAUTH') !== '0',
  cpuProfDir: stringEnv('BENCH_CPU_PROF'),
  pairedRounds: intEnv('BENCH_PAIRED_ROUNDS', 8, 0),
  pairedSeconds: intEnv('BENCH_PAIRED_SECONDS', 2),
};

const TARGETS = {
  connections: 32,
  v1Ratio: 0.4,
  validateRatio: 0.5,
  /** s3tokens' req/s as a fraction of V3 validate's (each relative to its own surrounding baselines). */
  s3VsValidate: 0.8,
  /**
   * An application credential login's req/s as a fraction of the password V3 issue's (each relative to its own
   * baselines).
   */
  appcredVsIssue: 1,
  issueRatio: 0.3,
  p99Ms: 20,
  v1VsTempauth: 5,
  /** Warm V1 with request logging on, as a fraction of a bare handler giving its headers with logging on. */
  v1VsAnchor: 0.6,
};

const SWIFT_PROXY = '/usr/bin/swift-proxy-server';
const CLUSTER = 'bench';
/** Not secrets: they only ever open a throwaway benchmark database and a loopback Swift. */
const PASSWORD = 'bench-password-not-a-secret';
const WRONG_PASSWORD = 'bench-wrong-password';
const USER = 'bench-user';
const SUBJECT = 'bench-subject';
const SERVICE = 'bench-service';
const TEMPAUTH_ACCOUNT = 'bench';
const TEMPAUTH_USER = 'bench';
/**
 * The users the wrong-password (`bench-wrong-*`) and cold (`bench-cold-*`) scenarios rotate over
 * (BENCH_ROTATE_USERS each), and the warm logins of v1many (`bench-warm-*`, BENCH_WARM_USERS).
 */
const ROTATED = {
  'bench-wrong-': SETTINGS.rotateUsers,
  'bench-cold-': SETTINGS.rotateUsers,
  'bench-warm-': SETTINGS.warmUsers,
};
type Rotated = keyof typeof ROTATED;
const rotatedUser = (prefix: Rotated, i: number): string => `${prefix}${String(i).padStart(6, '0')}`;
/** The next of a prefix's users, in turn: no two requests in flight share a name. */
const rotation = (prefix: Rotated) => {
  let turn = 0;
  return () => rotatedUser(prefix, (turn++ % ROTATED[prefix]) + 1);
};

// ---------------------------------------------------------------------------------------------
// Child processes: the gateways under test (the baseline is served by ./lib)

const GATEWAY_ROLE = 'gateway';
const COLD_GATEWAY_ROLE = 'gateway-cold';
/** The gateway with its request log on (LOG_LEVEL info), and the bare handler it is held to. */
const LOGGED_GATEWAY_ROLE = 'gateway-logged';
const V1_ANCHOR_ROLE = 'v1-anchor';
const V1_STACK_ROLE = 'v1-stack';
const V1_ROUNDS_ROLE = 'v1-rounds';
const V1_SHARED_ROLE = 'v1-shared';
const V1_FENCED_ROLE = 'v1-fenced';
/** The replays of the warm V1 login's Redis commands beside the bare handler (serveV1Stack), in turn order. */
const STACK_KEYS = ['v1rounds', 'v1stack', 'v1shared', 'v1fenced'] as const;

/**
 * Request logs go to /dev/null on both sides of that comparison: each line is still built and
 * written, as to stdout in production, without filling the benchmark's output.
 */
const requestLog = () => createLogger('info', createWriteStream('/dev/null'));

/**
 * The anchor for warm V1 logins: bare express with the gateway's request logging (runtime's
 * requestLogging, the same request ids) answering GET /auth/v1.0 with the headers a real login
 * answered (BENCH_CHILD_V1_HEADERS) and the gateway's transaction id and Vary, an empty text body.
 */
function serveV1Anchor(before?: () => Promise<unknown>, close?: () => Promise<void>): void {
  const headers = JSON.parse(process.env.BENCH_CHILD_V1_HEADERS ?? '{}') as Record<string, string>;
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.use(requestLogging(requestLog(), GATEWAY_REQUEST_ID));
  app.get('/auth/v1.0', async (req, res) => {
    if (before) await before();
    res.setHeader('Vary', 'X-Auth-Token');
    res.setHeader('X-Trans-Id', requestIdOf(req) ?? '');
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    res.status(200).type('text/plain; charset=utf-8').send('');
  });
  serveApp(app, close);
}

/**
 * The warm V1 login's stack alone: the anchor above, plus the Redis commands a real warm login sent
 * (BENCH_CHILD_V1_REDIS: its round trips, each the commands sent together, captured with MONITOR)
 * on the gateway's own Redis client: all in one tick, so one round trip, or (`inRounds`) each round
 * trip's commands in one tick once the one before has been answered, as the login awaits them. What
 * express, pino-http and ioredis cost for this answer with Cairn's own work (its middleware, limiter
 * keys, verification cache, token signing, Postgres fence) taken away. `shared`: the round trips
 * after the first are sent once for all the requests waiting for them at once, as the login sends
 * its live-token lookup once for the logins of one user that arrive together. `fenced`: as
 * `shared`, plus the Postgres fence sent beside the first round trip (fencer).
 */
async function serveV1Stack(how: 'one' | 'rounds' | 'shared' | 'fenced'): Promise<void> {
  const [first = [], ...later] = JSON.parse(process.env.BENCH_CHILD_V1_REDIS ?? '[]') as string[][][];
  const redis = createRedis(process.env.BENCH_CHILD_REDIS_URL!, createLogger('warn'));
  const send = (commands: string[][]) =>
    Promise.all(commands.map(([command, ...args]) => redis.call(command!, ...args)));
  const sendLater = async () => {
    for (const commands of later) await send(commands);
  };
  let inFlight: Promise<void> | undefined;
  const shareLater = () => (inFlight ??= sendLater().finally(() => (inFlight = undefined)));
  const pg = how === 'fenced' ? new PgClient({ connectionString: process.env.BENCH_CHILD_DATABASE_URL }) : undefined;
  await pg?.connect();
  const fence = pg && fencer(pg);
  const before = {
    one: () => send([first, ...later].flat()),
    rounds: async () => {
      await send(first);
      await sendLater();
    },
    shared: async () => {
      await send(first);
      await shareLater();
    },
    fenced: async () => {
      const fenced = fence!();
      await send(first);
      await fenced;
      await shareLater();
    },
  }[how];
  serveV1Anchor(before, async () => {
    await Promise.all([closeRedis(redis), pg?.end()]);
  });
}

/**
 * The change feed's fence as UserChangeFeed sends it: an empty query, one at a time, sent in the
 * turn after the first request that asks; requests asking while one is out share the next.
 */
function fencer(client: PgClient): () => Promise<void> {
  let next: { promise: Promise<void>; release: () => void } | undefined;
  let out = false;
  const send = (): void => {
    const fence = next;
    if (!fence) return;
    next = undefined;
    out = true;
    const done = () => {
      out = false;
      fence.release();
      if (next) send();
    };
    client.query('').then(done, done);
  };
  return () => {
    if (!next) {
      let release!: () => void;
      next = { promise: new Promise<void>((resolve) => (release = resolve)), release };
      if (!out) setImmediate(send);
    }
    return next.promise;
  };
}

async function serve(role: string): Promise<void> {
  if (role === V1_ANCHOR_ROLE) return serveV1Anchor();
  if (role === V1_STACK_ROLE) return serveV1Stack('one');
  if (role === V1_ROUNDS_ROLE) return serveV1Stack('rounds');
  if (role === V1_SHARED_ROLE) return serveV1Stack('shared');
  if (role === V1_FENCED_ROLE) return serveV1Stack('fenced');
  if (role !== GATEWAY_ROLE && role !== COLD_GATEWAY_ROLE && role !== LOGGED_GATEWAY_ROLE)
    throw new Error(`unknown role ${role}`);
  const s3 = { CAIRN_S3_SECRET_KEYS: process.env.BENCH_CHILD_S3_KEYS ?? '' };
  if (role === LOGGED_GATEWAY_ROLE) return serveGateway(CLUSTER, { ...s3, LOG_LEVEL: 'info' }, requestLog());
  await serveGateway(CLUSTER, role === COLD_GATEWAY_ROLE ? { ...s3, CAIRN_VERIFY_CACHE_SECONDS: '0' } : s3);
}

// ---------------------------------------------------------------------------------------------
// Setup: database, users, Redis

type BenchDb = ReturnType<typeof createDatabase>;
type BenchRedis = ReturnType<typeof createRedis>;

interface Setup {
  clusterId: number;
  clusterUuid: string;
  passwordHash: string;
  /** SUBJECT's S3 credential, its secret sealed under S3_KEYS in the table. */
  s3: { access: string; secret: string };
  /** USER's application credential, stored as the gateway's create stores it (the secret's hash only). */
  appcred: { id: string; secret: string };
}

/** The run's S3 secret key (CAIRN_S3_SECRET_KEYS of the gateway children): random, never stored. */
const S3_KEYS = `bench:${randomBytes(32).toString('base64')}`;

/** Schema, first admin and the cluster through the management API's own functions, then the users. */
async function setupDatabase(db: BenchDb): Promise<Setup> {
  await migrateLatest(db);
  await bootstrap(db, {
    adminUser: 'bench-admin',
    defaultCluster: CLUSTER,
    defaultAuthUrl: 'http://127.0.0.1:5000/auth',
    defaultStorageUrl: 'http://127.0.0.1:8080/v1',
  });
  const cluster = await findClusterByName(db, SYSTEM_ACTING.cli, CLUSTER);
  if (!cluster) throw new Error(`bootstrap did not create the cluster '${CLUSTER}'`);
  // One real scrypt hash with the default parameters, shared by every bench user (same password).
  const passwordHash = await hashPassword(PASSWORD);
  await db('storage_users').insert([
    { cluster_id: cluster.id, username: USER, password_hash: passwordHash },
    { cluster_id: cluster.id, username: SUBJECT, password_hash: passwordHash },
    { cluster_id: cluster.id, username: SERVICE, password_hash: passwordHash, is_superuser: true },
  ]);
  for (const [prefix, count] of Object.entries(ROTATED)) {
    await db.raw(
      `INSERT INTO storage_users (cluster_id, username, password_hash)
       SELECT ?, ? || lpad(g::text, 6, '0'), ? FROM generate_series(1, ?) AS g`,
      [cluster.id, prefix, passwordHash, count],
    );
  }
  await db.raw('ANALYZE storage_users');
  // An S3 credential of SUBJECT, as the management API or the OS-EC2 API stores one.
  const keyring = parseS3SecretKeys(S3_KEYS);
  if (!keyring.ok) throw new Error(keyring.problems.join(' '));
  const s3 = { access: generateS3AccessKey(), secret: generateS3Secret() };
  const subject = (await db('storage_users').where({ cluster_id: cluster.id, username: SUBJECT }).first('id')) as {
    id: number;
  };
  await db('s3_credentials').insert({
    storage_user_id: subject.id,
    access_key: s3.access,
    secret_sealed: sealS3Secret(keyring.keyring, s3.access, s3.secret),
  });
  // An application credential of USER, as `openstack application credential create` makes one.
  const appcred = { id: randomBytes(16).toString('hex'), secret: generateApplicationCredentialSecret() };
  const user = (await db('storage_users').where({ cluster_id: cluster.id, username: USER }).first('id')) as {
    id: number;
  };
  await db('application_credentials').insert({
    id: appcred.id,
    storage_user_id: user.id,
    name: 'bench',
    secret_hash: hashApplicationCredentialSecret(appcred.secret),
    roles: JSON.stringify(['swiftoperator']),
  });
  return { clusterId: cluster.id, clusterUuid: cluster.uuid, passwordHash, s3, appcred };
}

async function scanKeys(redis: BenchRedis, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== '0');
  return keys;
}

async function deleteKeys(redis: BenchRedis, keys: string[]): Promise<void> {
  for (let i = 0; i < keys.length; i += 1000) await redis.unlink(...keys.slice(i, i + 1000));
}

/**
 * The commands Redis received while `action` ran (MONITOR on a connection of its own), as their
 * arguments, in round trips: a command that ran more than ROUND_TRIP_GAP_US after the one before
 * starts a new one. One login alone on an idle machine awaits each reply for a millisecond or more
 * (its code, the Postgres fence), while the commands sent together run microseconds apart. Run it
 * while nothing else talks to Redis: a monitor sees every client's commands.
 */
const ROUND_TRIP_GAP_US = 250;
async function redisRoundTripsOf(redis: BenchRedis, action: () => Promise<unknown>): Promise<string[][][]> {
  if (!('monitor' in redis))
    throw new Error('v1stack, v1rounds, v1shared and v1fenced need a single Redis, not a cluster');
  const monitor = await redis.monitor();
  const rounds: string[][][] = [];
  let last = -Infinity;
  monitor.on('monitor', (time: string, args: string[]) => {
    // "<seconds>.<microseconds>"; the seconds part alone would lose microseconds as a double.
    const [sec, usec] = time.split('.');
    const us = (Number(sec) % 1_000_000) * 1_000_000 + Number(usec);
    if (us - last > ROUND_TRIP_GAP_US || rounds.length === 0) rounds.push([]);
    rounds[rounds.length - 1]!.push(args);
    last = us;
  });
  await action();
  // MONITOR reports a command once it ran; give the last ones time to arrive.
  await new Promise((resolve) => setTimeout(resolve, 200));
  monitor.disconnect();
  return rounds;
}

/** What the run left in Redis: keys by kind and the memory of one token record. */
async function redisFootprint(redis: BenchRedis, prefix: string): Promise<string> {
  const keys = await scanKeys(redis, prefix);
  const kinds = new Map<string, number>();
  for (const k of keys) {
    const kind = k.slice(prefix.length).split(':')[0]!;
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
  }
  const tokens = keys.filter((k) => k.startsWith(`${prefix}tok:`)).slice(0, 50);
  const sizes = await Promise.all(tokens.map((k) => redis.memory('USAGE', k)));
  const mean = sizes.length ? sizes.reduce<number>((a, b) => a + Number(b ?? 0), 0) / sizes.length : 0;
  const byKind = [...kinds.entries()].map(([k, n]) => `${fmtInt(n)} ${k}`).join(', ');
  return `Redis keys the run left (prefix ${prefix}): ${byKind || 'none'}; a token record takes ${fmtInt(mean)} bytes (MEMORY USAGE, mean of ${sizes.length}) and lives for the token's lifetime (24 h by default).`;
}

/**
 * Time of one scrypt check with the given hash, alone on an otherwise idle machine (median of 5, after one unmeasured).
 */
async function kdfMs(passwordHash: string): Promise<number> {
  await verifyPassword(PASSWORD, passwordHash);
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    await verifyPassword(PASSWORD, passwordHash);
    times.push(performance.now() - t0);
  }
  return times.sort((a, b) => a - b)[2]!;
}

// ---------------------------------------------------------------------------------------------
// Requests

const v1Request = (user: string, key: string) => ({
  path: '/auth/v1.0',
  headers: { 'x-auth-user': user, 'x-auth-key': key },
});

const v3IssueBody = (user: string, password: string): string =>
  JSON.stringify({
    auth: {
      identity: { methods: ['password'], password: { user: { name: user, domain: { id: 'default' }, password } } },
      scope: { project: { name: user, domain: { id: 'default' } } },
    },
  });

const v3IssueRequest = (user: string) => {
  const body = v3IssueBody(user, PASSWORD);
  return () => ({
    path: '/auth/v3/auth/tokens',
    method: 'POST' as const,
    headers: { 'content-type': 'application/json' },
    body,
  });
};

/** An application credential login by id and secret: the body rclone, gophercloud or keystoneauth send. */
const appCredIssueRequest = (id: string, secret: string) => {
  const body = JSON.stringify({
    auth: { identity: { methods: ['application_credential'], application_credential: { id, secret } } },
  });
  return () => ({
    path: '/auth/v3/auth/tokens',
    method: 'POST' as const,
    headers: { 'content-type': 'application/json' },
    body,
  });
};

/**
 * What s3token posts for one S3 GET signed with V4 (the string to sign is fixed: the gateway keeps no replay state).
 */
function s3tokensBody(access: string, secret: string): string {
  const stamp = new Date()
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
  const canonical = [
    'GET',
    '/bucket/object',
    '',
    `host:s3.example.com\nx-amz-date:${stamp}\n`,
    'host;x-amz-date',
    'UNSIGNED-PAYLOAD',
  ].join('\n');
  const stringToSign = [
    'AWS4-HMAC-SHA256',
    stamp,
    `${stamp.slice(0, 8)}/RegionOne/s3/aws4_request`,
    createHash('sha256').update(canonical).digest('hex'),
  ].join('\n');
  const signature = signatureV4(Buffer.from(stringToSign), secret, {
    date: stamp.slice(0, 8),
    region: 'RegionOne',
    service: 's3',
  });
  return JSON.stringify({ credentials: { access, token: Buffer.from(stringToSign).toString('base64url'), signature } });
}

const needHeader = (name: string) => (res: CheckedResponse) =>
  res.headers.get(name) ? null : `no ${name} in the answer`;

/** The token of a V3 issue answer, after checking it. */
async function issueToken(scenario: Scenario, user: string): Promise<string> {
  const res = await checkOnce(scenario, (r) => {
    const body = JSON.parse(r.text) as { token?: { user?: { name?: string }; project?: { name?: string } } };
    if (body.token?.user?.name !== user || body.token.project?.name !== user)
      return `unexpected token document ${r.text.slice(0, 300)}`;
    return needHeader('x-subject-token')(r);
  });
  return res.headers.get('x-subject-token')!;
}

// ---------------------------------------------------------------------------------------------
// Main

async function main(cleanups: Cleanups): Promise<void> {
  const started = new Date();
  const selected = scenarioSelection();
  const swiftInstalled = existsSync(SWIFT_PROXY);
  const runTempauth = selected.has('tempauth') && SETTINGS.tempauth && swiftInstalled;
  const verifyCacheSeconds = readConfig({}).verifyCacheSeconds;
  console.log(
    `auth-gateway benchmark: ${SETTINGS.connections} connections, ${SETTINGS.warmup} s warm-up + ${SETTINGS.duration} s per scenario, ` +
      `scenarios ${[...selected].join(', ')}; Redis ${SETTINGS.redisUrl}`,
  );
  if (SETTINGS.warmup + SETTINGS.duration >= verifyCacheSeconds) {
    console.log(
      `  warning: warm-up + duration (${SETTINGS.warmup + SETTINGS.duration} s) >= the verification cache's ${verifyCacheSeconds} s: ` +
        'the cache entry expires during the warm scenarios and every request in flight then runs scrypt',
    );
  }

  // Swift takes a few seconds to come up: start it first, alongside the database setup.
  const swiftStarting = runTempauth
    ? startSwiftCluster({
        pipeline: 'tempauth',
        tempauthUsers: [{ account: TEMPAUTH_ACCOUNT, user: TEMPAUTH_USER, key: PASSWORD, groups: ['.admin'] }],
        // WARNING: no access log line per request (the gateway at LOG_LEVEL warn logs none either).
        logLevel: 'WARNING',
      })
    : undefined;
  if (swiftStarting) {
    swiftStarting.catch(() => undefined); // awaited below; this only keeps an early failure from being unhandled
    cleanups.push(async () => {
      const swift = await swiftStarting.catch(() => undefined);
      if (swift) {
        await swift.stop();
        console.log('stopped Swift');
      }
    });
  }

  const created = await throwawayDatabase(cleanups, SETTINGS.pgServerUrl, 'cairn_bench_gw_');
  const db = createDatabase({ url: created.url, poolMax: 1 });
  cleanups.push(() => db.destroy());
  const setup = await setupDatabase(db);
  console.log(
    `  migrated, bootstrapped cluster '${CLUSTER}' (${setup.clusterUuid}), ${fmtInt(3 + Object.values(ROTATED).reduce((a, b) => a + b, 0))} storage users`,
  );

  const redis = createRedis(SETTINGS.redisUrl, createLogger('warn'));
  const prefix = `cairn:${setup.clusterUuid}:`;
  cleanups.push(async () => {
    const keys = await scanKeys(redis, prefix);
    await deleteKeys(redis, keys);
    console.log(`deleted ${fmtInt(keys.length)} Redis keys under ${prefix}`);
    await closeRedis(redis);
  });
  await redis.ping();

  // Children: hello world, the gateway, the gateway without verification cache.
  const childEnv = {
    ...process.env,
    BENCH_CHILD_DATABASE_URL: created.url,
    BENCH_CHILD_REDIS_URL: SETTINGS.redisUrl,
    BENCH_CHILD_S3_KEYS: S3_KEYS,
  };
  const profArgs = SETTINGS.cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', SETTINGS.cpuProfDir] : [];
  const start = (role: string, execArgv: string[] = [], env: NodeJS.ProcessEnv = childEnv): Promise<Child> => {
    const starting = startChild(__filename, role, env, execArgv);
    cleanups.push(async () => {
      const child = await starting.catch(() => undefined);
      if (child) await stopChild(child);
    });
    return starting;
  };
  const withAnchor = ['v1logged', 'v1anchor', ...STACK_KEYS].some((k) => selected.has(k as ScenarioKey));
  const [baseline, gateway, cold, logged] = await Promise.all([
    start(BASELINE_ROLE),
    start(GATEWAY_ROLE, profArgs),
    selected.has('cold') ? start(COLD_GATEWAY_ROLE, profArgs) : undefined,
    withAnchor ? start(LOGGED_GATEWAY_ROLE, profArgs) : undefined,
  ]);
  const swift = swiftStarting ? await swiftStarting : undefined;
  if (swift)
    console.log(
      `  Swift proxy with tempauth at ${swift.proxyUrl} (one worker, memcached on ${swift.ports.memcached}), up in ${swift.startedInMs} ms`,
    );
  else
    console.log(
      `  tempauth skipped: ${!selected.has('tempauth') ? 'not in BENCH_SCENARIOS' : !SETTINGS.tempauth ? 'BENCH_TEMPAUTH=0' : `${SWIFT_PROXY} is not installed`}`,
    );

  // Timed once everything is up and idle (Swift's start-up would otherwise share the cores).
  const kdf = parsePasswordHash(setup.passwordHash)!.params;
  if (JSON.stringify(kdf) !== JSON.stringify(DEFAULT_SCRYPT_PARAMS))
    throw new Error(`hash parameters ${JSON.stringify(kdf)} are not the defaults`);
  const kdfAloneMs = await kdfMs(setup.passwordHash);
  const kdfText = `scrypt N=2^${kdf.logN}, r=${kdf.r}, p=${kdf.p} (${(128 * 2 ** kdf.logN * kdf.r) / 2 ** 20} MiB)`;
  console.log(
    `  ${kdfText}: one check alone takes ${fmtMs(kdfAloneMs)} ms here (median of 5, in this process, before the load)`,
  );

  const target = (child: Child) => ({ port: child.port, server: party.pid('server', child.proc.pid!) });
  const gw = target(gateway);
  const KDF_TIMEOUT_SECONDS = 120;

  // Right before a warm scenario: a new generation (as a password change makes) and one login, so
  // the verification cache holds a fresh entry for the whole warm-up + measurement.
  const v1Warm: Scenario = {
    key: 'v1',
    label: 'V1 auth, warm cache',
    target: gw,
    request: () => v1Request(USER, PASSWORD),
    expectStatus: 200,
  };
  const warmCacheBy = (login: Scenario) => async () => {
    await db('storage_users').where({ cluster_id: setup.clusterId, username: USER }).increment('generation', 1);
    await checkOnce(login, needHeader('x-auth-token'));
  };
  const warmCache = warmCacheBy(v1Warm);
  v1Warm.prepare = warmCache;
  // The same login on the gateway with its request log on, and the bare handler answering what it
  // answered (started once a real login has given the headers).
  const v1Logged: Scenario | undefined = logged && {
    key: 'v1logged',
    label: 'V1 auth, warm cache, request log on',
    target: target(logged),
    request: () => v1Request(USER, PASSWORD),
    expectStatus: 200,
  };
  let v1Anchor: Scenario | undefined;
  let v1Stack: Scenario | undefined;
  let v1Rounds: Scenario | undefined;
  let v1Shared: Scenario | undefined;
  let v1Fenced: Scenario | undefined;
  if (v1Logged) {
    v1Logged.prepare = warmCacheBy(v1Logged);
    const answered = await checkOnce(v1Logged, needHeader('x-auth-token'));
    const copied = Object.fromEntries(
      ['X-Storage-Url', 'X-Auth-Token', 'X-Storage-Token', 'X-Auth-Token-Expires'].map((h) => [
        h,
        answered.headers.get(h) ?? '',
      ]),
    );
    const anchor = await start(V1_ANCHOR_ROLE, profArgs, {
      ...childEnv,
      BENCH_CHILD_V1_HEADERS: JSON.stringify(copied),
    });
    const v1Login = (key: ScenarioKey, label: string, child: Child): Scenario => ({
      key,
      label,
      target: target(child),
      request: () => v1Request(USER, PASSWORD),
      expectStatus: 200,
    });
    v1Anchor = v1Login('v1anchor', 'bare express, the same V1 answer, request log on', anchor);
    if (STACK_KEYS.some((k) => selected.has(k))) {
      const rounds = await redisRoundTripsOf(redis, () => checkOnce(v1Logged, needHeader('x-auth-token')));
      console.log(
        `  a warm V1 login sent ${rounds.flat().length} Redis commands in ${rounds.length} round trips: ` +
          rounds.map((r) => r.map((c) => c[0]).join(' + ')).join(', then '),
      );
      const env = {
        ...childEnv,
        BENCH_CHILD_V1_HEADERS: JSON.stringify(copied),
        BENCH_CHILD_V1_REDIS: JSON.stringify(rounds),
      };
      if (selected.has('v1stack'))
        v1Stack = v1Login(
          'v1stack',
          'the same, plus its Redis commands in one round trip',
          await start(V1_STACK_ROLE, profArgs, env),
        );
      if (selected.has('v1rounds'))
        v1Rounds = v1Login(
          'v1rounds',
          "the same, plus its Redis commands in the login's round trips",
          await start(V1_ROUNDS_ROLE, profArgs, env),
        );
      if (selected.has('v1shared'))
        v1Shared = v1Login(
          'v1shared',
          "the same, its round trips after the first shared by requests at once, as the login's are",
          await start(V1_SHARED_ROLE, profArgs, env),
        );
      if (selected.has('v1fenced'))
        v1Fenced = v1Login(
          'v1fenced',
          "the same, plus the change feed's fence beside its first round trip, shared as the login's is",
          await start(V1_FENCED_ROLE, profArgs, env),
        );
    }
  }

  const nextWrong = rotation('bench-wrong-');
  const nextCold = rotation('bench-cold-');
  const nextWarm = rotation('bench-warm-');
  // Each warm user logged in once right before (a scrypt each, four at a time), so that its
  // check is in the verification cache for the whole warm-up and measurement.
  const v1Many: Scenario = {
    key: 'v1many',
    label: 'V1 auth, warm cache, users in turn',
    target: gw,
    request: () => v1Request(nextWarm(), PASSWORD),
    expectStatus: 200,
    prepare: async () => {
      const names = Array.from({ length: ROTATED['bench-warm-'] }, (_, i) => rotatedUser('bench-warm-', i + 1));
      for (let i = 0; i < names.length; i += 4)
        await Promise.all(
          names
            .slice(i, i + 4)
            .map((name) =>
              checkOnce({ ...v1Many, request: () => v1Request(name, PASSWORD) }, needHeader('x-auth-token')),
            ),
        );
    },
  };
  const scenarios: Record<'baseline' | ScenarioKey, Scenario | undefined> = {
    baseline: {
      key: 'baseline',
      label: 'express hello world',
      target: target(baseline),
      request: () => ({ path: '/' }),
      expectStatus: 200,
    },
    v1: v1Warm,
    v1logged: v1Logged,
    v1anchor: v1Anchor,
    v1stack: v1Stack,
    v1rounds: v1Rounds,
    v1shared: v1Shared,
    v1fenced: v1Fenced,
    v1many: v1Many,
    tempauth: swift
      ? {
          key: 'tempauth',
          label: 'tempauth V1 auth (Swift)',
          target: { port: swift.ports.proxy, server: party.group('server', swift.pids()['proxy-server']!) },
          request: () => v1Request(`${TEMPAUTH_ACCOUNT}:${TEMPAUTH_USER}`, PASSWORD),
          expectStatus: 200,
        }
      : undefined,
    issue: {
      key: 'issue',
      label: 'V3 token issue',
      target: gw,
      request: v3IssueRequest(USER),
      expectStatus: 201,
      prepare: warmCache,
    },
    appcred: {
      key: 'appcred',
      label: 'V3 token issue, application credential',
      target: gw,
      request: appCredIssueRequest(setup.appcred.id, setup.appcred.secret),
      expectStatus: 201,
    },
    validate: undefined, // needs two tokens: below
    s3tokens: undefined, // needs the service token: below
    wrong: {
      key: 'wrong',
      label: 'V1 wrong password',
      target: gw,
      request: () => v1Request(nextWrong(), WRONG_PASSWORD),
      expectStatus: 401,
      timeoutSeconds: KDF_TIMEOUT_SECONDS,
      drain: true,
    },
    cold: cold
      ? {
          key: 'cold',
          label: 'V1 auth, cold (scrypt each)',
          target: target(cold),
          request: () => v1Request(nextCold(), PASSWORD),
          expectStatus: 200,
          timeoutSeconds: KDF_TIMEOUT_SECONDS,
          drain: true,
        }
      : undefined,
  };

  // One answer of each scenario, checked before any load.
  await checkOnce(scenarios.baseline!, (r) =>
    (JSON.parse(r.text) as { hello?: string }).hello === 'world' ? null : 'unexpected body',
  );
  await checkOnce(
    v1Warm,
    (r) =>
      needHeader('x-auth-token')(r) ??
      (r.headers.get('x-storage-url')?.endsWith(`/AUTH_${USER}`) ? null : 'unexpected X-Storage-Url'),
  );
  if (scenarios.tempauth) await checkOnce(scenarios.tempauth, needHeader('x-auth-token'));
  if (v1Anchor) await checkOnce(v1Anchor, needHeader('x-auth-token'));
  await issueToken(scenarios.issue!, USER);
  await issueToken(scenarios.appcred!, USER);
  const subjectToken = await issueToken({ ...scenarios.issue!, request: v3IssueRequest(SUBJECT) }, SUBJECT);
  const serviceToken = await issueToken({ ...scenarios.issue!, request: v3IssueRequest(SERVICE) }, SERVICE);
  scenarios.validate = {
    key: 'validate',
    label: 'V3 token validate',
    target: gw,
    request: () => ({
      path: '/auth/v3/auth/tokens',
      headers: { 'x-auth-token': serviceToken, 'x-subject-token': subjectToken },
    }),
    expectStatus: 200,
  };
  await checkOnce(scenarios.validate, (r) =>
    (JSON.parse(r.text) as { token?: { user?: { name?: string } } }).token?.user?.name === SUBJECT
      ? null
      : 'wrong subject',
  );
  const s3Body = s3tokensBody(setup.s3.access, setup.s3.secret);
  scenarios.s3tokens = {
    key: 's3tokens',
    label: 's3tokens (V4)',
    target: gw,
    request: () => ({
      path: '/auth/v3/s3tokens',
      method: 'POST' as const,
      headers: { 'content-type': 'application/json', 'x-auth-token': serviceToken },
      body: s3Body,
    }),
    expectStatus: 200,
  };
  await checkOnce(scenarios.s3tokens, (r) => {
    const doc = JSON.parse(r.text) as { token?: { user?: { name?: string }; methods?: string[] } };
    if (doc.token?.user?.name !== SUBJECT || doc.token.methods?.[0] !== 'ec2credential')
      return `unexpected s3tokens answer ${r.text.slice(0, 300)}`;
    return r.headers.get('x-subject-token') ? 'an s3tokens answer carried X-Subject-Token' : null;
  });
  await checkOnce(scenarios.wrong!, (r) =>
    r.headers.get('www-authenticate') ? null : 'no WWW-Authenticate on the 401',
  );
  if (scenarios.cold) await checkOnce(scenarios.cold, needHeader('x-auth-token'));
  console.log('sanity checks passed (200 / 201 / 401 as expected, tokens in the answers)');

  console.log('load (autocannon in this process; each server in its own process):');
  const parties: Party[] = [party.comm('redis', 'redis-server'), party.comm('postgres', 'postgres')];
  if (swift) parties.push(party.comm('memcached', 'memcached'));
  parties.push(party.self('loadgen'));
  const { connections, warmup, duration } = SETTINGS;
  const settings: LoadSettings = { connections, warmup, duration, parties };
  const order: ScenarioKey[] = [...ALL_SCENARIOS];
  // Warm-up and measurement on the same connections for every scenario (the baseline too): a
  // scrypt-bound scenario would otherwise start measuring behind a queue of abandoned warm-up requests.
  const continuous = (s: Scenario): Scenario => ({ ...s, continuous: true });
  const toRun = order
    .filter((k) => selected.has(k))
    .map((k) => scenarios[k])
    .filter((s): s is Scenario => s !== undefined);
  const run = await measureBracketed(continuous(scenarios.baseline!), toRun.map(continuous), settings);
  // The warm V1 login, its bare handler and the stacks between them, in turn (measureInTurn).
  const inTurnKeys = (['v1logged', 'v1anchor', ...STACK_KEYS] as const).filter((k) => scenarios[k]);
  const inTurn =
    SETTINGS.pairedRounds > 0 && scenarios.v1logged && scenarios.v1anchor
      ? inTurnKeys.map((k) => continuous(scenarios[k]!))
      : [];
  if (inTurn.length > 0)
    console.log(`${inTurn.map((s) => s.key).join(', ')} in turn, ${SETTINGS.pairedRounds} rounds:`);
  const turns =
    inTurn.length > 0
      ? await measureInTurn(inTurn, SETTINGS.pairedRounds, { ...settings, warmup: 1, duration: SETTINGS.pairedSeconds })
      : [];
  // Each round's bare handler CPU per request over the other's: how fast each is against it when
  // both are bound by the CPU of their process, as here (32 connections, one core each).
  const againstBare = (key: (typeof inTurnKeys)[number]) => {
    const i = inTurnKeys.indexOf(key);
    const bare = inTurnKeys.indexOf('v1anchor');
    return turns
      .map((round) => [serverMsPerRequest(round[i]!), serverMsPerRequest(round[bare]!)])
      .filter((r): r is [number, number] => r[0] !== undefined && r[1] !== undefined)
      .map(([ms, bareMs]) => bareMs / ms);
  };
  const loginRatios = turns.length > 0 ? againstBare('v1logged') : [];
  const loginMedian = loginRatios.length > 0 ? median(loginRatios) : undefined;
  const footprint = await redisFootprint(redis, prefix);

  // ---- verdicts ------------------------------------------------------------------------------
  const got = (key: ScenarioKey) => run.byKey.get(key);
  const v1 = got('v1');
  const tempauth = got('tempauth');
  const vsTempauth = v1 && tempauth ? ratio(v1) / ratio(tempauth) : undefined;
  const p99 = (m: Measured) => verdict(`p99 <= ${TARGETS.p99Ms} ms`, m.p99 <= TARGETS.p99Ms);
  const pct = (n: number) => `${n * 100} %`;
  const verdicts = new Map<string, Verdict[]>();
  if (v1) {
    const vs = [verdict(`>= ${pct(TARGETS.v1Ratio)} of baseline`, ratio(v1) >= TARGETS.v1Ratio), p99(v1)];
    if (vsTempauth !== undefined)
      vs.push(verdict(`>= ${TARGETS.v1VsTempauth}x tempauth`, vsTempauth >= TARGETS.v1VsTempauth));
    verdicts.set('v1', vs);
  }
  const v1logged = got('v1logged');
  const v1anchor = got('v1anchor');
  const vsAnchor = v1logged && v1anchor ? ratio(v1logged) / ratio(v1anchor) : undefined;
  if (v1logged) {
    const vs = [p99(v1logged)];
    // The rounds in turn decide when they ran: the bracketed figure swings with the machine's drift.
    const againstAnchor = loginMedian ?? vsAnchor;
    if (againstAnchor !== undefined)
      vs.unshift(
        verdict(
          `>= ${pct(TARGETS.v1VsAnchor)} of the bare handler${loginMedian !== undefined ? ' (rounds in turn)' : ''}`,
          againstAnchor >= TARGETS.v1VsAnchor,
        ),
      );
    verdicts.set('v1logged', vs);
  }
  const issue = got('issue');
  if (issue)
    verdicts.set('issue', [
      verdict(`>= ${pct(TARGETS.issueRatio)} of baseline`, ratio(issue) >= TARGETS.issueRatio),
      p99(issue),
    ]);
  const appcred = got('appcred');
  const appcredVsIssue = appcred && issue ? ratio(appcred) / ratio(issue) : undefined;
  if (appcred) {
    const vs = [p99(appcred)];
    if (appcredVsIssue !== undefined)
      vs.unshift(
        verdict(`>= ${pct(TARGETS.appcredVsIssue)} of password V3 issue`, appcredVsIssue >= TARGETS.appcredVsIssue),
      );
    verdicts.set('appcred', vs);
  }
  const validate = got('validate');
  if (validate)
    verdicts.set('validate', [
      verdict(`>= ${pct(TARGETS.validateRatio)} of baseline`, ratio(validate) >= TARGETS.validateRatio),
      p99(validate),
    ]);
  const s3tokens = got('s3tokens');
  const s3VsValidate = s3tokens && validate ? ratio(s3tokens) / ratio(validate) : undefined;
  if (s3tokens) {
    const vs = [p99(s3tokens)];
    if (s3VsValidate !== undefined)
      vs.unshift(verdict(`>= ${pct(TARGETS.s3VsValidate)} of V3 validate`, s3VsValidate >= TARGETS.s3VsValidate));
    verdicts.set('s3tokens', vs);
  }

  // ---- report --------------------------------------------------------------------------------
  // Three decimals: a change of a tenth to the login's CPU is 0.02 ms.
  const serverMs = (m: Measured) => serverMsPerRequest(m)?.toFixed(3);
  const notes: string[] = [];
  if (v1 && tempauth && vsTempauth !== undefined) {
    notes.push(
      `V1 auth vs tempauth: ${vsTempauth.toFixed(2)}x (each as a fraction of its own surrounding baselines; raw req/s ${(v1.rps / tempauth.rps).toFixed(2)}x).`,
    );
  }
  if (vsAnchor !== undefined) {
    notes.push(
      `V1 auth with its request log vs the bare handler with the same answer and request log: ${vsAnchor.toFixed(2)}x (each as a fraction of its own surrounding baselines; raw req/s ${(v1logged!.rps / v1anchor!.rps).toFixed(2)}x).`,
    );
  }
  if (turns.length > 0) {
    const ms = (i: number) => turns.map((round) => serverMs(round[i]!) ?? '-').join(', ');
    const lines = inTurn.map((s, i) => {
      const key = inTurnKeys[i]!;
      const ratios = key === 'v1anchor' ? [] : key === 'v1logged' ? loginRatios : againstBare(key);
      const vsBare = ratios.length
        ? `; bare / it per round ${ratios.map((r) => r.toFixed(2)).join(', ')}: median ${median(ratios).toFixed(2)}x` +
          (key === 'v1logged' ? ' (the verdict)' : '')
        : '';
      return `  ${s.label}: server CPU ms per request ${ms(i)}${vsBare}.`;
    });
    notes.push(
      `In turn (${turns.length} rounds of ${SETTINGS.pairedSeconds} s each after a 1 s warm-up):\n${lines.join('\n')}`,
    );
  }
  // Each stack against the bare handler, and the login against the stack.
  for (const [key, what] of [
    ['v1stack', "The warm V1 login's stack alone (the bare handler plus the login's Redis commands in one round trip)"],
    ['v1rounds', "The stack in the login's round trips (the same commands, each round trip awaited before the next)"],
    ['v1shared', 'The stack with its later round trips shared as the login shares them'],
    ['v1fenced', "The shared stack plus the change feed's fence"],
  ] as const) {
    const stack = got(key);
    if (!stack || !v1anchor) continue;
    notes.push(
      `${what} vs the bare handler: ${(ratio(stack) / ratio(v1anchor)).toFixed(2)}x` +
        (v1logged ? `; V1 auth with its request log at ${(ratio(v1logged) / ratio(stack)).toFixed(2)}x of it.` : '.'),
    );
  }
  const v1many = got('v1many');
  if (v1 && v1many) {
    notes.push(
      `V1 auth over ${fmtInt(ROTATED['bench-warm-'])} users in turn vs one user: ${(ratio(v1many) / ratio(v1)).toFixed(2)}x (each as a fraction of its own surrounding baselines; raw req/s ${(v1many.rps / v1.rps).toFixed(2)}x).`,
    );
  }
  if (appcredVsIssue !== undefined) {
    notes.push(
      `Application credential vs password V3 issue: ${appcredVsIssue.toFixed(2)}x (each as a fraction of its own surrounding baselines; raw req/s ${(appcred!.rps / issue!.rps).toFixed(2)}x).`,
    );
  }
  if (s3VsValidate !== undefined) {
    notes.push(
      `s3tokens vs V3 validate: ${s3VsValidate.toFixed(2)}x (each as a fraction of its own surrounding baselines; raw req/s ${(s3tokens!.rps / validate!.rps).toFixed(2)}x).`,
    );
  }
  if (swift) {
    const lines = swift
      .logs()
      .split('\n')
      .filter((l) => l.includes(' udp: ')).length;
    notes.push(
      `Swift's servers sent ${fmtInt(lines)} log lines over the whole run (log level WARNING: no access log line per request).`,
    );
  } else
    notes.push(
      `tempauth was skipped (${swiftInstalled ? 'by request' : `${SWIFT_PROXY} is not installed`}): no verdict against it.`,
    );
  for (const key of ['wrong', 'cold'] as const) {
    const m = got(key);
    if (m) {
      notes.push(
        `${m.scenario.label}: ${kdfText} per request; ${fmtInt(m.requests)} requests measured, gateway CPU ${serverMs(m) ?? '-'} ms per request ` +
          `(one check alone: ${fmtMs(kdfAloneMs)} ms).`,
      );
    }
  }
  notes.push(
    `Warm scenarios: the verification cache was filled by one login right before each warm-up (entry valid ${verifyCacheSeconds} s).`,
  );
  notes.push(footprint);
  if (SETTINGS.connections !== TARGETS.connections) {
    notes.push(
      `The targets are defined at ${TARGETS.connections} connections; with ${SETTINGS.connections} these verdicts are only indicative.`,
    );
  }
  printResults({
    title: `\nResults (${started.toISOString()}; ${SETTINGS.connections} connections, ${SETTINGS.duration} s each)`,
    ...run,
    verdicts,
    extraColumns: [{ header: 'server CPU ms/req', cell: serverMs }],
    notes,
  });
}

runBenchmark({ serve, main });
