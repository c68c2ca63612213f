import { parseCsv as parseCsvRows, TRANSFER_CLASSES, TRANSFER_DETAIL_FIELD_NAMES } from '@cairn/domain';
import { parseStringPromise } from 'xml2js';
import { maintainUtilization, rollUpDay } from '../../src/repositories/utilization-partitions';
import {
  ADMIN_AUTH,
  DB_KINDS,
  countRows,
  createCluster,
  createOperator,
  createUser,
  cheapHashPassword,
  startTestApp,
  type TestApp,
} from '../support/harness';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** '2026-11-24 22:00:00Z', the API's record format. */
const utc = (ms: number) => `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')}Z`;
const iso = (ms: number) => new Date(ms).toISOString();

/** The answer's rows; an answer cut off mid-row fails the test. */
const parseCsv = (text: string): string[][] => parseCsvRows(text, { complete: true });

describe.each(DB_KINDS)('utilization on %s', (kind) => {
  let app: TestApp;
  /** A whole hour two days ago: every sample below lands in [base, base + 4h). */
  const base = Math.floor(Date.now() / HOUR) * HOUR - 2 * DAY;
  const path = (rest: string) => `/api/v1/clusters/1/utilization/${rest}`;
  const get = (p: string, auth = ADMIN_AUTH) => app.http().get(p).set('Authorization', auth);
  const post = (p: string, body: unknown, auth = ADMIN_AUTH) =>
    app
      .http()
      .post(p)
      .set('Authorization', auth)
      .send(body as object);
  const sample = (account: string, bytes: number, policies: Array<[number, number]> = []) => ({
    account,
    bytes_used: bytes,
    object_count: Math.ceil(bytes / 100),
    container_count: 1,
    policies: policies.map(([index, b]) => ({
      index,
      bytes_used: b,
      object_count: Math.ceil(b / 100),
      container_count: 1,
    })),
  });

  beforeAll(async () => {
    app = await startTestApp(kind, { hashPassword: cheapHashPassword });
    // The cluster's storage policies, as the capacity collector reports them: samples name these.
    const policies = [
      { index: 0, name: 'gold', default: true },
      { index: 1, name: 'silver' },
    ];
    expect(
      (
        await app
          .http()
          .put('/api/v1/clusters/1/devices/')
          .set('Authorization', ADMIN_AUTH)
          .send({ policies, devices: [] })
      ).status,
    ).toBe(204);
    // Known accounts come from user creation; a deleted user's account stays known.
    await createUser(app, 'alice');
    const gone = await createUser(app, 'gone');
    expect((await app.http().delete(`/api/v1/users/${gone.id}/`).set('Authorization', ADMIN_AUTH)).status).toBe(204);
    // Hour 0, two half-hourly rounds: the second is smaller (the hour keeps the maximum).
    for (const [at, factor] of [
      [base + 5 * 60_000, 1],
      [base + 35 * 60_000, 0.5],
    ] as const) {
      const res = await post(path('storage/'), {
        interval: 1800,
        sampled_at: iso(at),
        samples: [
          sample('AUTH_alice', 1000 * factor, [
            [0, 600 * factor],
            [1, 400 * factor],
          ]),
          sample('AUTH_gone', 50),
          sample('AUTH_bob', 10, [[0, 10]]),
        ],
      });
      expect(res.status).toBe(200);
    }
    // Hour 1: one round of two; alice grew. Hour 2: nothing. Hour 3: one round, alice only.
    await post(path('storage/'), {
      interval: 1800,
      sampled_at: iso(base + HOUR + 60_000),
      samples: [
        sample('AUTH_alice', 3000, [
          [0, 2000],
          [1, 1000],
        ]),
      ],
    });
    await post(path('storage/'), {
      interval: 1800,
      sampled_at: iso(base + 3 * HOUR + 60_000),
      samples: [sample('AUTH_alice', 2000, [[0, 2000]])],
    });
  });
  afterAll(() => app.close());

  it('when a user is created, then its account is known for good, also after the user is deleted', async () => {
    const res = await get(path('accounts/?limit=10'));
    expect(res.status).toBe(200);
    expect(res.body.objects.map((o: { account: string }) => o.account)).toEqual([
      'AUTH_alice',
      'AUTH_bob',
      'AUTH_gone',
    ]);
    const after = await get(path('accounts/?account__gt=AUTH_alice&limit=1'));
    expect(after.body.objects).toEqual([{ account: 'AUTH_bob' }]);
  });

  it('when known accounts are paged, then limit and offset apply and next leads through every page', async () => {
    const cluster = await createCluster(app, `paged-accounts-${kind}`);
    const names = ['p1', 'p2', 'p3', 'p4', 'p5'];
    for (const user of names) {
      const res = await app
        .http()
        .post('/api/v1/users/')
        .set('Authorization', ADMIN_AUTH)
        .send({ cluster: cluster.resource_uri, user, password: 'a-long-enough-password' });
      expect(res.status).toBe(201);
    }
    const list = `/api/v1/clusters/${cluster.id}/utilization/accounts/`;
    const first = await get(`${list}?limit=2`);
    expect(first.body).toEqual({
      meta: { limit: 2, next: `${list}?limit=2&offset=2`, offset: 0, previous: null, total_count: 5 },
      objects: [{ account: 'AUTH_p1' }, { account: 'AUTH_p2' }],
    });
    const second = await get(`${list}?limit=2&offset=2`);
    expect(second.body.objects).toEqual([{ account: 'AUTH_p3' }, { account: 'AUTH_p4' }]);
    expect(second.body.meta).toMatchObject({
      offset: 2,
      previous: `${list}?limit=2&offset=0`,
      next: `${list}?limit=2&offset=4`,
    });
    const seen: string[] = [];
    for (let next: string | null = `${list}?limit=2`; next;) {
      const body: { meta: { next: string | null }; objects: Array<{ account: string }> } = (await get(next)).body;
      seen.push(...body.objects.map((o) => o.account));
      next = body.meta.next;
    }
    expect(seen).toEqual(names.map((n) => `AUTH_${n}`));
    // Filters stay in the links; reading by key and by position combine.
    const filtered = await get(`${list}?account__gt=AUTH_p1&limit=1&offset=1`);
    expect(filtered.body).toEqual({
      meta: {
        limit: 1,
        next: `${list}?account__gt=AUTH_p1&limit=1&offset=2`,
        offset: 1,
        previous: `${list}?account__gt=AUTH_p1&limit=1&offset=0`,
        total_count: 4,
      },
      objects: [{ account: 'AUTH_p3' }],
    });
  });

  it('when storage policies are paged, then limit and offset apply and meta tells the truth, also with none', async () => {
    const cluster = await createCluster(app, `paged-policies-${kind}`);
    const list = `/api/v1/clusters/${cluster.id}/utilization/policies/`;
    expect((await get(list)).body).toEqual({
      meta: { limit: 20, next: null, offset: 0, previous: null, total_count: 0 },
      objects: [],
    });
    const report = {
      policies: [
        { index: 0, name: 'gold', default: true },
        { index: 1, name: 'silver' },
        { index: 2, name: 'bronze' },
      ],
      devices: [{ node: '10.0.0.1:6200', device: 'sdb1', policies: ['gold'], used_bytes: 1, avail_bytes: 1 }],
    };
    expect(
      (await app.http().put(`/api/v1/clusters/${cluster.id}/devices/`).set('Authorization', ADMIN_AUTH).send(report))
        .status,
    ).toBe(204);
    const page = await get(`${list}?limit=1&offset=1`);
    expect(page.body).toEqual({
      meta: {
        limit: 1,
        next: `${list}?limit=1&offset=2`,
        offset: 1,
        previous: `${list}?limit=1&offset=0`,
        total_count: 3,
      },
      objects: [{ default: false, index: 1, name: 'silver' }],
    });
    expect((await get(list)).body.objects.map((p: { name: string }) => p.name)).toEqual(['gold', 'silver', 'bronze']);
  });

  it('when storage detail is read, then each hour holds the maximum and pct_complete shows the sampled share', async () => {
    const res = await get(path(`storage/0/AUTH_alice/detail/?start=${iso(base)}&end=${iso(base + 4 * HOUR)}`));
    expect(res.status).toBe(200);
    expect(res.body.meta).toMatchObject({
      account: 'AUTH_alice',
      policy_index: 0,
      total_count: 4,
      limit: 20,
      offset: 0,
      next: null,
      start: utc(base),
      end: utc(base + 4 * HOUR),
    });
    expect(res.body.objects).toEqual([
      {
        start: utc(base),
        end: utc(base + HOUR),
        bytes_used: 600,
        object_count: 6,
        container_count: 1,
        pct_complete: 100,
      },
      {
        start: utc(base + HOUR),
        end: utc(base + 2 * HOUR),
        bytes_used: 2000,
        object_count: 20,
        container_count: 1,
        pct_complete: 50,
      },
      {
        start: utc(base + 2 * HOUR),
        end: utc(base + 3 * HOUR),
        bytes_used: 0,
        object_count: 0,
        container_count: 0,
        pct_complete: 0,
      },
      {
        start: utc(base + 3 * HOUR),
        end: utc(base + 4 * HOUR),
        bytes_used: 2000,
        object_count: 20,
        container_count: 1,
        pct_complete: 50,
      },
    ]);
    // Hour 3 sampled alice without policy 1: a known zero, with the hour's coverage.
    const p1 = await get(
      path(`storage/1/AUTH_alice/detail/?start=${iso(base + 3 * HOUR)}&end=${iso(base + 4 * HOUR)}`),
    );
    expect(p1.body.objects).toEqual([
      {
        start: utc(base + 3 * HOUR),
        end: utc(base + 4 * HOUR),
        bytes_used: 0,
        object_count: 0,
        container_count: 0,
        pct_complete: 50,
      },
    ]);
    const total = await get(path(`storage/total/AUTH_alice/detail/?start=${iso(base)}&end=${iso(base + HOUR)}`));
    expect(total.body.objects[0].bytes_used).toBe(1000);
  });

  it('when start and end are off the grid, then start rounds down to the half hour and end up to whole hours', async () => {
    const res = await get(
      path(`storage/0/AUTH_alice/detail/?start=${iso(base + 10 * 60_000)}&end=${iso(base + 70 * 60_000)}`),
    );
    expect(res.body.meta).toMatchObject({ start: utc(base), end: utc(base + 2 * HOUR), total_count: 2 });
    const half = await get(
      path(`storage/0/AUTH_alice/detail/?start=${iso(base + 40 * 60_000)}&end=${iso(base + 41 * 60_000)}`),
    );
    // A record from :30 reports the stored hour that begins inside it.
    expect(half.body.meta).toMatchObject({
      start: utc(base + 30 * 60_000),
      end: utc(base + 90 * 60_000),
      total_count: 1,
    });
    expect(half.body.objects[0]).toMatchObject({ start: utc(base + 30 * 60_000), bytes_used: 2000 });
    // Dates without a time or zone are UTC; "+01:00" is honoured.
    const day = new Date(base).toISOString().slice(0, 10);
    const whole = await get(path(`storage/0/AUTH_alice/detail/?start=${day}&end=${day}T02:00:00%2B01:00`));
    expect(whole.body.meta).toMatchObject({ start: `${day} 00:00:00Z`, total_count: 1 });
  });

  it('when end is left out, then it is now, rounded up to whole hours after start', async () => {
    const start = Math.floor(Date.now() / HOUR) * HOUR - 3 * HOUR;
    const res = await get(path(`storage/0/AUTH_alice/detail/?start=${iso(start)}`));
    expect(res.status).toBe(200);
    expect([3, 4]).toContain(res.body.meta.total_count);
    expect(res.body.meta.end).toBe(utc(start + res.body.meta.total_count * HOUR));
  });

  it('when dates are bad, end precedes start or the range passes the retention, then 400 says why', async () => {
    const cases: Array<[string, RegExp]> = [
      ['', /'start' is required/],
      ['?start=yesterday', /'yesterday' is not a valid start/],
      ['?start=2026-02-30', /not a valid start/],
      [`?start=${iso(base)}&end=2026-13-01`, /not a valid end/],
      [`?start=${iso(base + HOUR)}&end=${iso(base)}`, /'end' .* must be after 'start'/],
      [`?start=${iso(Date.now() - 91 * DAY)}`, /beyond the retention: records are kept 90 days/],
    ];
    for (const [query, message] of cases) {
      const res = await get(path(`storage/0/AUTH_alice/detail/${query}`));
      expect({ query, status: res.status }).toEqual({ query, status: 400 });
      expect(res.body.error).toMatch(message);
    }
    // The summary reads daily rollups, kept 1095 days: an older start is refused there only.
    expect(
      (await get(path(`summary/?start=${iso(Date.now() - 100 * DAY)}&end=${iso(Date.now() - 99 * DAY)}`))).status,
    ).toBe(200);
    const tooOld = await get(path(`summary/?start=${iso(Date.now() - 1100 * DAY)}`));
    expect(tooOld.status).toBe(400);
    expect(tooOld.body.error).toMatch(/records are kept 1095 days/);
    expect((await get(path(`storage/zero/?start=${iso(base)}`))).status).toBe(404);
    expect((await get(path(`storage/0/?start=${iso(base)}&account__regex=x`))).status).toBe(400);
  });

  it('when an account was never seen, then its detail is empty, not 404', async () => {
    const res = await get(path(`storage/0/AUTH_nobody/detail/?start=${iso(base)}&end=${iso(base + 4 * HOUR)}`));
    expect(res.status).toBe(200);
    expect(res.body.meta).toMatchObject({ total_count: 0, account: 'AUTH_nobody', policy_index: 0 });
    expect(res.body.objects).toEqual([]);
  });

  it('when accounts are listed, then only those with data for the policy, paged and filtered', async () => {
    const range = `start=${iso(base)}&end=${iso(base + 4 * HOUR)}`;
    const p0 = await get(path(`storage/0/?${range}&limit=1`));
    expect(p0.body.meta).toMatchObject({ total_count: 2, limit: 1, offset: 0, previous: null, policy_index: 0 });
    expect(p0.body.meta.next).toBe(
      `/api/v1/clusters/1/utilization/storage/0/?start=${encodeURIComponent(iso(base))}&end=${encodeURIComponent(iso(base + 4 * HOUR))}&limit=1&offset=1`,
    );
    expect(p0.body.objects).toEqual([{ account: 'AUTH_alice' }]);
    expect((await get(path(`storage/0/?${range}&limit=1&offset=1`))).body.objects).toEqual([{ account: 'AUTH_bob' }]);
    expect((await get(path(`storage/1/?${range}`))).body.objects).toEqual([{ account: 'AUTH_alice' }]);
    expect((await get(path(`storage/total/?${range}`))).body.meta.total_count).toBe(3);
    expect((await get(path(`storage/total/?${range}&account__startswith=AUTH_g`))).body.objects).toEqual([
      { account: 'AUTH_gone' },
    ]);
    expect((await get(path(`storage/total/?${range}&account=AUTH_bob`))).body.objects).toEqual([
      { account: 'AUTH_bob' },
    ]);
    // The LIKE pattern characters are literal.
    expect((await get(path(`storage/total/?${range}&account__startswith=AUTH_%25`))).body.meta.total_count).toBe(0);
    expect(
      (await get(path(`storage/total/?start=${iso(base + 2 * HOUR)}&end=${iso(base + 3 * HOUR)}`))).body.meta
        .total_count,
    ).toBe(0);
  });

  it('when a transfer batch is sent twice, then it counts once; coverage gives pct_complete', async () => {
    const batch = {
      batch_id: `batch-${kind}-0001`,
      covered: { start: iso(base), end: iso(base + 90 * 60_000) },
      records: [
        { account: 'AUTH_alice', policy_index: 0, hour: iso(base), bytes_in: 1000, bytes_out: 10, req_count: 2 },
        { account: 'AUTH_alice', policy_index: null, hour: iso(base), bytes_in: 0, bytes_out: 300, req_count: 1 },
        { account: 'AUTH_alice', policy_index: 0, hour: iso(base + HOUR), bytes_in: 5, bytes_out: 7, req_count: 1 },
        { account: 'AUTH_gone', policy_index: 1, hour: iso(base), bytes_in: 50, bytes_out: 0, req_count: 1 },
      ],
    };
    const first = await post(path('transfer/'), batch);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ accepted: 4, duplicate: false, unattributed: { records: 0, requests: 0 } });
    const again = await post(path('transfer/'), batch);
    expect(again.body).toEqual({ accepted: 0, duplicate: true, unattributed: { records: 0, requests: 0 } });
    const range = `start=${iso(base)}&end=${iso(base + 2 * HOUR)}`;
    const total = await get(path(`transfer/total/AUTH_alice/detail/?${range}`));
    // Sent as totals only (no classes), as a collector that reads no classes does: those read 0.
    const totalsOnly = {
      req_get: 0,
      req_head: 0,
      req_put: 0,
      req_post: 0,
      req_delete: 0,
      req_list: 0,
      req_copy: 0,
      req_other: 0,
      req_errors: 0,
      s3_bytes_in: 0,
      s3_bytes_out: 0,
      s3_req_count: 0,
      internal_bytes_in: 0,
      internal_bytes_out: 0,
      internal_req_count: 0,
    };
    expect(total.body.objects).toEqual([
      {
        start: utc(base),
        end: utc(base + HOUR),
        bytes_in: 1000,
        bytes_out: 310,
        req_count: 3,
        ...totalsOnly,
        pct_complete: 100,
      },
      {
        start: utc(base + HOUR),
        end: utc(base + 2 * HOUR),
        bytes_in: 5,
        bytes_out: 7,
        req_count: 1,
        ...totalsOnly,
        pct_complete: 50,
      },
    ]);
    const p0 = await get(path(`transfer/0/AUTH_alice/detail/?${range}`));
    expect(p0.body.objects[0]).toMatchObject({ bytes_in: 1000, bytes_out: 10, req_count: 2 });
    expect((await get(path(`transfer/1/?${range}`))).body.objects).toEqual([{ account: 'AUTH_gone' }]);
  });

  it('when the summary is asked, then average, peak, end counts and transfer sums per account', async () => {
    const res = await get(path(`summary/?start=${iso(base)}&end=${iso(base + 4 * HOUR)}`));
    expect(res.status).toBe(200);
    expect(res.body.meta.total_count).toBe(3);
    const alice = res.body.objects[0];
    // Totals: 1000, 3000, -, 2000 -> (1000 + 3000 + 2000) / 3 sampled hours.
    expect(alice).toMatchObject({
      account: 'AUTH_alice',
      hours: 4,
      bytes_used_avg: 2000,
      bytes_used_peak: 3000,
      object_count: 20,
      container_count: 1,
      bytes_in: 1005,
      bytes_out: 317,
      req_count: 4,
    });
    // Storage: 1 + 0.5 + 0 + 0.5 of 4 hours; transfer logs cover 1.5 of 4.
    expect(alice).toMatchObject({ storage_pct_complete: 50, transfer_pct_complete: 37.5, pct_complete: 37.5 });
    // alice has no quota (utilization-quotas.test.ts covers those that have one).
    const noQuota = { quota_bytes: null, quota_count: null, quota_bytes_used_pct: null, quota_count_used_pct: null };
    expect(alice).toMatchObject(noQuota);
    expect(alice.policies).toEqual([
      {
        policy_index: 0,
        bytes_used_avg: Math.round((600 + 2000 + 2000) / 3),
        bytes_used_peak: 2000,
        object_count: 20,
        container_count: 1,
        ...noQuota,
      },
      // Hour 3 sampled alice without policy 1: a zero in the average, and zero at the end.
      {
        policy_index: 1,
        bytes_used_avg: Math.round((400 + 1000 + 0) / 3),
        bytes_used_peak: 1000,
        object_count: 0,
        container_count: 0,
        ...noQuota,
      },
    ]);
    expect(res.body.objects.map((o: { account: string }) => o.account)).toEqual([
      'AUTH_alice',
      'AUTH_bob',
      'AUTH_gone',
    ]);
  });

  it('when an account empties a policy, then that policy counts zero from then on and the policies add up to the total', async () => {
    // A whole day of its own, two days before the other samples, so that it can be rolled up alone.
    const day = Math.floor((base - 2 * DAY) / DAY) * DAY;
    const hours: Array<[number, Array<[number, number]>]> = [
      [
        3000,
        [
          [0, 1000],
          [1, 2000],
        ],
      ],
      [
        3000,
        [
          [0, 1000],
          [1, 2000],
        ],
      ],
      // Swift sends no policy-1 headers once the account has no container in it.
      [1000, [[0, 1000]]],
      [1000, [[0, 1000]]],
    ];
    for (const [i, [bytes, policies]] of hours.entries()) {
      const res = await post(path('storage/'), {
        interval: 3600,
        sampled_at: iso(day + i * HOUR + 60_000),
        samples: [sample('AUTH_carol', bytes, policies)],
      });
      expect(res.status).toBe(200);
    }
    const range = `start=${iso(day)}&end=${iso(day + DAY)}`;
    const expected = {
      account: 'AUTH_carol',
      bytes_used_avg: 2000,
      object_count: 10,
      policies: [
        { policy_index: 0, bytes_used_avg: 1000, bytes_used_peak: 1000, object_count: 10, container_count: 1 },
        { policy_index: 1, bytes_used_avg: 1000, bytes_used_peak: 2000, object_count: 0, container_count: 0 },
      ],
    };
    const hourly = (await get(path(`summary/?${range}&account=AUTH_carol`))).body.objects;
    expect(hourly).toMatchObject([expected]);
    const sum = hourly[0].policies.reduce((t: number, p: { bytes_used_avg: number }) => t + p.bytes_used_avg, 0);
    expect(sum).toBe(hourly[0].bytes_used_avg);
    // The detail of policy 1 says the same: its sampled hours average to the summary's figure.
    const detail = (await get(path(`storage/1/AUTH_carol/detail/?${range}&limit=24`))).body.objects as Array<{
      bytes_used: number;
      pct_complete: number;
    }>;
    const sampled = detail.filter((r) => r.pct_complete > 0);
    expect(sampled.map((r) => r.bytes_used)).toEqual([2000, 2000, 0, 0]);
    expect(sampled.reduce((t, r) => t + r.bytes_used, 0) / sampled.length).toBe(1000);
    // Read from the day's rollup, the figures are the same.
    await rollUpDay(app.db, day);
    const rolled = await app.db('utilization_storage_daily').where({ account: 'AUTH_carol', policy_index: 1 }).first();
    expect([Number(rolled.object_count), Number(rolled.container_count)]).toEqual([0, 0]);
    expect((await get(path(`summary/?${range}&account=AUTH_carol`))).body.objects).toEqual(hourly);
  });

  it('when records carry classes and shares, then the summary and its CSV sum each field, from hours and from a rolled-up day', async () => {
    await createUser(app, 'dora');
    const day = Math.floor((base - 3 * DAY) / DAY) * DAY;
    // Every field a different multiple of k, so that a figure read from another column shows.
    const record = (hour: number, k: number) => ({
      account: 'AUTH_dora',
      policy_index: 0,
      hour: iso(hour),
      bytes_in: 1000 * k,
      bytes_out: 2000 * k,
      req_count: 36 * k,
      ...Object.fromEntries(TRANSFER_CLASSES.map((c, i) => [`req_${c}`, (i + 1) * k])),
      req_errors: 9 * k,
      s3_bytes_in: 100 * k,
      s3_bytes_out: 200 * k,
      s3_req_count: 10 * k,
      internal_bytes_in: 300 * k,
      internal_bytes_out: 400 * k,
      internal_req_count: 11 * k,
    });
    // Two records of the same hour (a batch may hold both): they add up.
    const records = [record(day, 1), record(day + 5 * HOUR, 2), record(day + DAY + HOUR, 4), record(day, 8)];
    const sent = await post(path('transfer/'), { batch_id: `classes-${kind}`, records });
    expect(sent.status).toBe(200);
    const fields = ['bytes_in', 'bytes_out', 'req_count', ...TRANSFER_DETAIL_FIELD_NAMES];
    const sums = Object.fromEntries(
      fields.map((f) => [f, records.reduce((t, r) => t + (r as unknown as Record<string, number>)[f]!, 0)]),
    );
    expect(sums).toMatchObject({ req_get: 15, req_other: 120, internal_req_count: 165 });
    const range = `start=${iso(day)}&end=${iso(day + DAY + 2 * HOUR)}&account=AUTH_dora`;
    const read = async () => {
      const json = (await get(path(`summary/?${range}`))).body.objects;
      const [header, row] = parseCsv((await get(path(`summary/?${range}&format=csv`))).text);
      return { json, csv: Object.fromEntries(fields.map((f) => [f, Number(row![header!.indexOf(f)])])) };
    };
    const hourly = await read();
    expect(hourly.json).toMatchObject([sums]);
    expect(hourly.csv).toEqual(sums);
    // The first day from its rollup (its hours gone, as retention drops them), the next day's hour
    // from the hourly table: the same sums.
    await rollUpDay(app.db, day);
    await app
      .db('utilization_transfer_hourly')
      .where({ account: 'AUTH_dora' })
      .where('hour', '<', new Date(day + DAY))
      .del();
    expect(await read()).toEqual(hourly);
  });

  it('when CSV is asked (format=csv or Accept: text/csv), then a header row and RFC 4180 rows', async () => {
    await post(path('storage/'), {
      interval: 3600,
      sampled_at: iso(base + 2 * HOUR + 60_000),
      samples: [sample('AUTH_we,ird"one', 7)],
    });
    const range = `start=${iso(base)}&end=${iso(base + 4 * HOUR)}`;
    const list = await get(path(`storage/total/?${range}&format=csv`));
    expect(list.status).toBe(200);
    expect(list.headers['content-type']).toBe('text/csv; charset=utf-8; header=present');
    expect(list.text).toBe('account\r\nAUTH_alice\r\nAUTH_bob\r\nAUTH_gone\r\n"AUTH_we,ird""one"\r\n');
    const detail = await app
      .http()
      .get(path(`storage/0/AUTH_alice/detail/?${range}`))
      .set('Authorization', ADMIN_AUTH)
      .set('Accept', 'text/csv');
    expect(detail.headers['content-type']).toMatch(/^text\/csv/);
    expect(parseCsv(detail.text)).toEqual([
      ['start', 'end', 'bytes_used', 'object_count', 'container_count', 'pct_complete'],
      [utc(base), utc(base + HOUR), '600', '6', '1', '100'],
      [utc(base + HOUR), utc(base + 2 * HOUR), '2000', '20', '1', '50'],
      [utc(base + 2 * HOUR), utc(base + 3 * HOUR), '0', '0', '0', '0'],
      [utc(base + 3 * HOUR), utc(base + 4 * HOUR), '2000', '20', '1', '50'],
    ]);
    const summary = parseCsv((await get(path(`summary/?${range}&format=csv&account__startswith=AUTH_`))).text);
    expect(summary[0]).toEqual([
      'account',
      'start',
      'end',
      'hours',
      'bytes_used_avg',
      'bytes_used_peak',
      'object_count',
      'container_count',
      'bytes_in',
      'bytes_out',
      'req_count',
      'req_get',
      'req_head',
      'req_put',
      'req_post',
      'req_delete',
      'req_list',
      'req_copy',
      'req_other',
      'req_errors',
      's3_bytes_in',
      's3_bytes_out',
      's3_req_count',
      'internal_bytes_in',
      'internal_bytes_out',
      'internal_req_count',
      'storage_pct_complete',
      'transfer_pct_complete',
      'pct_complete',
      'quota_bytes',
      'quota_count',
      'quota_bytes_used_pct',
      'quota_count_used_pct',
      ...[0, 1].flatMap((p) =>
        [
          'bytes_used_avg',
          'bytes_used_peak',
          'object_count',
          'container_count',
          'quota_bytes',
          'quota_count',
          'quota_bytes_used_pct',
          'quota_count_used_pct',
        ].map((f) => `p${p}_${f}`),
      ),
    ]);
    expect(summary.slice(1).map((r) => r[0])).toEqual(['AUTH_alice', 'AUTH_bob', 'AUTH_gone', 'AUTH_we,ird"one']);
    expect(summary[1]!.slice(0, 11)).toEqual([
      'AUTH_alice',
      utc(base),
      utc(base + 4 * HOUR),
      '4',
      '2000',
      '3000',
      '20',
      '1',
      '1005',
      '317',
      '4',
    ]);
    // Explicit paging applies to exports too.
    expect(parseCsv((await get(path(`summary/?${range}&format=csv&limit=1&offset=1`))).text).map((r) => r[0])).toEqual([
      'account',
      'AUTH_bob',
    ]);
    // JSON stays the default, and an explicit format wins over Accept.
    const json = await app
      .http()
      .get(path(`storage/total/?${range}&format=json`))
      .set('Authorization', ADMIN_AUTH)
      .set('Accept', 'text/csv');
    expect(json.headers['content-type']).toBe('application/json');
  });

  it("when policy_headers=name, then the summary's CSV heads each policy's columns with its name, and p<index>_ stays the default", async () => {
    const range = `start=${iso(base)}&end=${iso(base + 4 * HOUR)}`;
    const csv = async (extra: string) => {
      const res = await get(path(`summary/?${range}&format=csv${extra}`));
      expect(res.status).toBe(200);
      return parseCsv(res.text);
    };
    const policyColumns = (header: string[]) => header.slice(header.indexOf('quota_count_used_pct') + 1);
    const figures = (prefix: string) =>
      [
        'bytes_used_avg',
        'bytes_used_peak',
        'object_count',
        'container_count',
        'quota_bytes',
        'quota_count',
        'quota_bytes_used_pct',
        'quota_count_used_pct',
      ].map((f) => `${prefix}_${f}`);
    const byIndex = await csv('');
    const byName = await csv('&policy_headers=name');
    expect(policyColumns(byName[0]!)).toEqual([...figures('gold'), ...figures('silver')]);
    // Only the header changes: the account columns and every row are those of the index export.
    expect(byName[0]!.slice(0, 18)).toEqual(byIndex[0]!.slice(0, 18));
    expect(byName.slice(1)).toEqual(byIndex.slice(1));
    expect(byIndex.length).toBeGreaterThan(1);
    // The 1.0 headers, by default and when asked for.
    expect(policyColumns(byIndex[0]!)).toEqual([...figures('p0'), ...figures('p1')]);
    expect(await csv('&policy_headers=index')).toEqual(byIndex);
    // An explicitly paged export names them too.
    expect(policyColumns((await csv('&policy_headers=name&limit=1'))[0]!)).toEqual([
      ...figures('gold'),
      ...figures('silver'),
    ]);
  });

  it("when a policy's name is unknown or looks like an index column, then its columns keep p<index>_; a name starting with '-' is written as quoted text", async () => {
    const cluster = await createCluster(app, `policy-headers-${kind}`);
    const report = (policies: Array<{ index: number; name: string; default?: boolean }>) =>
      app
        .http()
        .put(`/api/v1/clusters/${cluster.id}/devices/`)
        .set('Authorization', ADMIN_AUTH)
        .send({ policies, devices: [] });
    // 'p2' would pass for policy 2's columns; bronze (2) is then dropped from the device report.
    expect(
      (
        await report([
          { index: 0, name: 'p2', default: true },
          { index: 1, name: '-cold' },
          { index: 2, name: 'bronze' },
        ])
      ).status,
    ).toBe(204);
    const stored = await post(`/api/v1/clusters/${cluster.id}/utilization/storage/`, {
      interval: 3600,
      sampled_at: iso(base + 60_000),
      samples: [
        sample('AUTH_named', 600, [
          [0, 100],
          [1, 200],
          [2, 300],
        ]),
      ],
    });
    expect(stored.status).toBe(200);
    expect(
      (
        await report([
          { index: 0, name: 'p2', default: true },
          { index: 1, name: '-cold' },
        ])
      ).status,
    ).toBe(204);
    const res = await get(
      `/api/v1/clusters/${cluster.id}/utilization/summary/?start=${iso(base)}&end=${iso(base + HOUR)}&format=csv&policy_headers=name`,
    );
    expect(res.status).toBe(200);
    const [header, row] = parseCsv(res.text);
    const avg = header!.filter((c) => c.endsWith('_bytes_used_avg') && c !== 'bytes_used_avg');
    expect(avg).toEqual(['p0_bytes_used_avg', "'-cold_bytes_used_avg", 'p2_bytes_used_avg']);
    // Spreadsheets would run -cold_… as a formula: the writer quotes it behind a single quote, as any text.
    expect(res.text.split('\r\n')[0]).toContain(`,"'-cold_bytes_used_avg",`);
    expect(avg.map((c) => row![header!.indexOf(c)])).toEqual(['100', '200', '300']);
    expect(new Set(header).size).toBe(header!.length);
  });

  it('when policy_headers is neither index nor name, then the summary answers 400 with a sentence, in any format', async () => {
    const range = `start=${iso(base)}&end=${iso(base + HOUR)}`;
    for (const query of ['&policy_headers=names', '&policy_headers=', '&format=csv&policy_headers=NAME']) {
      const res = await get(path(`summary/?${range}${query}`));
      expect({ query, status: res.status }).toEqual({ query, status: 400 });
      expect(res.body.error).toBe(
        "The 'policy_headers' parameter must be 'index' (p<index>_ columns, the default) or 'name' (the storage policy's name).",
      );
    }
  });

  it('when account names hold spaces or other characters a username may have, then samples and log sums are recorded and read back in JSON, CSV and XML', async () => {
    await createUser(app, 'a b');
    // An hour of its own, before the day the other tests' summaries read.
    const hour = Math.floor(base / DAY) * DAY - 6 * HOUR;
    const range = `start=${iso(hour)}&end=${iso(hour + HOUR)}`;
    // A username of 251 characters gives Swift's longest account name (256); an older username
    // may hold characters beyond Latin-1.
    const longest = `AUTH_${'x'.repeat(251)}`;
    const accounts = ['AUTH_100% "sure", #1?', 'AUTH_a b', longest, 'AUTH_日本'];
    const stored = await post(path('storage/'), {
      interval: 3600,
      sampled_at: iso(hour + 60_000),
      samples: accounts.map((a, i) => sample(a, 100 * (i + 1))),
    });
    expect(stored.status).toBe(200);
    expect(stored.body).toEqual({ accepted: 4, duplicate: false });
    const sums = await post(path('transfer/'), {
      batch_id: `batch-${kind}-spaces`,
      records: [{ account: 'AUTH_a b', hour: iso(hour), bytes_in: 7, bytes_out: 8, req_count: 1 }],
    });
    expect(sums.body).toEqual({ accepted: 1, duplicate: false, unattributed: { records: 0, requests: 0 } });

    const detail = await get(path(`storage/total/${encodeURIComponent('AUTH_a b')}/detail/?${range}`));
    expect(detail.status).toBe(200);
    expect(detail.body.meta).toMatchObject({ account: 'AUTH_a b', total_count: 1 });
    expect(detail.body.objects[0]).toMatchObject({ bytes_used: 200, pct_complete: 100 });
    expect(
      (await get(path(`transfer/total/${encodeURIComponent('AUTH_a b')}/detail/?${range}`))).body.objects[0],
    ).toMatchObject({ bytes_in: 7, bytes_out: 8 });
    expect(
      (await get(path(`storage/total/${encodeURIComponent(accounts[0]!)}/detail/?${range}`))).body.objects[0],
    ).toMatchObject({ bytes_used: 100 });
    expect((await get(path(`storage/total/?${range}&account=${encodeURIComponent('AUTH_a b')}`))).body.objects).toEqual(
      [{ account: 'AUTH_a b' }],
    );
    expect((await get(path(`accounts/?account=${encodeURIComponent('AUTH_a b')}`))).body.objects).toEqual([
      { account: 'AUTH_a b' },
    ]);

    // Byte order: ' ' and '1' sort before letters, and '日' after every ASCII character.
    const csv = parseCsv((await get(path(`storage/total/?${range}&format=csv`))).text);
    expect(csv).toEqual([['account'], ...accounts.map((a) => [a])]);
    const summary = parseCsv((await get(path(`summary/?${range}&format=csv`))).text);
    expect(summary.slice(1).map((r) => [r[0], r[4]])).toEqual(accounts.map((a, i) => [a, String(100 * (i + 1))]));
    const detailCsv = parseCsv(
      (await get(path(`storage/total/${encodeURIComponent('AUTH_a b')}/detail/?${range}&format=csv`))).text,
    );
    expect(detailCsv[1]!.slice(0, 3)).toEqual([utc(hour), utc(hour + HOUR), '200']);
    const xml = await parseStringPromise((await get(path(`storage/total/?${range}&format=xml`))).text);
    expect(xml.response.objects[0].object.map((o: { account: string[] }) => o.account[0])).toEqual(accounts);
    const xmlDetail = await parseStringPromise(
      (await get(path(`storage/total/${encodeURIComponent('AUTH_a b')}/detail/?${range}&format=xml`))).text,
    );
    expect(xmlDetail.response.meta[0].account[0]).toBe('AUTH_a b');

    // Still refused: a '/', a control character, and a name longer than Swift allows.
    for (const account of ['AUTH_a/b', 'AUTH_a\u0001b', 'AUTH_a\u0085b', `${longest}x`]) {
      const res = await post(path('storage/'), {
        interval: 3600,
        sampled_at: iso(hour + 60_000),
        samples: [sample('AUTH_fine', 1), sample(account, 1)],
      });
      expect({ account, status: res.status }).toEqual({ account, status: 400 });
      expect(res.body.error).toMatch(/'samples\[1\]\.account' must be a Swift account name/);
      const log = await post(path('transfer/'), {
        batch_id: `batch-${kind}-bad-account`,
        records: [{ account, hour: iso(hour), bytes_in: 1, bytes_out: 1, req_count: 1 }],
      });
      expect(log.body).toMatchObject({ accepted: 0, refused_count: 1 });
      expect(log.body.refused[0].reason).toMatch(/'records\[0\]\.account' must be a Swift account name/);
    }
    expect((await get(path(`accounts/?account=AUTH_fine`))).body.objects).toEqual([]);
  });

  it('when XML is asked, then tastypie XML with typed numbers', async () => {
    const res = await get(path(`storage/0/AUTH_alice/detail/?start=${iso(base)}&end=${iso(base + HOUR)}&format=xml`));
    expect(res.headers['content-type']).toMatch(/^application\/xml/);
    const doc = await parseStringPromise(res.text);
    expect(doc.response.meta[0].account[0]).toBe('AUTH_alice');
    expect(res.text).toContain('<bytes_used type="integer">600</bytes_used>');
    const summary = await get(path(`summary/?start=${iso(base)}&end=${iso(base + HOUR)}&format=xml`));
    await expect(parseStringPromise(summary.text)).resolves.toBeTruthy();
  });

  it('when readers, limited operators and strangers call, then reads and writes follow their cluster limits', async () => {
    const other = await createCluster(app, `elsewhere-${kind}`);
    const reader = await createOperator(app, `u-reader-${kind}`, 'reader', ['/api/v1/clusters/1/']);
    const outsider = await createOperator(app, `u-outsider-${kind}`, 'reader', [`/api/v1/clusters/${other.id}/`]);
    const collector = await createOperator(app, `u-collector-${kind}`, 'admin', ['/api/v1/clusters/1/']);
    const elsewhere = await createOperator(app, `u-elsewhere-${kind}`, 'admin', [`/api/v1/clusters/${other.id}/`]);
    const range = `start=${iso(base)}&end=${iso(base + HOUR)}`;
    expect((await get(path(`summary/?${range}`), reader)).status).toBe(200);
    expect((await get(path(`summary/?${range}`), outsider)).status).toBe(404);
    // The policies the collector maps Swift's header names with: readable like the rest.
    expect((await get(path('policies/'), reader)).body).toMatchObject({
      meta: { total_count: 2 },
      objects: [
        { index: 0, name: 'gold', default: true },
        { index: 1, name: 'silver', default: false },
      ],
    });
    expect((await get(path('policies/'), outsider)).status).toBe(404);
    const window = await get(path('window/'), reader);
    expect(window.status).toBe(200);
    // The oldest hour a write may name: the retention's first whole hour plus a day of margin.
    const oldest = Math.floor((Date.now() - 90 * DAY) / HOUR) * HOUR + DAY;
    expect([oldest - HOUR, oldest]).toContain(Date.parse(window.body.oldest));
    expect(Date.parse(window.body.latest) - Date.now()).toBeGreaterThan(14 * 60_000);
    expect((await get(path('window/'), outsider)).status).toBe(404);
    expect((await get(path(`storage/0/AUTH_alice/detail/?${range}`), outsider)).status).toBe(404);
    expect(
      (await get(path(`summary/?${range}`), 'ApiKey root:wrong-key-0123456789abcdefghijklmnopqrstuv')).status,
    ).toBe(401);
    const body = { interval: 3600, sampled_at: iso(base + 60_000), samples: [sample('AUTH_alice', 1)] };
    expect((await post(path('storage/'), body, reader)).status).toBe(403);
    expect((await post(path('storage/'), body, elsewhere)).status).toBe(404);
    expect((await post(path('storage/'), body, collector)).status).toBe(200);
    const audit = await app
      .db('audit_log')
      .where({ action: 'record_utilization', operator_name: `u-collector-${kind}` });
    expect(audit).toHaveLength(1);
  });

  it('when a reader writes, then 403 whatever it sends: a wrong Content-Type, bad JSON or a bad charset', async () => {
    const reader = await createOperator(app, `u-reader-any-${kind}`, 'reader', ['/api/v1/clusters/1/']);
    const bodies: Array<[string, string]> = [
      ['text/plain', 'hello'],
      ['application/json', '{"samples": ['],
      ['application/json; charset=latin1', '{}'],
      ['application/xml', '<object><samples>'],
    ];
    for (const write of ['storage/', 'transfer/']) {
      for (const [type, text] of bodies) {
        const res = await app
          .http()
          .post(path(write))
          .set('Authorization', reader)
          .set('Content-Type', type)
          .send(text);
        expect({ write, type, status: res.status }).toEqual({ write, type, status: 403 });
      }
    }
    // An admin sending the same still learns what is wrong with it.
    const admin = await app
      .http()
      .post(path('storage/'))
      .set('Authorization', ADMIN_AUTH)
      .set('Content-Type', 'text/plain')
      .send('hello');
    expect(admin.status).toBe(415);
  });

  it('when a write is malformed, then 400 names the problem and nothing is stored', async () => {
    const before = await countRows(app.db, 'utilization_storage_hourly');
    const bad: Array<[unknown, RegExp]> = [
      [
        {
          sampled_at: iso(base),
          samples: [{ account: 'AUTH_x', bytes_used: -1, object_count: 0, container_count: 0 }],
        },
        /bytes_used/,
      ],
      [{ sampled_at: iso(base), interval: 700, samples: [] }, /must divide an hour/],
      [{ sampled_at: 'soon', samples: [] }, /'sampled_at' must be an ISO 8601/],
      [{ sampled_at: iso(Date.now() + DAY), samples: [] }, /in the future/],
      [{ sampled_at: iso(Date.now() - 100 * DAY), samples: [] }, /older than the hourly retention/],
      [
        {
          sampled_at: iso(base),
          samples: [
            sample('AUTH_x', 1),
            {
              ...sample('AUTH_y', 1),
              policies: [{ name: 'platinum', bytes_used: 1, object_count: 1, container_count: 1 }],
            },
          ],
        },
        /Unknown storage policy name\(s\) 'platinum'/,
      ],
      [
        {
          sampled_at: iso(base),
          samples: [{ account: 'AUTH_a/b', bytes_used: 1, object_count: 1, container_count: 1 }],
        },
        /Swift account name/,
      ],
    ];
    for (const [body, message] of bad) {
      const res = await post(path('storage/'), body);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(message);
    }
    expect(await countRows(app.db, 'utilization_storage_hourly')).toBe(before);
    // A transfer batch's envelope is checked whole (its records one by one: see below).
    expect((await post(path('transfer/'), { records: [] })).body.error).toMatch(/batch_id/);
    expect((await post(path('transfer/'), { batch_id: 'b-00000001', records: {} })).status).toBe(400);
    expect(
      (
        await post(path('transfer/'), {
          batch_id: 'b-00000002',
          covered: { start: 'soon', end: iso(base) },
          records: [],
        })
      ).body.error,
    ).toMatch(/'covered.start' must be an ISO 8601/);
  });

  it('when a storage sample names a policy index the cluster does not have, then 400 names the sample and the index and nothing is stored', async () => {
    const before = await countRows(app.db, 'utilization_storage_hourly');
    const res = await post(path('storage/'), {
      interval: 3600,
      sampled_at: iso(base + 60_000),
      samples: [
        sample('AUTH_alice', 10, [
          [0, 5],
          [1, 5],
        ]),
        sample('AUTH_x', 10, [[7, 10]]),
        sample('AUTH_y', 10, [
          [1, 5],
          [9, 5],
        ]),
      ],
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(
      /Unknown storage policy index\(es\) for cluster 1 \(its policies are 0, 1\): samples\[1\]\.policies\[0\]\.index 7; samples\[2\]\.policies\[1\]\.index 9\./,
    );
    expect(await countRows(app.db, 'utilization_storage_hourly')).toBe(before);
    // Neither a detail nor the summary's per-policy columns learn of it.
    const range = `start=${iso(base)}&end=${iso(base + HOUR)}`;
    expect((await get(path(`storage/7/?${range}`))).body.meta.total_count).toBe(0);
    const header = parseCsv((await get(path(`summary/?${range}&format=csv&limit=1`))).text)[0]!;
    expect(header.filter((c) => /^p\d+_bytes_used_avg$/.test(c))).toEqual(['p0_bytes_used_avg', 'p1_bytes_used_avg']);
    expect((await get(path(`accounts/?account=AUTH_x`))).body.objects).toEqual([]);
  });

  it('when a log names accounts the cluster never had a user for, then they are answered as unattributed, neither billed nor learnt', async () => {
    // What an unauthenticated request to /v1/<anything> leaves in the proxy's log, refused or not.
    const hour = Math.floor(base / DAY) * DAY - 12 * HOUR;
    const range = `start=${iso(hour)}&end=${iso(hour + HOUR)}`;
    const formula = '=HYPERLINK(CONCAT("http",CHAR(58),CHAR(47),CHAR(47),"evil.example"),"Open invoice")';
    const res = await post(path('transfer/'), {
      batch_id: `batch-${kind}-strangers`,
      records: [
        { account: formula, hour: iso(hour), bytes_in: 10, bytes_out: 20, req_count: 3 },
        { account: 'AUTH_legacy', hour: iso(hour), bytes_in: 1, bytes_out: 1, req_count: 2 },
        { account: 'AUTH_alice', policy_index: 0, hour: iso(hour), bytes_in: 5, bytes_out: 6, req_count: 1 },
        // A deleted user's account is still known: billed.
        { account: 'AUTH_gone', hour: iso(hour), bytes_in: 7, bytes_out: 8, req_count: 1 },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ accepted: 2, duplicate: false, unattributed: { records: 2, requests: 5 } });
    for (const account of [formula, 'AUTH_legacy']) {
      expect((await get(path(`accounts/?account=${encodeURIComponent(account)}`))).body.objects).toEqual([]);
      expect(
        (await get(path(`transfer/total/${encodeURIComponent(account)}/detail/?${range}`))).body.meta.total_count,
      ).toBe(0);
    }
    expect(
      parseCsv((await get(path(`summary/?${range}&format=csv`))).text)
        .slice(1)
        .map((r) => [r[0], r[8]]),
    ).toEqual([
      ['AUTH_alice', '5'],
      ['AUTH_gone', '7'],
    ]);
    const audit = await get(`/api/v1/audit/?action=record_utilization&limit=1`);
    expect(audit.body.objects[0].after).toMatchObject({
      batch_id: `batch-${kind}-strangers`,
      records: 4,
      unattributed: 2,
    });
  });

  it('when an account name starts like a spreadsheet formula, then every CSV export writes it as quoted text behind a single quote, and numbers stay numbers', async () => {
    const hour = Math.floor(base / DAY) * DAY - 14 * HOUR;
    const range = `start=${iso(hour)}&end=${iso(hour + HOUR)}`;
    const formula = '=HYPERLINK(CONCAT("http",CHAR(58),CHAR(47),CHAR(47),"evil.example"),"Open invoice")';
    // (A tab or a CR is no account name: the unit tests cover those cells.)
    const names = [formula, '+1+2', '-2+3', '@SUM(A1)'];
    // Storage samples may name any account (the collector sends those it HEADs).
    const stored = await post(path('storage/'), {
      interval: 3600,
      sampled_at: iso(hour + 60_000),
      samples: names.map((a, i) => sample(a, 100 * (i + 1))),
    });
    expect(stored.status).toBe(200);
    const escaped = (name: string) => `"'${name.replace(/"/g, '""')}"`;
    const list = await get(path(`storage/total/?${range}&format=csv`));
    expect(list.text.split('\r\n').slice(1, -1).sort()).toEqual(names.map(escaped).sort());
    const summary = await get(path(`summary/?${range}&format=csv`));
    const lines = summary.text.split('\r\n').slice(1, -1);
    for (const [i, name] of names.entries()) {
      const line = lines.find((l) => l.startsWith(`${escaped(name)},`));
      // The figures right after the name and the two times are bare numbers.
      expect({ name, line: line?.slice(escaped(name).length).split(',').slice(3, 5) }).toEqual({
        name,
        line: ['1', String(100 * (i + 1))],
      });
    }
    // Read back by a CSV parser, the cell is the name behind a quote: text, never a formula.
    expect(
      parseCsv(summary.text)
        .slice(1)
        .map((r) => r[0])
        .sort(),
    ).toEqual(names.map((n) => `'${n}`).sort());
  });

  it('when maintenance runs, then days roll up and partitions past the retention are dropped', async () => {
    const retention = { hourlyDays: 90, dailyDays: 1095 };
    // Whole days, so that the summary reads rollups once they exist.
    const day0 = Math.floor(base / DAY) * DAY;
    const summaryPath = path(`summary/?start=${iso(day0)}&end=${iso(day0 + 2 * DAY)}`);
    const before = await get(summaryPath);
    const first = await maintainUtilization(app.db, retention, new Date());
    // The days the samples of [base, base + 4h) fall on: one, or two when base is late in a day.
    const sampledDays = [...new Set([base, base + 3 * HOUR].map((t) => new Date(t).toISOString().slice(0, 10)))];
    expect(first.rolledUp).toEqual(expect.arrayContaining(sampledDays));
    const daily = await app.db('utilization_storage_daily').where({ account: 'AUTH_alice', policy_index: -1 });
    // Alice's totals: 1000 + 3000 + 2000 byte-hours in 3 sampled hours, peak 3000 (on one day or two).
    expect(daily.reduce((t, d) => t + Number(d.byte_hours), 0)).toBe(6000);
    expect(daily.reduce((t, d) => t + Number(d.sampled_hours), 0)).toBe(3);
    expect(Math.max(...daily.map((d) => Number(d.bytes_used_peak)))).toBe(3000);
    // Read from the rollups, the summary is the same as from the hourly rows.
    const after = await get(summaryPath);
    expect(after.body).toEqual(before.body);
    expect(after.body.objects[0]).toMatchObject({
      account: 'AUTH_alice',
      bytes_used_avg: 2000,
      bytes_used_peak: 3000,
      object_count: 20,
      bytes_in: 1005,
    });
    // A late sample for a rolled day sends that day back to the hourly rows until it is rolled again.
    await post(path('storage/'), {
      interval: 3600,
      sampled_at: iso(base + 2 * HOUR + 60_000),
      samples: [sample('AUTH_alice', 9000)],
    });
    expect((await get(summaryPath)).body.objects[0].bytes_used_peak).toBe(9000);
    // 100 days on, the hourly partitions of today are gone; the rollups stay.
    const later = await maintainUtilization(app.db, retention, new Date(Date.now() + 100 * DAY));
    const monday = Math.floor((base - 4 * DAY) / (7 * DAY)) * 7 * DAY + 4 * DAY;
    expect(later.dropped).toContain(
      `utilization_storage_hourly_w${new Date(monday).toISOString().slice(0, 10).replace(/-/g, '')}`,
    );
    expect(await countRows(app.db, 'utilization_storage_hourly')).toBe(0);
    expect(await countRows(app.db, 'utilization_storage_daily')).toBeGreaterThan(0);
  });
});
