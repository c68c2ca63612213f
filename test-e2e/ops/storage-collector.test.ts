/**
 * The storage collector's failure handling, against a small HTTP server standing in for the
 * cluster's auth gateway and Swift proxy (each account answers as its name says) and the real
 * management API on Postgres, where the collector posts its samples.
 */
import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { collectStorageOnce, type StorageCollectOptions } from '../../packages/cli/src/utilization/collect';
import type { CollectorConfig } from '../../packages/cli/src/config';
import { cairn, nodeCommand, REPO_ROOT } from '../support/processes';
import { ADMIN_AUTH, ADMIN_AUTH_NAME, ADMIN_KEY, startStack, type Stack } from '../support/stack';

const HOUR = 3_600_000;
const USER = 'metering';
const PASSWORD = 'metering-password-0123';

/** What the stand-in has seen and how it behaves; reset before each test. */
interface FakeState {
  /** Every account answers 200 (no failures, no unknown policy). */
  healthy: boolean;
  /** Every account HEAD answers 503. */
  allDown: boolean;
  /** The first token issued is refused (401) once this many HEADs have used it. */
  firstTokenLife: number;
  /** Milliseconds each HEAD takes. */
  delayMs: number;
  logins: number;
  heads: Map<string, number>;
  unauthorized: number;
  inFlight: number;
  maxInFlight: number;
  tokens: Map<string, number>;
}

const fresh = (): FakeState => ({
  healthy: false,
  allDown: false,
  firstTokenLife: Infinity,
  delayMs: 0,
  logins: 0,
  heads: new Map(),
  unauthorized: 0,
  inFlight: 0,
  maxInFlight: 0,
  tokens: new Map(),
});

/** An account's stats by name: AUTH_ok3 holds 3000 bytes, 1000 in gold and 2000 in silver. */
const statsOf = (account: string) => {
  const n = Number(/(\d+)$/.exec(account)?.[1] ?? 1);
  return { gold: 1000 * n, silver: 2000 * n };
};

function fakeSwift(state: () => FakeState): Server {
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const s = state();
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/auth/v1.0') {
      if (req.headers['x-auth-user'] !== USER || req.headers['x-auth-key'] !== PASSWORD)
        return res.writeHead(401).end();
      s.logins++;
      const token = `tok-${s.logins}`;
      s.tokens.set(token, 0);
      return res.writeHead(200, { 'X-Auth-Token': token, 'X-Storage-Url': 'unused' }).end();
    }
    const account = decodeURIComponent(url.pathname.replace(/^\/v1\//, ''));
    if (req.method !== 'HEAD' || !account.startsWith('AUTH_')) return res.writeHead(400).end();
    s.heads.set(account, (s.heads.get(account) ?? 0) + 1);
    s.inFlight++;
    s.maxInFlight = Math.max(s.maxInFlight, s.inFlight);
    try {
      if (s.delayMs) await new Promise((r) => setTimeout(r, s.delayMs));
      const token = String(req.headers['x-auth-token'] ?? '');
      const used = s.tokens.get(token);
      if (used === undefined || (token === 'tok-1' && used >= s.firstTokenLife)) {
        s.unauthorized++;
        return res.writeHead(401).end();
      }
      s.tokens.set(token, used + 1);
      const attempt = s.heads.get(account)!;
      if (s.allDown) return res.writeHead(503).end();
      if (!s.healthy) {
        if (account === 'AUTH_never') return res.writeHead(404).end();
        if (account === 'AUTH_down') return res.writeHead(503).end();
        if (account === 'AUTH_flaky' && attempt <= 2) return res.writeHead(500).end();
        // Never answers within the collector's timeout.
        if (account === 'AUTH_slow')
          return await new Promise((r) => setTimeout(r, 2000)).then(() => res.writeHead(204).end());
      }
      const { gold, silver } = statsOf(account);
      const headers: Record<string, string> = {
        'X-Account-Bytes-Used': String(gold + silver),
        'X-Account-Object-Count': String((gold + silver) / 100),
        'X-Account-Container-Count': '2',
        // Swift title-cases policy names in these headers.
        'X-Account-Storage-Policy-Gold-Bytes-Used': String(gold),
        'X-Account-Storage-Policy-Gold-Object-Count': String(gold / 100),
        'X-Account-Storage-Policy-Gold-Container-Count': '1',
        'X-Account-Storage-Policy-Silver-Bytes-Used': String(silver),
        'X-Account-Storage-Policy-Silver-Object-Count': String(silver / 100),
        'X-Account-Storage-Policy-Silver-Container-Count': '1',
      };
      // A policy added to swift.conf since the capacity collector last reported the cluster's.
      if (account === 'AUTH_platinum') headers['X-Account-Storage-Policy-Platinum-Bytes-Used'] = '5';
      return res.writeHead(204, headers).end();
    } finally {
      s.inFlight--;
    }
  };
  return createServer((req, res) => void handle(req, res).catch(() => res.destroy()));
}

