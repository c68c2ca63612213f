/**
 * Token flood (part of `pnpm bench:hostile`): one user with a right password logs in from 64
 * connections at once for BENCH_HOSTILE_TOKEN_SECONDS (default 20) per flood, on the gateway on
 * Redis and on a gateway with the in-process store (no REDIS_URL). Two floods each: V1 logins
 * (handed the user's live token again, as tempauth does) and V3 logins (a new token each, bounded by
 * CAIRN_TOKENS_PER_USER). Reported: tokens handed out and kept (still valid afterwards), the token
 * store's size and memory, and idle login latency (another user, one login at a time) before and
 * after. It fails when more tokens are kept than the cap allows, when any login fails, or when
 * idle logins got markedly slower (p50 over 3 times, and 10 ms above, what it was).
 *
 *   BENCH_HOSTILE_TOKEN_SECONDS   seconds of each flood (default 20; 0 skips the token flood)
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import type { ChildProcess } from 'node:child_process';
import { closeRedis, createLogger, createRedis, type RedisClient } from '@cairn/auth-gateway';
import { startChild, stopChild, type Child } from './children';
import { intEnv } from './env';
import { serveGateway } from './gateway-child';
import { percentile } from './load';
import type { Cleanups } from './main';
import { fmtInt, fmtMs, table } from './report';

/** The in-process store's gateway, forked from the benchmark's own file. */
export const TOKEN_FLOOD_GATEWAY_ROLE = 'hostile-token-gateway';
const FLOOD_CONNECTIONS = 64;
const IDLE_LOGINS = 200;
/** CAIRN_TOKENS_PER_USER's default, which both gateways run with. */
const CAP = 1000;
const PASSWORD = `flood-password-${randomBytes(9).toString('base64url')}`;

/** In the child: a gateway on the run's database with no Redis (tokens in process memory). */
export function serveTokenFloodGateway(): Promise<void> {
  return serveGateway('default', { DATABASE_URL: process.env.BENCH_HOSTILE_DATABASE_URL!, LOG_LEVEL: 'silent' });
}

export interface TokenFloodSettings {
  script: string;
  apiUrl: string;
  adminAuth: string;
  databaseUrl: string;
  redisUrl: string;
  /** The gateway on Redis that the hostile load ran against. */
  redisGateway: Child;
}

interface Gateway {
  name: string;
  url: string;
  pid: number;
  /** Token records and memory of the store: Redis keys of this cluster and used_memory, or the process's RSS. */
  storeSize: () => Promise<{ records: number | null; memoryMb: number }>;
}

interface Flood {
  logins: number;
  failed: number;
  handedOut: number;
  kept: number;
  p50: number;
  p99: number;
}

interface Idle {
  p50: number;
  p99: number;
}

const rssMb = (pid: number): number =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

async function json(
  url: string,
  init: RequestInit = {},
): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> {
  const res = await fetch(url, { ...init, headers: { 'Content-Type': 'application/json', ...init.headers } });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {}, headers: res.headers };
}

const v3Body = (user: string) =>
  JSON.stringify({
    auth: {
      identity: {
        methods: ['password'],
        password: { user: { name: user, domain: { id: 'default' }, password: PASSWORD } },
      },
    },
  });

/**
 * Requests from a loopback address of the flood's own (every 127.x.y.z is this machine): the
 * hostile load before it has used up 127.0.0.1's failed-login allowance at the gateway, and the
 * flood is about successful logins.
 */
const agent = new Agent({ keepAlive: true, localAddress: '127.0.0.77' });

function get(
  url: string,
  init: { method?: string; headers: Record<string, string>; body?: string },
): Promise<{ status: number; headers: IncomingHttpHeaders }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        path: `${u.pathname}${u.search}`,
        method: init.method ?? 'GET',
        headers: init.headers,
        agent,
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(init.body);
  });
}

/** One login; the token handed out, or null with the status. */
async function login(url: string, api: 'v1' | 'v3', user: string): Promise<{ token: string | null; status: number }> {
  const res =
    api === 'v1'
      ? await get(`${url}/auth/v1.0`, { headers: { 'X-Auth-User': user, 'X-Auth-Key': PASSWORD } })
      : await get(`${url}/auth/v3/auth/tokens`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: v3Body(user),
        });
  const token = res.headers[api === 'v1' ? 'x-auth-token' : 'x-subject-token'];
  return { token: res.status < 300 && typeof token === 'string' ? token : null, status: res.status };
}

