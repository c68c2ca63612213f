import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import autocannon from 'autocannon';
import express from 'express';
import { ensureHourlyPartitions } from '../../src/repositories/utilization-partitions';
import { ADMIN_AUTH, cheapHashPassword, startTestApp, type TestApp } from '../support/harness';

/**
 * The short version of bench/management-api.bench.ts that runs in `pnpm test`: the users list's
 * page 1 against a bare express hello world, both served from this process and loaded in turn by
 * autocannon, compared by CPU time per request (this process's, plus the Postgres backends' of the
 * test database where /proc shows them). CPU per request is far steadier than req/s on a shared
 * machine. The quota fields once halved the API's speed unnoticed; the floor is set so that such a
 * change fails here, and machine noise does not (see docs/benchmarks.md, "The guard in pnpm test").
 */
const USERS = 10_000;
/**
 * Hello world's CPU per request over page 1's (API and Postgres). 0.24–0.33 was measured on 2
 * shared cores under heavy load from other tenants, but on the slower 2-core machines CI runs on
 * now 0.108–0.144, quiet or busy, in the tree as it is and in the one before this floor was lowered
 * (hello world there costs 0.23–0.98 ms, page 1 1.9–4.2 ms). A change that doubles page 1's cost
 * halves the figure, to 0.054–0.072 there: under this floor.
 */
const FLOOR = 0.08;
const CONNECTIONS = 10;

/** utime + stime of a process, in clock ticks (10 ms); null where /proc does not show it. */
function ticksOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return null;
  }
}

describe('management API speed guard', () => {
  let app: TestApp;
  let hello: Server;
  let helloUrl: string;
  let clusters: number[];

  beforeAll(async () => {
    app = await startTestApp('postgres', { hashPassword: cheapHashPassword });
    // Seeded as the benchmark does, in SQL: ten clusters, every seventh user with an applied byte
    // quota, and one storage sample of every account, so a page shows both.
    const { db } = app;
    clusters = (
      (await db.raw(
        `INSERT INTO clusters (name, uuid, auth_url, storage_url)
         SELECT 'guard-' || i, gen_random_uuid(), 'http://127.0.0.1:5000/auth', 'http://127.0.0.1:8080/v1'
           FROM generate_series(1, 10) AS i RETURNING id`,
      )) as { rows: Array<{ id: number }> }
    ).rows.map((r) => r.id);
    await db.raw(
      `INSERT INTO storage_users (cluster_id, username, password_hash, quota_bytes)
       SELECT (?::int[])[1 + g % 10], 'user' || lpad(g::text, 8, '0'), 'x', CASE WHEN g % 7 = 0 THEN 1073741824 END
         FROM generate_series(1, ?) AS g`,
      [clusters, USERS],
    );
    await db.raw(
      `INSERT INTO quota_applications (user_id, cluster_id, wanted_version, applied_version, applied_at)
       SELECT id, cluster_id, 1, 1, now() FROM storage_users WHERE quota_bytes IS NOT NULL`,
    );
    const hour = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000);
    await ensureHourlyPartitions(db, [hour.getTime()]);
    await db.raw(
      `INSERT INTO utilization_storage_hourly
         (cluster_id, policy_index, account, hour, bytes_used, object_count, container_count, slots, slot_count)
       SELECT cluster_id, -1, 'AUTH_' || username, ?, id * 1048576, id, 1, 1, 1 FROM storage_users`,
      [hour],
    );
    await db.raw('ANALYZE');

    const bare = express();
    bare.get('/', (_req, res) => {
      res.json({ hello: 'world' });
    });
    hello = await new Promise<Server>((resolve) => {
      const s = bare.listen(0, '127.0.0.1', () => resolve(s));
    });
    const address = hello.address();
    helloUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => hello?.close(resolve));
    await app?.close();
  });

  /** The Postgres backends serving the test database (the API's pool), to count their CPU too. */
  const backends = async (): Promise<number[]> =>
    (
      (await app.db.raw(
        'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
      )) as { rows: Array<{ pid: number }> }
    ).rows.map((r) => r.pid);

  /** CPU milliseconds per request of `amount` requests (this process, and `pids` where readable). */
  async function cpuPerRequest(
    url: string,
    path: (turn: number) => string,
    amount: number,
    pids: number[] = [],
  ): Promise<number> {
    const ticks = () => pids.reduce((sum, pid) => sum + (ticksOf(pid) ?? 0), 0);
    const [cpu0, ticks0] = [process.cpuUsage(), ticks()];
    let turn = 0;
    const result = await autocannon({
      url,
      connections: CONNECTIONS,
      amount,
      headers: { authorization: ADMIN_AUTH, accept: 'application/json' },
      requests: [{ setupRequest: (r) => ({ ...r, path: path(turn++) }) }],
    });
    const cpu = process.cpuUsage(cpu0);
    expect(result.non2xx + result.errors + result.timeouts).toBe(0);
    return ((cpu.user + cpu.system) / 1000 + (ticks() - ticks0) * 10) / result['2xx'];
  }

  it('when the users list is loaded beside a bare express handler, then a request costs at most 12.5 times its CPU', async () => {
    const page1 = (turn: number) => `/api/v1/users/?cluster=${clusters[turn % clusters.length]}`;
    const helloWorld = () => '/';
    // Answers as the benchmark checks them once, then warm-up (JIT, prepared statements on every
    // pooled connection).
    const first = await fetch(`${app.baseUrl}${page1(0)}`, { headers: { authorization: ADMIN_AUTH } });
    const body = (await first.json()) as { meta: { total_count: number }; objects: Array<Record<string, unknown>> };
    expect(body.meta.total_count).toBe(USERS / 10);
    expect(body.objects).toHaveLength(20);
    const quotas = body.objects.filter((u) => u.quota_bytes !== null).length;
    expect(quotas).toBeGreaterThan(0);
    expect(body.objects.filter((u) => u.quota_status === 'applied')).toHaveLength(quotas);
    expect(body.objects.every((u) => typeof u.bytes_used === 'number')).toBe(true);
    await cpuPerRequest(app.baseUrl, page1, 300);
    await cpuPerRequest(helloUrl, helloWorld, 300);

    const pids = await backends();
    // Alternated three times; the cheapest run of each counts, which a passing burst of noise does
    // not reach. With two, one CI run on a busy machine measured 0.144 (hello world 0.98 and 0.56
    // ms, page 1 3.9 and 4.2 ms): a neighbour on the other core inflates the CPU time of both.
    const api: number[] = [];
    const bare: number[] = [];
    for (let round = 0; round < 3; round++) {
      bare.push(await cpuPerRequest(helloUrl, helloWorld, 1500));
      api.push(await cpuPerRequest(app.baseUrl, page1, 1000, pids));
    }
    const ratio = Math.min(...bare) / Math.min(...api);
    const figures = `hello world ${bare.map((b) => b.toFixed(3)).join(', ')} ms, users page 1 ${api.map((a) => a.toFixed(3)).join(', ')} ms of CPU per request`;
    if (ratio < FLOOR)
      throw new Error(
        `users page 1 at ${ratio.toFixed(3)} of hello world's speed, under the floor ${FLOOR}: ${figures}`,
      );
  });
});