describe('storage collector against a stand-in Swift', () => {
  let stack: Stack;
  let server: Server;
  let state = fresh();
  let fakeUrl = '';
  const bulk = Array.from({ length: 24 }, (_, i) => `bulk${i + 1}`);
  const problems = ['never', 'down', 'flaky', 'slow', 'platinum'];
  // Usernames may hold spaces: 'ok 3' owns the Swift account 'AUTH_ok 3'.
  const healthy = ['ok1', 'ok2', 'ok 3'];

  const config = (extra: Partial<CollectorConfig> = {}): CollectorConfig =>
    ({
      apiUrl: stack.apiUrl,
      apiKey: `${ADMIN_AUTH_NAME}:${ADMIN_KEY}`,
      utilizationUser: USER,
      utilizationPassword: PASSWORD,
      utilizationAuthUrl: `${fakeUrl}/auth`,
      utilizationStorageUrl: `${fakeUrl}/v1`,
      utilizationConcurrency: 4,
      utilizationTimeoutMs: 300,
      utilizationRetries: 2,
      ...extra,
    }) as CollectorConfig;

  /** `cairn utilization collect` as a process, configured like `config()` through its environment. */
  const env = (extra: Record<string, string> = {}): Record<string, string> => ({
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    XDG_CONFIG_HOME: '/nonexistent',
    CAIRN_API_URL: stack.apiUrl,
    CAIRN_API_KEY: `${ADMIN_AUTH_NAME}:${ADMIN_KEY}`,
    CAIRN_UTILIZATION_USER: USER,
    CAIRN_UTILIZATION_PASSWORD: PASSWORD,
    CAIRN_UTILIZATION_AUTH_URL: `${fakeUrl}/auth`,
    CAIRN_UTILIZATION_STORAGE_URL: `${fakeUrl}/v1`,
    CAIRN_UTILIZATION_TIMEOUT_MS: '5000',
    ...extra,
  });

  const collect = async (extra: Partial<CollectorConfig> = {}) => {
    const progress: string[] = [];
    const warnings: string[] = [];
    const options: StorageCollectOptions = {
      cluster: '1',
      config: config(extra),
      interval: 3600,
      progress: (l) => progress.push(l),
      warn: (l) => warnings.push(l),
    };
    const result = await collectStorageOnce(options);
    return { result, progress, warnings };
  };

  /** The account's storage records of the current hour: [total, gold, silver]. */
  const thisHour = async (account: string, ...more: string[]) => {
    const start = new Date(Math.floor(Date.now() / HOUR) * HOUR).toISOString();
    const read = async (policy: string) => {
      const res = await fetch(
        `${stack.apiUrl}/api/v1/clusters/1/utilization/storage/${policy}/${encodeURIComponent(account)}/detail/?start=${start}`,
        { headers: { Authorization: ADMIN_AUTH } },
      );
      expect(res.status).toBe(200);
      return ((await res.json()) as { objects: Array<{ bytes_used: number; pct_complete: number }> }).objects[0];
    };
    return Promise.all(['total', '0', '1', ...more].map(read));
  };

  beforeAll(async () => {
    stack = await startStack({ database: 'postgres' });
    server = fakeSwift(() => state);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    fakeUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const put = await fetch(`${stack.apiUrl}/api/v1/clusters/1/devices/`, {
      method: 'PUT',
      headers: { Authorization: ADMIN_AUTH, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        policies: [
          { index: 0, name: 'gold', default: true },
          { index: 1, name: 'silver' },
        ],
        devices: [],
      }),
    });
    expect(put.status).toBe(204);
    for (const user of [...healthy, ...problems, ...bulk]) await stack.createUser(user, 'a-user-password-0123');
  });
  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
    await stack?.close();
  });
  beforeEach(() => {
    state = fresh();
  });

  it('when accounts fail, time out or name an unknown policy, then each is retried, reported and left out while the rest of the round is recorded', async () => {
    const t0 = Date.now();
    const { result, warnings } = await collect();
    const accounts = healthy.length + problems.length + bulk.length;
    expect(result).toMatchObject({ clusterId: 1, accounts, sampled: accounts - 3, failed: 3 });
    // A 503 or a timeout is tried 1 + 2 retries times; the flaky account answers on its third try.
    expect(state.heads.get('AUTH_down')).toBe(3);
    expect(state.heads.get('AUTH_slow')).toBe(3);
    expect(state.heads.get('AUTH_flaky')).toBe(3);
    // ...after backing off: at least 0.25 s, then 0.5 s (half of 0.5 s and 1 s, the jitter's floor).
    expect(Date.now() - t0).toBeGreaterThanOrEqual(750);
    // A 404 is answered once: an account never written to.
    expect(state.heads.get('AUTH_never')).toBe(1);
    expect([...warnings, ...result.firstFailures.map((f) => `account ${f}`)].sort()).toEqual([
      'account AUTH_down: HTTP 503',
      expect.stringMatching(/^account AUTH_platinum: unknown storage policy 'platinum' .*left out of this round$/),
      expect.stringMatching(/^account AUTH_slow: .*(timeout|aborted)/i),
    ]);

    expect(await thisHour('AUTH_ok2')).toEqual([
      expect.objectContaining({ bytes_used: 6000, pct_complete: 100 }),
      expect.objectContaining({ bytes_used: 2000, pct_complete: 100 }),
      expect.objectContaining({ bytes_used: 4000, pct_complete: 100 }),
    ]);
    expect((await thisHour('AUTH_flaky'))[0]).toMatchObject({ bytes_used: 3000, pct_complete: 100 });
    // A name with a space is HEADed and recorded like any other.
    expect(state.heads.get('AUTH_ok 3')).toBe(1);
    expect(await thisHour('AUTH_ok 3')).toEqual([
      expect.objectContaining({ bytes_used: 9000, pct_complete: 100 }),
      expect.objectContaining({ bytes_used: 3000, pct_complete: 100 }),
      expect.objectContaining({ bytes_used: 6000, pct_complete: 100 }),
    ]);
    // Never written to: a sampled zero.
    expect((await thisHour('AUTH_never'))[0]).toMatchObject({ bytes_used: 0, pct_complete: 100 });
    // Failed accounts have no sample: the hour is not complete for them.
    for (const account of ['AUTH_down', 'AUTH_slow', 'AUTH_platinum'])
      expect((await thisHour(account))[0]).toMatchObject({ bytes_used: 0, pct_complete: 0 });
  });

  it('when the token expires mid-round, then the collector logs in once more for all its workers and samples every account', async () => {
    state.healthy = true;
    state.firstTokenLife = 5;
    state.delayMs = 20;
    const { result, warnings } = await collect();
    // Only the account naming the unreported policy is left out.
    expect(warnings).toEqual([]);
    expect(result.firstFailures).toEqual([expect.stringMatching(/^AUTH_platinum: unknown storage policy/)]);
    expect(result).toMatchObject({ sampled: result.accounts - 1, failed: 1 });
    // Several HEADs in flight met the 401 at once; one new login served them all.
    expect(state.unauthorized).toBeGreaterThan(0);
    expect(state.logins).toBe(2);
  });

  it('when many accounts are collected, then no more HEADs than the concurrency are in flight and a progress line counts them', async () => {
    state.healthy = true;
    state.delayMs = 30;
    const put = await fetch(`${stack.apiUrl}/api/v1/clusters/1/devices/`, {
      method: 'PUT',
      headers: { Authorization: ADMIN_AUTH, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        policies: [
          { index: 0, name: 'gold', default: true },
          { index: 1, name: 'silver' },
          { index: 2, name: 'platinum' },
        ],
        devices: [],
      }),
    });
    expect(put.status).toBe(204);
    const { result, progress } = await collect({ utilizationConcurrency: 3 });
    expect(state.maxInFlight).toBe(3);
    const accounts = result.accounts;
    expect(progress.at(-1)).toMatch(
      new RegExp(`^cluster 1: ${accounts}/${accounts} accounts, ${accounts} sampled, 0 failed, \\d+ s$`),
    );
    // Its policy now reported, the account that named it is sampled too.
    expect((await thisHour('AUTH_platinum'))[0]).toMatchObject({ bytes_used: 3000, pct_complete: 100 });
    expect((await thisHour('AUTH_platinum', '2'))[3]).toMatchObject({ bytes_used: 5, pct_complete: 100 });
  });

  it('when every account HEAD fails, then cairn utilization collect exits 1 with a summary of the first five failures', async () => {
    state.allDown = true;
    const r = await cairn(
      ['utilization', 'collect', '--cluster', '1', '--once'],
      env({ CAIRN_UTILIZATION_RETRIES: '0' }),
    );
    const accounts = state.heads.size;
    expect(accounts).toBeGreaterThan(5);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(new RegExp(`cluster 1: 0 of ${accounts} account\\(s\\) sampled, ${accounts} failed`));
    // Capped: five accounts named, the rest counted, not one line per account.
    const summary = r.stderr
      .slice(r.stderr.indexOf(`${accounts} of ${accounts} account(s) failed, e.g.:`))
      .trimEnd()
      .split('\n');
    expect(summary).toEqual([
      `${accounts} of ${accounts} account(s) failed, e.g.:`,
      ...Array<unknown>(5).fill(expect.stringMatching(/^ {2}AUTH_\S+: HTTP 503$/)),
      `  … and ${accounts - 5} more`,
    ]);
  });

  it('when cairn utilization collect --interval gets SIGTERM mid-round, then it stops within 5 s, says what it sampled and exits 0', async () => {
    state.healthy = true;
    // 1 s per HEAD, two at a time: the round would take about 16 s.
    state.delayMs = 1000;
    const [node, args] = nodeCommand('packages/cli/src/main.ts');
    const child = spawn(node, [...args, 'utilization', 'collect', '--cluster', '1', '--interval', '3600'], {
      cwd: REPO_ROOT,
      env: env({ CAIRN_UTILIZATION_CONCURRENCY: '2' }),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal, at: Date.now() })),
    );
    try {
      // Mid-round: a few accounts sampled, most still to go.
      const deadline = Date.now() + 60_000;
      while (state.heads.size < 5 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(state.heads.size).toBeGreaterThanOrEqual(5);
      const killedAt = Date.now();
      const startedBeforeKill = state.heads.size;
      child.kill('SIGTERM');
      const { code, signal, at } = await Promise.race([
        exited,
        new Promise<never>((_, reject) =>
          setTimeout(() => reject(new Error(`no exit within 10 s:\n${stdout}\n${stderr}`)), 10_000),
        ),
      ]);
      expect(at - killedAt).toBeLessThan(5000);
      expect({ code, signal }).toEqual({ code: 0, signal: null });
      const m = /cluster 1: stopped early: (\d+) of (\d+) account\(s\) sampled, 0 failed/.exec(stdout);
      expect(m).not.toBeNull();
      expect(Number(m![1])).toBeGreaterThanOrEqual(3);
      expect(Number(m![1])).toBeLessThan(20);
      expect(stderr).toContain('stopped on request');
      // No HEAD started after the stop, bar one racing the signal per worker.
      expect(state.heads.size).toBeLessThanOrEqual(startedBeforeKill + 2);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });
});