async function idleLatency(url: string, api: 'v1' | 'v3', user: string): Promise<Idle> {
  const ms: number[] = [];
  for (let i = 0; i < IDLE_LOGINS; i++) {
    const started = performance.now();
    const { token, status } = await login(url, api, user);
    if (!token) throw new Error(`idle ${api} login of ${user}: ${status}`);
    ms.push(performance.now() - started);
  }
  ms.sort((a, b) => a - b);
  return { p50: percentile(ms, 50), p99: percentile(ms, 99) };
}

async function flood(
  url: string,
  api: 'v1' | 'v3',
  user: string,
  seconds: number,
  serviceToken: string,
): Promise<Flood> {
  const deadline = performance.now() + seconds * 1000;
  const ms: number[] = [];
  const tokens = new Set<string>();
  let failed = 0;
  await Promise.all(
    Array.from({ length: FLOOD_CONNECTIONS }, async () => {
      while (performance.now() < deadline) {
        const started = performance.now();
        const { token } = await login(url, api, user).catch(() => ({ token: null }));
        ms.push(performance.now() - started);
        if (token) tokens.add(token);
        else failed++;
      }
    }),
  );
  // Kept: handed out and still valid now, as a Swift proxy would find it.
  const handed = [...tokens];
  let kept = 0;
  for (let i = 0; i < handed.length; i += FLOOD_CONNECTIONS) {
    const answers = await Promise.all(
      handed.slice(i, i + FLOOD_CONNECTIONS).map(async (t) => {
        const res = await get(`${url}/auth/v3/auth/tokens?nocatalog`, {
          headers: { 'X-Auth-Token': serviceToken, 'X-Subject-Token': t },
        });
        return res.status === 200;
      }),
    );
    kept += answers.filter(Boolean).length;
  }
  ms.sort((a, b) => a - b);
  return { logins: ms.length, failed, handedOut: tokens.size, kept, p50: percentile(ms, 50), p99: percentile(ms, 99) };
}

/** The run's token records in Redis: how many, and the bytes Redis holds for them (MEMORY USAGE). */
async function redisSize(redis: RedisClient, prefix: string): Promise<{ records: number | null; memoryMb: number }> {
  let records = 0;
  let bytes = 0;
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    const sizes = await Promise.all(keys.map((k) => redis.memory('USAGE', k)));
    records += keys.filter((k) => k.startsWith(`${prefix}tok:`)).length;
    bytes += sizes.reduce<number>((sum, b) => sum + Number(b ?? 0), 0);
    cursor = next;
  } while (cursor !== '0');
  return { records, memoryMb: bytes / 1024 / 1024 };
}

