import type { Knex } from 'knex';
import { apiTotalCount, counterBreaches } from './support/checks';
import { PASSWORD } from './support/load';
import { ADMIN_AUTH } from './support/services';
import { startSystem, type System } from './support/system';

/**
 * The management API process is killed (SIGKILL: no shutdown hook, no goodbye to Postgres) while
 * writes are in flight. Every write must be all or nothing: a user row with its counter, a PATCH
 * with all its fields and its generation, a device report with its policies and its capacity.
 */
describe('SIGKILL of the management API mid-write', () => {
  let sys: System;
  beforeAll(async () => {
    sys = await startSystem();
  });
  afterAll(async () => {
    await sys?.close();
  });

  const call = (method: string, path: string, body?: unknown) =>
    fetch(`${sys.api.url}${path}`, {
      method,
      headers: { Authorization: ADMIN_AUTH, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(60_000),
    }).then(
      async (r) => ({ status: r.status, body: await r.text() }),
      () => ({ status: 0, body: '' }), // no answer: the process died under it
    );

  /**
   * Kills the management API as soon as one of its sessions is inside a transaction that has
   * written (it holds a transaction id), watching pg_stat_activity from the outside.
   * Starts watching once `ready()` holds. Resolves with whether such a moment was seen before `timeoutMs`.
   */
  async function killMidWrite(
    db: Knex,
    timeoutMs: number,
    what: RegExp,
    ready: () => boolean = () => true,
  ): Promise<boolean> {
    const until = Date.now() + timeoutMs;
    let seen = false;
    while (Date.now() < until && !seen) {
      if (!ready()) {
        await new Promise((r) => setTimeout(r, 5));
        continue;
      }
      const { rows } = (await db.raw(
        `SELECT query FROM pg_stat_activity WHERE application_name = 'cairn-management-api' AND backend_xid IS NOT NULL`,
      )) as { rows: Array<{ query: string }> };
      seen = rows.some((r) => what.test(r.query));
    }
    await sys.api.kill();
    return seen;
  }

  /** After the kill, Postgres rolls back what the dead sessions left open; wait until they are gone. */
  async function waitSessionsGone(db: Knex): Promise<void> {
    for (let i = 0; i < 200; i++) {
      const { rows } = (await db.raw(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'cairn-management-api'`,
      )) as { rows: Array<{ n: number }> };
      if (rows[0]!.n === 0) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('sessions of the killed management API are still open');
  }

  test('when the management API is killed while creates and PATCHes are in flight, then each write is all or nothing: acknowledged ones are there, refused ones are not, PATCHed rows have all or none of their changes, and the user count matches the rows', async () => {
    // Users to PATCH: each PATCH changes three fields at once and bumps the generation once.
    const targets: Array<{ id: string; generation: string; hash: string }> = [];
    for (let i = 0; i < 12; i++) {
      const r = await call('POST', '/api/v1/users/', {
        cluster: '/api/v1/clusters/1/',
        user: `kill-patch-${i}`,
        password: PASSWORD,
      });
      expect(r.status).toBe(201);
      const id = String((JSON.parse(r.body) as { id: string }).id);
      const row = (await sys.db('storage_users').where({ id }).first('generation', 'password_hash')) as {
        generation: string;
        password_hash: string;
      };
      targets.push({ id, generation: String(row.generation), hash: row.password_hash });
    }

    const creates = Array.from({ length: 24 }, (_, i) => `kill-new-${i}`);
    let answered = 0;
    const counted = <T>(p: Promise<T>) => p.finally(() => answered++);
    // Creates and PATCHes both hash a password first, so their writes interleave.
    const inFlight = [
      ...creates.map((user) =>
        counted(call('POST', '/api/v1/users/', { cluster: '/api/v1/clusters/1/', user, password: PASSWORD })).then(
          (r) => ({ kind: 'create', user, ...r }),
        ),
      ),
      ...targets.map((t) =>
        counted(
          call('PATCH', `/api/v1/users/${t.id}/`, {
            enabled: false,
            is_superuser: true,
            password: `${PASSWORD}-changed`,
          }),
        ).then((r) => ({ kind: 'patch', user: t.id, ...r })),
      ),
    ];
    // Some answered, the rest cut off: kill at the next write in progress after a few answers.
    const caught = await killMidWrite(sys.db, 30_000, /storage_users/i, () => answered >= 6);
    const answers = await Promise.all(inFlight);
    await waitSessionsGone(sys.db);
    process.stdout.write(
      `users batch: killed mid-write=${caught}; answers: ${[...new Set(answers.map((a) => a.status))].map((s) => `${s || 'none'}×${answers.filter((a) => a.status === s).length}`).join(' ')}\n`,
    );
    expect(caught).toBe(true);
    // The kill really cut some requests off, after others were acknowledged.
    expect(answers.some((a) => a.status === 0)).toBe(true);
    expect(answers.some((a) => a.status === 201 || a.status === 202)).toBe(true);

    const bad: string[] = [];
    const rows = (await sys
      .db('storage_users')
      .select('id', 'username', 'password_hash', 'enabled', 'is_superuser', 'generation')) as Array<{
      id: string;
      username: string;
      password_hash: string;
      enabled: boolean;
      is_superuser: boolean;
      generation: string;
    }>;
    const byName = new Map(rows.map((r) => [r.username, r]));
    const byId = new Map(rows.map((r) => [String(r.id), r]));
    for (const a of answers) {
      if (a.kind === 'create') {
        const row = byName.get(a.user);
        if (a.status === 201 && !row) bad.push(`${a.user}: answered 201, missing`);
        if (a.status !== 201 && a.status !== 0 && row) bad.push(`${a.user}: answered ${a.status}, yet written`);
        if (row && !/^\$scrypt\$/.test(row.password_hash)) bad.push(`${a.user}: half-written password hash`);
      } else {
        const t = targets.find((x) => x.id === a.user)!;
        const row = byId.get(t.id)!;
        const applied =
          !row.enabled &&
          row.is_superuser &&
          row.password_hash !== t.hash &&
          Number(row.generation) === Number(t.generation) + 1;
        const untouched =
          row.enabled && !row.is_superuser && row.password_hash === t.hash && String(row.generation) === t.generation;
        if (!applied && !untouched) bad.push(`user ${t.id}: partial PATCH ${JSON.stringify(row)}`);
        if (a.status === 202 && !applied) bad.push(`user ${t.id}: answered 202, not applied`);
        if (a.status !== 202 && a.status !== 0 && !untouched)
          bad.push(`user ${t.id}: answered ${a.status}, yet applied`);
      }
    }
    expect(bad).toEqual([]);

    await sys.relaunchApi();
    expect(await counterBreaches(sys.db)).toEqual([]);
    const { n } = (await sys.db('storage_users').where({ cluster_id: 1 }).count({ n: '*' }).first()) as { n: string };
    expect(await apiTotalCount(sys.api.url)).toBe(Number(n));
  });

  test('when the management API is killed while a large device report is being written, then the cluster keeps either the whole old report or the whole new one, with matching policies and capacity', async () => {
    const report = (tag: 'old' | 'new', count: number) => ({
      policies: [{ index: 0, name: tag === 'old' ? 'gold' : 'silver', default: true }],
      devices: Array.from({ length: count }, (_, i) => ({
        node: `${tag}-node-${Math.floor(i / 50)}`,
        device: `d${i % 50}`,
        policies: [tag === 'old' ? 'gold' : 'silver'],
        size_bytes: 4_000_000_000_000,
        used_bytes: (tag === 'old' ? 1_000_000 : 2_000_000) + i,
        avail_bytes: 3_000_000_000_000,
        mounted: true,
      })),
    });
    const OLD = 3_000;
    const NEW = 40_000;
    const first = await call('PUT', '/api/v1/clusters/1/devices/', report('old', OLD));
    expect(first.status).toBe(204);

    const put = call('PUT', '/api/v1/clusters/1/devices/', report('new', NEW));
    const caught = await killMidWrite(sys.db, 40_000, /devices|storage_policies|capacity_reports/i);
    const answer = await put;
    await waitSessionsGone(sys.db);
    process.stdout.write(`device report: killed mid-write=${caught}; answer ${answer.status || 'none'}\n`);
    expect(caught).toBe(true);
    expect(answer.status).toBe(0);

    const devices = (await sys.db('devices').where({ cluster_id: 1 }).select('node', 'used_bytes')) as Array<{
      node: string;
      used_bytes: string;
    }>;
    const tags = new Set(devices.map((d) => d.node.split('-')[0]));
    const policies = (
      (await sys.db('storage_policies').where({ cluster_id: 1 }).select('name')) as Array<{ name: string }>
    ).map((p) => p.name);
    const capacity = (await sys.db('capacity_reports').where({ cluster_id: 1 }).first('elements')) as {
      elements: unknown;
    };
    type Element = { ring_set: string; pct_used_stats: { count: number } };
    const elements = (
      typeof capacity.elements === 'string' ? JSON.parse(capacity.elements) : capacity.elements
    ) as Element[];
    const state = {
      tags: [...tags],
      devices: devices.length,
      policies,
      capacity: elements.map((e) => `${e.ring_set}:${e.pct_used_stats.count}`),
    };
    const old = { tags: ['old'], devices: OLD, policies: ['gold'], capacity: [`gold:${OLD}`] };
    const neu = { tags: ['new'], devices: NEW, policies: ['silver'], capacity: [`silver:${NEW}`] };
    expect([old, neu]).toContainEqual(state);

    await sys.relaunchApi();
    const res = await call('GET', '/api/v1/clusters/1/devices/?limit=1');
    expect(res.status).toBe(200);
    expect((JSON.parse(res.body) as { meta: { total_count: number } }).meta.total_count).toBe(state.devices);
  });
});
