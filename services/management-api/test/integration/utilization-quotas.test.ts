import { parseStringPromise } from 'xml2js';
import { ADMIN_AUTH, DB_KINDS, createUser, cheapHashPassword, startTestApp, type TestApp } from '../support/harness';

/**
 * The billing summary beside each account's figures shows its user's quotas as they stand now, and
 * how much of them the account used: bytes at their peak, objects at the end of the range.
 */
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const iso = (ms: number) => new Date(ms).toISOString();
const INT8_MAX = '9223372036854775807';
const ODD = 'o,"{d}\\ n\'';

/** Rows of a CSV split at every comma: right for the rows read here, whose fields hold no comma or quote. */
const rows = (text: string) =>
  text
    .split('\r\n')
    .filter((l) => l !== '')
    .map((l) => l.split(','));

describe.each(DB_KINDS)('quotas in the utilization summary on %s', (kind) => {
  let app: TestApp;
  const base = Math.floor(Date.now() / HOUR) * HOUR - 2 * DAY;
  const range = `start=${iso(base)}&end=${iso(base + 2 * HOUR)}`;
  const get = (p: string) => app.http().get(p).set('Authorization', ADMIN_AUTH);
  const summary = (q = '') => get(`/api/v1/clusters/1/utilization/summary/?${range}&limit=100${q}`);
  const byAccount = (objects: Array<Record<string, unknown>>) => new Map(objects.map((o) => [o.account as string, o]));
  const patch = (id: unknown, body: Record<string, unknown>) =>
    app
      .http()
      .patch(`/api/v1/users/${String(id)}/`)
      .set('Authorization', ADMIN_AUTH)
      .send(body);
  /** An account's round: totals, then per policy [index, bytes, objects]. */
  const sample = (account: string, bytes: number, objects: number, policies: Array<[number, number, number]>) => ({
    account,
    bytes_used: bytes,
    object_count: objects,
    container_count: 1,
    policies: policies.map(([index, b, o]) => ({ index, bytes_used: b, object_count: o, container_count: 1 })),
  });
  let sold: Record<string, unknown>;

  beforeAll(async () => {
    app = await startTestApp(kind, { hashPassword: cheapHashPassword });
    const policies = [
      { index: 0, name: 'gold', default: true },
      { index: 1, name: 'Silver' },
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
    sold = await createUser(app, 'sold', {
      quota_bytes: 4000,
      quota_count: 40,
      quota_bytes_policy: { gold: 2000 },
      quota_count_policy: { silver: 10 },
    });
    await createUser(app, 'free');
    await createUser(app, 'huge', { quota_bytes: INT8_MAX });
    await createUser(app, 'zero', { quota_bytes: 0 });
    const gone = await createUser(app, 'gone', { quota_bytes: 1000 });
    // A name with what array and CSV syntax use: it must still find its user.
    await createUser(app, ODD, { quota_bytes: 500 });
    // Two hours: 'sold' peaks at 3000 bytes in the first and ends with 20 objects in the second.
    const rounds = [
      [
        sample('AUTH_sold', 3000, 30, [
          [0, 2500, 25],
          [1, 500, 5],
        ]),
        sample('AUTH_free', 100, 1, []),
        sample('AUTH_huge', 100, 1, []),
        sample('AUTH_zero', 100, 1, []),
        sample('AUTH_gone', 500, 5, []),
        sample(`AUTH_${ODD}`, 250, 1, []),
      ],
      [
        sample('AUTH_sold', 2000, 20, [
          [0, 1500, 15],
          [1, 500, 5],
        ]),
      ],
    ];
    for (const [i, samples] of rounds.entries()) {
      const res = await app
        .http()
        .post('/api/v1/clusters/1/utilization/storage/')
        .set('Authorization', ADMIN_AUTH)
        .send({ interval: 3600, sampled_at: iso(base + i * HOUR + 60_000), samples });
      expect(res.status).toBe(200);
    }
    // A deleted user's account stays in the summary (its data stays in Swift), without a quota.
    expect(
      (
        await app
          .http()
          .delete(`/api/v1/users/${String(gone.id)}/`)
          .set('Authorization', ADMIN_AUTH)
      ).status,
    ).toBe(204);
  });
  afterAll(() => app.close());

  it('when an account has quotas, then the summary shows them and the share used: bytes at the peak, objects at the end, per policy by name', async () => {
    const res = await summary();
    expect(res.status).toBe(200);
    const row = byAccount(res.body.objects).get('AUTH_sold')!;
    expect(row).toMatchObject({
      bytes_used_peak: 3000,
      object_count: 20,
      quota_bytes: 4000,
      quota_count: 40,
      quota_bytes_used_pct: 75,
      quota_count_used_pct: 50,
    });
    expect(row.policies).toEqual([
      // gold peaked at 2500 of 2000: over its quota, which Swift's asynchronous usage lets happen.
      {
        policy_index: 0,
        bytes_used_avg: 2000,
        bytes_used_peak: 2500,
        object_count: 15,
        container_count: 1,
        quota_bytes: 2000,
        quota_count: null,
        quota_bytes_used_pct: 125,
        quota_count_used_pct: null,
      },
      // The quota was set as 'silver'; the cluster spells the policy 'Silver'.
      {
        policy_index: 1,
        bytes_used_avg: 500,
        bytes_used_peak: 500,
        object_count: 5,
        container_count: 1,
        quota_bytes: null,
        quota_count: 10,
        quota_bytes_used_pct: null,
        quota_count_used_pct: 50,
      },
    ]);
  });

  it('when an account has no quota, its user is deleted, or the quota is 0, then the quota fields are null (the quota itself stays 0)', async () => {
    const rows = byAccount((await summary()).body.objects);
    const none = { quota_bytes: null, quota_count: null, quota_bytes_used_pct: null, quota_count_used_pct: null };
    expect(rows.get('AUTH_free')).toMatchObject(none);
    expect(rows.get('AUTH_gone')).toMatchObject({ bytes_used_peak: 500, ...none });
    expect(rows.get('AUTH_zero')).toMatchObject({ quota_bytes: 0, quota_bytes_used_pct: null });
    expect(rows.get(`AUTH_${ODD}`)).toMatchObject({ quota_bytes: 500, quota_bytes_used_pct: 50 });
  });

  it('when a quota changes after the range, then the summary shows the quota as it stands now', async () => {
    expect((await patch(sold.id, { quota_bytes: 6000 })).status).toBe(202);
    try {
      expect(byAccount((await summary('&account=AUTH_sold')).body.objects).get('AUTH_sold')).toMatchObject({
        quota_bytes: 6000,
        quota_bytes_used_pct: 50,
      });
    } finally {
      expect((await patch(sold.id, { quota_bytes: 4000 })).status).toBe(202);
    }
  });

  it('when the summary is exported as CSV, then the quota columns follow the figures, per policy too, empty without a quota and exact past 2^53', async () => {
    const res = await summary('&format=csv');
    expect(res.status).toBe(200);
    const [header, ...body] = rows(res.text);
    const cells = (account: string) => {
      const row = body.find((r) => r[0] === account)!;
      return Object.fromEntries(header!.map((h, i) => [h, row[i]]));
    };
    expect(header!.slice(header!.indexOf('pct_complete') + 1, header!.indexOf('p0_bytes_used_avg'))).toEqual([
      'quota_bytes',
      'quota_count',
      'quota_bytes_used_pct',
      'quota_count_used_pct',
    ]);
    expect(cells('AUTH_sold')).toMatchObject({
      quota_bytes: '4000',
      quota_count: '40',
      quota_bytes_used_pct: '75',
      quota_count_used_pct: '50',
      p0_quota_bytes: '2000',
      p0_quota_count: '',
      p0_quota_bytes_used_pct: '125',
      p0_quota_count_used_pct: '',
      p1_quota_bytes: '',
      p1_quota_count: '10',
      p1_quota_bytes_used_pct: '',
      p1_quota_count_used_pct: '50',
    });
    expect(cells('AUTH_free')).toMatchObject({
      quota_bytes: '',
      quota_count: '',
      quota_bytes_used_pct: '',
      quota_count_used_pct: '',
    });
    expect(cells('AUTH_huge')).toMatchObject({ quota_bytes: INT8_MAX, quota_bytes_used_pct: '0' });
  });

  it('when the summary is asked in JSON or XML, then a quota past 2^53 is written with every digit, and a missing one is null', async () => {
    const json = await summary('&account=AUTH_huge');
    expect(json.text).toContain(`"quota_bytes": ${INT8_MAX}`);
    const xml = await summary('&account__startswith=AUTH_&format=xml');
    expect(xml.status).toBe(200);
    const parsed = await parseStringPromise(xml.text);
    const objects = parsed.response.objects[0].object as Array<
      Record<string, Array<{ _?: string; $: { type: string } }>>
    >;
    const field = (account: string, name: string) =>
      objects.find((o) => (o.account![0] as unknown as string) === account)![name]![0]!;
    expect(field('AUTH_huge', 'quota_bytes')).toEqual({ _: INT8_MAX, $: { type: 'integer' } });
    expect(field('AUTH_sold', 'quota_bytes_used_pct')).toEqual({ _: '75', $: { type: 'integer' } });
    expect(field('AUTH_free', 'quota_count')).toEqual({ $: { type: 'null' } });
  });

  it('when the OpenAPI document is read, then the summary rows and their policies declare the quota fields', async () => {
    const doc = (await app.http().get('/api/v1/openapi.json')).body;
    const item =
      doc.paths['/api/v1/clusters/{id}/utilization/summary/'].get.responses['200'].content['application/json'].schema
        .properties.objects.items;
    for (const schema of [item, item.properties.policies.items]) {
      expect(schema.required).toEqual(
        expect.arrayContaining(['quota_bytes', 'quota_count', 'quota_bytes_used_pct', 'quota_count_used_pct']),
      );
      expect(schema.properties.quota_bytes.type).toEqual(['integer', 'null']);
      expect(schema.properties.quota_bytes_used_pct.type).toEqual(['number', 'null']);
    }
  });
});