/** Runs the token flood on both stores and prints its report; true when a check failed. */
export async function runTokenFlood(s: TokenFloodSettings, cleanups: Cleanups): Promise<boolean> {
  const seconds = intEnv('BENCH_HOSTILE_TOKEN_SECONDS', 20, 0);
  if (seconds === 0) return false;
  console.log(
    `\ntoken flood: ${FLOOD_CONNECTIONS} connections logging in one user for ${seconds} s per flood (V1, then V3), on Redis and on the in-process store`,
  );
  const api = (path: string, body: unknown) =>
    json(`${s.apiUrl}${path}`, { method: 'POST', headers: { Authorization: s.adminAuth }, body: JSON.stringify(body) });
  const suffix = randomBytes(4).toString('hex');
  const users = { flood: `flood-${suffix}`, idle: `idle-${suffix}`, service: `flood-svc-${suffix}` };
  for (const [name, extra] of [
    [users.flood, {}],
    [users.idle, {}],
    [users.service, { is_superuser: true }],
  ] as const) {
    const created = await api('/api/v1/users/', {
      cluster: '/api/v1/clusters/1/',
      user: name,
      password: PASSWORD,
      ...extra,
    });
    if (created.status !== 201) throw new Error(`token flood: creating ${name}: ${created.status}`);
  }
  const cluster = await json(`${s.apiUrl}/api/v1/clusters/1/`, { headers: { Authorization: s.adminAuth } });
  const redis = createRedis(s.redisUrl, createLogger('silent'));
  cleanups.push(() => closeRedis(redis));
  cleanups.push(async () => agent.destroy());
  const memoryChild = await startChild(s.script, TOKEN_FLOOD_GATEWAY_ROLE, {
    ...process.env,
    BENCH_HOSTILE_DATABASE_URL: s.databaseUrl,
  });
  cleanups.push(() => stopChild(memoryChild));
  const pidOf = (c: Child) => (c.proc as ChildProcess).pid!;
  const gateways: Gateway[] = [
    {
      name: 'Redis',
      url: `http://127.0.0.1:${s.redisGateway.port}`,
      pid: pidOf(s.redisGateway),
      storeSize: () => redisSize(redis, `cairn:${String(cluster.body.uuid)}:`),
    },
    {
      name: 'in-process',
      url: `http://127.0.0.1:${memoryChild.port}`,
      pid: pidOf(memoryChild),
      storeSize: async () => ({ records: null, memoryMb: rssMb(pidOf(memoryChild)) }),
    },
  ];

  const rows: string[][] = [];
  const problems: string[] = [];
  for (const g of gateways) {
    const serviceToken = (await login(g.url, 'v3', users.service)).token!;
    const sizeBefore = await g.storeSize();
    const rssBefore = rssMb(g.pid);
    const idleBefore = {
      v1: await idleLatency(g.url, 'v1', users.idle),
      v3: await idleLatency(g.url, 'v3', users.idle),
    };
    const floods = {
      v1: await flood(g.url, 'v1', users.flood, seconds, serviceToken),
      v3: await flood(g.url, 'v3', users.flood, seconds, serviceToken),
    };
    const idleAfter = {
      v1: await idleLatency(g.url, 'v1', users.idle),
      v3: await idleLatency(g.url, 'v3', users.idle),
    };
    const sizeAfter = await g.storeSize();
    const rssAfter = rssMb(g.pid);
    for (const api of ['v1', 'v3'] as const) {
      const f = floods[api];
      rows.push([
        g.name,
        api.toUpperCase(),
        fmtInt(f.logins),
        fmtInt(f.failed),
        fmtInt(f.handedOut),
        fmtInt(f.kept),
        `${fmtMs(f.p50)} / ${fmtMs(f.p99)}`,
        `${fmtMs(idleBefore[api].p50)} / ${fmtMs(idleBefore[api].p99)}`,
        `${fmtMs(idleAfter[api].p50)} / ${fmtMs(idleAfter[api].p99)}`,
      ]);
      if (f.failed > 0) problems.push(`${g.name} ${api}: ${f.failed} logins failed during the flood`);
      if (f.kept > CAP) problems.push(`${g.name} ${api}: ${f.kept} tokens kept, more than the cap of ${CAP}`);
      // Coarse on purpose (a shared machine's noise is several ms): a store that slows with its size
      // made every login take tens of milliseconds to seconds.
      if (idleAfter[api].p50 > Math.max(3 * idleBefore[api].p50, idleBefore[api].p50 + 10)) {
        problems.push(
          `${g.name} ${api}: idle logins slowed from p50 ${fmtMs(idleBefore[api].p50)} ms to ${fmtMs(idleAfter[api].p50)} ms`,
        );
      }
    }
    const records = (n: number | null) => (n === null ? '' : `, token records ${fmtInt(n)}`);
    console.log(
      `${g.name}: gateway RSS ${rssBefore.toFixed(0)} → ${rssAfter.toFixed(0)} MB` +
        (sizeBefore.records === null
          ? ''
          : `; the run's keys in Redis ${sizeBefore.memoryMb.toFixed(2)} → ${sizeAfter.memoryMb.toFixed(2)} MB${records(sizeBefore.records)} → ${fmtInt(sizeAfter.records ?? 0)}`),
    );
  }
  console.log(
    table(
      [
        'store',
        'flood',
        'logins',
        'failed',
        'tokens handed out',
        'kept (valid after)',
        'flood login ms p50 / p99',
        'idle login ms p50 / p99 before',
        'after',
      ],
      rows,
    ),
  );
  for (const p of problems) console.log(`  FAIL ${p}`);
  console.log(
    problems.length
      ? 'token flood: FAILED'
      : `token flood: passed (kept ≤ ${CAP} per user, no failed login, idle logins as fast after as before)`,
  );
  return problems.length > 0;
}
