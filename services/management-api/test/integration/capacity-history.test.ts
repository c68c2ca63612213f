import { ADMIN_AUTH, DB_KINDS, createCluster, createOperator, startTestApp, type TestApp } from '../support/harness';

const TB = 1e12;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const POLICIES = [
  { index: 0, name: 'gold', default: true },
  { index: 1, name: 'silver' },
];
const report = (goldUsedTb: number) => ({
  policies: POLICIES,
  devices: [
    {
      node: '10.0.0.1:6200',
      device: 'sdb1',
      policies: ['gold'],
      used_bytes: goldUsedTb * TB,
      avail_bytes: (4 - goldUsedTb) * TB,
    },
    { node: '10.0.0.2:6200', device: 'sdb2', policies: ['silver'], used_bytes: 1 * TB, avail_bytes: 3 * TB },
  ],
});

describe.each(DB_KINDS)('capacity history on %s', (kind) => {
  let app: TestApp;
  let cluster: Record<string, unknown>;
  const get = (path: string, auth = ADMIN_AUTH) => app.http().get(path).set('Authorization', auth);
  const historyPath = (query = '') => `/api/v1/clusters/${cluster.id}/capacity/history/${query}`;

  beforeAll(async () => {
    app = await startTestApp(kind);
    cluster = await createCluster(app, 'history-east');
  });
  afterAll(() => app.close());

  it('when nothing was reported, then the history is empty, over the last 90 days by default', async () => {
    const res = await get(historyPath());
    expect(res.status).toBe(200);
    expect(res.body.history).toEqual([]);
    expect(res.body.meta.resolution).toBe('day');
    expect(Date.parse(res.body.meta.end) - Date.parse(res.body.meta.start)).toBeGreaterThanOrEqual(90 * DAY);
  });

  it('when devices are reported twice in an hour, then the hour has one sample per ring set, equal to capacity/list/ after the last report', async () => {
    const put = (body: object) =>
      app.http().put(`/api/v1/clusters/${cluster.id}/devices/`).set('Authorization', ADMIN_AUTH).send(body);
    expect((await put(report(1))).status).toBe(204);
    expect((await put(report(2))).status).toBe(204);
    const list = (await get(`/api/v1/clusters/${cluster.id}/capacity/list/`)).body.capacity as Array<
      Record<string, unknown>
    >;
    const res = await get(historyPath(`?start=${new Date(Date.now() - DAY).toISOString()}`));
    expect(res.status).toBe(200);
    expect(res.body.meta.resolution).toBe('hour');
    expect(res.body.history.map((h: { ring_set: string }) => h.ring_set)).toEqual(['gold', 'silver']);
    for (const h of res.body.history as Array<{ ring_set: string; samples: Array<Record<string, unknown>> }>) {
      expect(h.samples).toHaveLength(1);
      const now = list.find((c) => c.ring_set === h.ring_set)!;
      const { time, ...numbers } = h.samples[0]!;
      expect(numbers).toEqual({
        total_raw_tb: now.total_raw_tb,
        total_used_tb: now.total_used_tb,
        total_free_tb: now.total_free_tb,
        total_used_pct: now.total_used_pct,
      });
      expect(Date.parse(time as string) % HOUR).toBe(0);
    }
    expect(res.body.history[0].samples[0].total_used_tb).toBe(2);
  });

  it("when reports in one hour list different ring sets, then the hour holds only the last report's, and nothing after a report without devices", async () => {
    const own = await createCluster(app, 'history-changing');
    const put = (body: object) =>
      app.http().put(`/api/v1/clusters/${own.id}/devices/`).set('Authorization', ADMIN_AUTH).send(body);
    /** The ring sets of the hour of the cluster's latest report, as history and capacity/list/ show them. */
    const lastHour = async () => {
      const computed = (await app.db('capacity_reports').where({ cluster_id: own.id }).first()).computed_at as Date;
      const hour = new Date(Math.floor(new Date(computed).getTime() / HOUR) * HOUR).toISOString();
      const history = (
        await get(`/api/v1/clusters/${own.id}/capacity/history/?start=${new Date(Date.now() - DAY).toISOString()}`)
      ).body.history as Array<{ ring_set: string; samples: Array<{ time: string }> }>;
      const list = (await get(`/api/v1/clusters/${own.id}/capacity/list/`)).body.capacity as Array<{
        ring_set: string;
      }>;
      return {
        history: history.filter((h) => h.samples.some((s) => s.time === hour)).map((h) => h.ring_set),
        list: list.map((c) => c.ring_set),
      };
    };
    expect((await put(report(1))).status).toBe(204);
    expect(await lastHour()).toEqual({ history: ['gold', 'silver'], list: ['gold', 'silver'] });
    // silver's device goes; a device in both rings comes.
    const changed = {
      policies: POLICIES,
      devices: [
        report(1).devices[0],
        { node: '10.0.0.3:6200', device: 'sdb3', policies: ['gold', 'silver'], used_bytes: TB, avail_bytes: TB },
      ],
    };
    expect((await put(changed)).status).toBe(204);
    expect(await lastHour()).toEqual({ history: ['gold', 'gold,silver'], list: ['gold', 'gold,silver'] });
    expect((await put({ policies: POLICIES, devices: [] })).status).toBe(204);
    expect(await lastHour()).toEqual({ history: [], list: [] });
  });

  it('when samples span weeks, then hourly samples come in time order, and past 31 days the last sample of each day', async () => {
    const at = (daysAgo: number, hour: number) =>
      new Date(Math.floor((Date.now() - daysAgo * DAY) / DAY) * DAY + hour * HOUR);
    const rows = [
      [40, 3, 0.5],
      [40, 20, 0.6],
      [10, 1, 1.0],
      [10, 2, 1.2],
    ].map(([d, h, used]) => ({
      cluster_id: cluster.id,
      ring_set: 'gold',
      hour: at(d!, h!),
      total_raw_tb: 4,
      total_used_tb: used,
      total_free_tb: 4 - used!,
      total_used_pct: (used! / 4) * 100,
      reported_at: at(d!, h!),
    }));
    await app.db('capacity_history').insert(rows);
    const hourly = await get(historyPath(`?start=${at(11, 0).toISOString()}&end=${at(9, 0).toISOString()}`));
    expect(hourly.body.meta.resolution).toBe('hour');
    expect(hourly.body.history).toEqual([
      {
        ring_set: 'gold',
        samples: [
          expect.objectContaining({ time: at(10, 1).toISOString(), total_used_tb: 1 }),
          expect.objectContaining({ time: at(10, 2).toISOString(), total_used_tb: 1.2 }),
        ],
      },
    ]);
    const daily = await get(historyPath(`?start=${at(41, 0).toISOString()}`));
    expect(daily.body.meta.resolution).toBe('day');
    const gold = (
      daily.body.history as Array<{ ring_set: string; samples: Array<{ time: string; total_used_tb: number }> }>
    ).find((h) => h.ring_set === 'gold')!;
    expect(gold.samples.map((s) => [s.time, s.total_used_tb]).slice(0, 2)).toEqual([
      [at(40, 20).toISOString(), 0.6],
      [at(10, 2).toISOString(), 1.2],
    ]);
    const xml = await get(historyPath(`?start=${at(11, 0).toISOString()}&end=${at(9, 0).toISOString()}&format=xml`));
    expect(xml.status).toBe(200);
    expect(xml.text).toContain('<ring_set>gold</ring_set>');
  });

  it('when the range is malformed, reversed or too long, then 400 says what is wrong', async () => {
    const cases: Array<[string, RegExp]> = [
      ['?start=yesterday', /'yesterday' is not a valid start/],
      ['?start=2026-11-20&end=2026-11-10', /'end' must be after 'start'/],
      ['?start=2020-01-01&end=2026-01-01', /at most 1096 days/],
    ];
    for (const [query, message] of cases) {
      const res = await get(historyPath(query));
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(message);
    }
  });

  it('when a reader asks, then it sees the history; an operator limited to another cluster gets 404', async () => {
    const reader = await createOperator(app, 'history-reader', 'reader');
    expect((await get(historyPath(), reader)).status).toBe(200);
    const other = await createCluster(app, 'history-west');
    const limited = await createOperator(app, 'history-limited', 'admin', [other.resource_uri as string]);
    expect((await get(historyPath(), limited)).status).toBe(404);
  });

  it('when the cluster is deleted, then its history goes with it', async () => {
    const doomed = await createCluster(app, 'history-doomed');
    await app.http().put(`/api/v1/clusters/${doomed.id}/devices/`).set('Authorization', ADMIN_AUTH).send(report(1));
    expect(await app.db('capacity_history').where({ cluster_id: doomed.id })).toHaveLength(2);
    await app.db('clusters').where({ id: doomed.id }).delete();
    expect(await app.db('capacity_history').where({ cluster_id: doomed.id })).toHaveLength(0);
  });
});
