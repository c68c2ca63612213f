import { ADMIN_AUTH, DB_KINDS, createUser, startTestApp, type TestApp } from '../support/harness';

/**
 * CSV exports read accounts in batches by key and write each batch as it comes. With a batch of 3
 * and 11 accounts, every export crosses several batch boundaries: each row must appear exactly
 * once, in order, and the database must be read one batch at a time.
 */
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const BATCH = 3;
const iso = (ms: number) => new Date(ms).toISOString();

describe.each(DB_KINDS)('utilization CSV exports in batches on %s', (kind) => {
  let app: TestApp;
  const base = Math.floor(Date.now() / HOUR) * HOUR - 2 * DAY;
  const range = `start=${iso(base)}&end=${iso(base + 2 * HOUR)}`;
  /** Storage for 10 accounts; one more has transfer only (the summary takes both). */
  const stored = Array.from({ length: 10 }, (_, i) => `AUTH_e${String(i).padStart(2, '0')}`);
  const all = [...stored, 'AUTH_t00'].sort();
  const get = (p: string) => app.http().get(`/api/v1/clusters/1/utilization/${p}`).set('Authorization', ADMIN_AUTH);

  /** Rows of a CSV without quoted fields (no account here needs quoting). */
  const rows = (text: string) =>
    text
      .split('\r\n')
      .filter((l) => l !== '')
      .map((l) => l.split(','));

  /** The queries the export runs whose SQL matches `pattern`. */
  async function counting<T>(pattern: RegExp, fn: () => Promise<T>): Promise<{ result: T; queries: number }> {
    let queries = 0;
    const listener = (q: { sql: string }) => {
      if (pattern.test(q.sql)) queries++;
    };
    app.db.on('query', listener);
    try {
      return { result: await fn(), queries };
    } finally {
      app.db.off('query', listener);
    }
  }

  beforeAll(async () => {
    app = await startTestApp(kind, { utilizationExportBatch: BATCH });
    // Logs bill only accounts the cluster has had a user for.
    await createUser(app, 't00');
    // The samples name policy 0: the cluster's device report lists it.
    const report = await app
      .http()
      .put('/api/v1/clusters/1/devices/')
      .set('Authorization', ADMIN_AUTH)
      .send({ policies: [{ index: 0, name: 'gold', default: true }], devices: [] });
    expect(report.status).toBe(204);
    const samples = stored.map((account, i) => ({
      account,
      bytes_used: 100 * (i + 1),
      object_count: i + 1,
      container_count: 1,
      policies: [{ index: 0, bytes_used: 100 * (i + 1), object_count: i + 1, container_count: 1 }],
    }));
    const storage = await app
      .http()
      .post('/api/v1/clusters/1/utilization/storage/')
      .set('Authorization', ADMIN_AUTH)
      .send({ interval: 3600, sampled_at: iso(base + 60_000), samples });
    expect(storage.status).toBe(200);
    const transfer = await app
      .http()
      .post('/api/v1/clusters/1/utilization/transfer/')
      .set('Authorization', ADMIN_AUTH)
      .send({
        batch_id: `export-${kind}-1`,
        records: [{ account: 'AUTH_t00', hour: iso(base), bytes_in: 5, bytes_out: 6, req_count: 1 }],
      });
    expect(transfer.status).toBe(200);
  });
  afterAll(() => app.close());

  it('when the summary is exported as CSV, then it is read in batches and every account appears once, in order, as in JSON', async () => {
    const { result: res, queries } = await counting(/\bunion\b/i, async () => get(`summary/?${range}&format=csv`));
    expect(res.status).toBe(200);
    // Streamed: no length known up front.
    expect(res.headers['transfer-encoding']).toBe('chunked');
    const [header, ...body] = rows(res.text);
    expect(body.map((r) => r[0])).toEqual(all);
    // 11 accounts in batches of 3: 3 + 3 + 3 + 2, the short last batch ends the export.
    expect(queries).toBe(Math.ceil(all.length / BATCH));
    const json = (await get(`summary/?${range}&limit=100`)).body.objects as Array<Record<string, unknown>>;
    const avg = header!.indexOf('bytes_used_avg');
    const bytesIn = header!.indexOf('bytes_in');
    expect(body.map((r) => [r[0], Number(r[avg]), Number(r[bytesIn])])).toEqual(
      json.map((o) => [o.account, o.bytes_used_avg, o.bytes_in]),
    );
  });

  it('when an account list is exported as CSV, then it is read in batches and every account appears once', async () => {
    const { result: res, queries } = await counting(/utilization_storage_hourly/, async () =>
      get(`storage/total/?${range}&format=csv`),
    );
    expect(res.status).toBe(200);
    expect(rows(res.text)).toEqual([['account'], ...stored.map((a) => [a])]);
    // 10 accounts in batches of 3: 3 + 3 + 3 + 1.
    expect(queries).toBe(Math.ceil(stored.length / BATCH));
  });

  it('when the accounts fill the last batch exactly, then the export ends after one empty read, with no row twice', async () => {
    // AUTH_e04 .. AUTH_e09: 6 accounts, two full batches.
    const { result: res, queries } = await counting(/utilization_storage_hourly/, async () =>
      get(`storage/total/?${range}&format=csv&account__gt=AUTH_e03`),
    );
    expect(rows(res.text)).toEqual([['account'], ...stored.slice(4).map((a) => [a])]);
    expect(queries).toBe(3);
  });
});
