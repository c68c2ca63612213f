import { DAY_MS } from '@cairn/domain';
import { runUtilizationMaintenance } from '../../src/maintenance';
import {
  ADMIN_AUTH,
  DB_KINDS,
  createCluster,
  createOperator,
  createUser,
  cheapHashPassword,
  startTestApp,
  type TestApp,
} from '../support/harness';

/**
 * Billing cannot be stopped by one writer: an hour's transfer sums saturate instead of overflowing,
 * rollups run per cluster and per day (a failure stops nothing else, is retried, and shows in
 * /metrics), and a transfer batch with bad records keeps its good ones.
 */
const HOUR = 3_600_000;
const MAX = Number.MAX_SAFE_INTEGER; // 2^53 − 1
const iso = (ms: number) => new Date(ms).toISOString();
const isoDay = (ms: number) => iso(ms).slice(0, 10);
const RETENTION = { hourlyDays: 90, dailyDays: 1095 };

describe.each(DB_KINDS)('utilization billing isolation on %s', (kind) => {
  let app: TestApp;
  let east: number;
  let eastAdmin: string;
  const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
  const path = (cluster: number, rest: string) => `/api/v1/clusters/${cluster}/utilization/${rest}`;
  const post = (p: string, body: unknown, auth = ADMIN_AUTH) =>
    app
      .http()
      .post(p)
      .set('Authorization', auth)
      .send(body as object);
  const get = (p: string) => app.http().get(p).set('Authorization', ADMIN_AUTH);
  const record = (account: string, hour: number, bytesIn: number, extra: Record<string, unknown> = {}) => ({
    account,
    policy_index: 0,
    hour: iso(hour),
    bytes_in: bytesIn,
    bytes_out: 0,
    req_count: 1,
    ...extra,
  });
  const maintain = (now = new Date()) =>
    runUtilizationMaintenance(app.db, RETENTION, now, app.deps.log, app.deps.metrics!.rollups);
  const daily = (cluster: number, account: string, dayMs: number) =>
    app
      .db('utilization_transfer_daily')
      .where({ cluster_id: cluster, account, day: isoDay(dayMs) })
      .select(app.db.raw('bytes_in::text AS bytes_in'))
      .first() as Promise<{ bytes_in: string } | undefined>;

  beforeAll(async () => {
    app = await startTestApp(kind, { hashPassword: cheapHashPassword });
    east = Number((await createCluster(app, 'east')).id);
    for (const cluster of [1, east]) {
      const policies = [
        { index: 0, name: 'gold', default: true },
        { index: 1, name: 'silver' },
      ];
      expect(
        (
          await app
            .http()
            .put(`/api/v1/clusters/${cluster}/devices/`)
            .set('Authorization', ADMIN_AUTH)
            .send({ policies, devices: [] })
        ).status,
      ).toBe(204);
    }
    eastAdmin = await createOperator(app, 'metering-east', 'admin', [`/api/v1/clusters/${east}/`]);
    // Transfer is billed only to accounts the cluster has had a user for.
    for (const cluster of [1, east]) {
      for (const user of ['big', 'good', 'alice', 'carol', 'dave', 'zed'])
        await createUser(app, user, { cluster: `/api/v1/clusters/${cluster}/` });
    }
  });
  afterAll(() => app.close());

  it('when a cluster-limited admin posts 1,024 records of 2^53-1 bytes for one account-hour, then later batches with it still count, and maintenance rolls up every cluster and day', async () => {
    const day = today - 3 * DAY_MS;
    const otherDay = today - 4 * DAY_MS;
    const hour = day + 10 * HOUR;
    for (let b = 0; b < 4; b++) {
      const res = await post(
        path(east, 'transfer/'),
        { batch_id: `huge-${kind}-${b}`, records: Array.from({ length: 256 }, () => record('AUTH_big', hour, MAX)) },
        eastAdmin,
      );
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ accepted: 256, duplicate: false, unattributed: { records: 0, requests: 0 } });
    }
    // A later batch holding that account-hour, another hour of its day and another account.
    const later = await post(
      path(east, 'transfer/'),
      {
        batch_id: `later-${kind}`,
        records: [record('AUTH_big', hour, MAX), record('AUTH_good', hour, 5), record('AUTH_big', hour + HOUR, MAX)],
      },
      eastAdmin,
    );
    expect(later.status).toBe(200);
    expect(later.body).toEqual({ accepted: 3, duplicate: false, unattributed: { records: 0, requests: 0 } });
    expect(
      (
        await post(
          path(east, 'transfer/'),
          { batch_id: `other-day-${kind}`, records: [record('AUTH_good', otherDay + HOUR, 7)] },
          eastAdmin,
        )
      ).status,
    ).toBe(200);
    expect(
      (await post(path(1, 'transfer/'), { batch_id: `default-${kind}`, records: [record('AUTH_alice', hour, 100)] }))
        .status,
    ).toBe(200);

    const report = await maintain();
    expect(report?.failed).toEqual([]);
    expect(report?.rolledUp).toEqual(expect.arrayContaining([isoDay(day), isoDay(otherDay)]));
    // The other cluster, the cluster's other day and its other account are rolled up as sent.
    expect(await daily(1, 'AUTH_alice', day)).toEqual({ bytes_in: '100' });
    expect(await daily(east, 'AUTH_good', otherDay)).toEqual({ bytes_in: '7' });
    expect(await daily(east, 'AUTH_good', day)).toEqual({ bytes_in: '5' });
    // Each hour of the account saturated at 2^53-1; the day holds both hours exactly.
    expect(await daily(east, 'AUTH_big', day)).toEqual({ bytes_in: String(2 * MAX) });
    // Read from the rollup, the summary writes the sum as an exact JSON integer (past 2^53).
    const summary = await get(path(east, `summary/?start=${iso(day)}&end=${iso(day + DAY_MS)}&account=AUTH_big`));
    expect(summary.status).toBe(200);
    expect(summary.text).toContain(`"bytes_in": ${2n * BigInt(MAX)}`);
    const csv = await get(
      path(east, `summary/?start=${iso(day)}&end=${iso(day + DAY_MS)}&account=AUTH_big&format=csv`),
    );
    expect(csv.text.split('\r\n')[1]).toContain(`,${2n * BigInt(MAX)},`);
    expect((await get(path(1, `summary/?start=${iso(day)}&end=${iso(day + DAY_MS)}`))).body.objects[0]).toMatchObject({
      account: 'AUTH_alice',
      bytes_in: 100,
    });
  });

  it('when a transfer batch holds bad records, then only those are refused, each named by index and reason, and the good ones count', async () => {
    const hour = today - 5 * DAY_MS + 3 * HOUR;
    const future = Date.now() + DAY_MS;
    const records: unknown[] = [
      record('AUTH_carol', hour, 11),
      record('AUTH_carol', hour, 1, { policy_index: 7 }),
      record('AUTH_carol', hour + 60_000, 1),
      record('AUTH_a/b', hour, 1),
      record('AUTH_carol', hour, -1),
      record('AUTH_dave', hour, 22, { policy_index: null }),
      'not a record',
      record('AUTH_carol', future, 1),
      // The same hour again: refused again, under its own position.
      record('AUTH_dave', future, 2),
    ];
    const res = await post(path(1, 'transfer/'), { batch_id: `mixed-${kind}`, records });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ accepted: 2, duplicate: false, refused_count: 7 });
    const refused = res.body.refused as Array<{ index: number; reason: string }>;
    expect(refused.map((r) => r.index)).toEqual([1, 2, 3, 4, 6, 7, 8]);
    expect(refused[0]!.reason).toMatch(
      /'records\[1\]\.policy_index' 7 is not a storage policy of this cluster \(its policies are 0, 1\)/,
    );
    expect(refused[1]!.reason).toMatch(/records\[2\]\.hour.*must be the start of an hour/);
    expect(refused[2]!.reason).toMatch(/'records\[3\]\.account' must be a Swift account name/);
    expect(refused[3]!.reason).toMatch(/'records\[4\]\.bytes_in'/);
    expect(refused[4]!.reason).toMatch(/'records\[6\]' must be an object/);
    expect(refused[5]!.reason).toMatch(/^'records\[7\]\.hour' \(.*\) is in the future/);
    expect(refused[6]!.reason).toMatch(/^'records\[8\]\.hour' \(.*\) is in the future/);
    const detail = async (account: string) =>
      (await get(path(1, `transfer/total/${account}/detail/?start=${iso(hour)}&end=${iso(hour + HOUR)}`))).body
        .objects[0];
    expect(await detail('AUTH_carol')).toMatchObject({ bytes_in: 11, req_count: 1 });
    expect(await detail('AUTH_dave')).toMatchObject({ bytes_in: 22, req_count: 1 });
    // Sent again, the batch is a duplicate: nothing counts twice.
    expect((await post(path(1, 'transfer/'), { batch_id: `mixed-${kind}`, records })).body).toMatchObject({
      accepted: 0,
      duplicate: true,
    });
    expect(await detail('AUTH_carol')).toMatchObject({ bytes_in: 11 });
  });

  it("when one cluster's rollup of a day fails, then other clusters and days are rolled, /metrics shows it, the next pass retries it, and its partition is dropped only once it is rolled", async () => {
    const day = today - 6 * DAY_MS;
    const otherDay = today - 7 * DAY_MS;
    for (const [cluster, dayMs] of [
      [1, day],
      [east, day],
      [east, otherDay],
    ] as const) {
      expect(
        (
          await post(path(cluster, 'transfer/'), {
            batch_id: `iso-${kind}-${cluster}-${dayMs}`,
            records: [record('AUTH_zed', dayMs + 2 * HOUR, 3)],
          })
        ).status,
      ).toBe(200);
    }
    // The database itself refuses that cluster's day (as it refused sums past a bigint).
    await app.db.raw(`CREATE FUNCTION test_refuse_rollup() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'refused for the test'; END $$`);
    await app.db.raw(`CREATE TRIGGER test_refuse_rollup BEFORE INSERT ON utilization_transfer_daily FOR EACH ROW
      WHEN (NEW.cluster_id = ${east} AND NEW.day = '${isoDay(day)}') EXECUTE FUNCTION test_refuse_rollup()`);

    const report = await maintain();
    expect(report?.failed.map((f) => [f.clusterId, f.day])).toEqual([[east, isoDay(day)]]);
    expect(await daily(1, 'AUTH_zed', day)).toEqual({ bytes_in: '3' });
    expect(await daily(east, 'AUTH_zed', otherDay)).toEqual({ bytes_in: '3' });
    expect(await daily(east, 'AUTH_zed', day)).toBeUndefined();
    // The summary reads the day from the hourly rows meanwhile.
    expect(
      (await get(path(east, `summary/?start=${iso(day)}&end=${iso(day + DAY_MS)}&account=AUTH_zed`))).body.objects[0],
    ).toMatchObject({ bytes_in: 3 });
    const metrics = async () => (await app.http().get('/metrics')).text;
    const series = (text: string, name: string, cluster: number) =>
      new RegExp(`^${name}\\{[^}]*cluster="${cluster}"[^}]*\\} (\\d+)$`, 'm').exec(text)?.[1];
    let text = await metrics();
    expect(series(text, 'cairn_utilization_rollup_failures_total', east)).toBe('1');
    expect(series(text, 'cairn_utilization_rollup_backlog_days', east)).toBe('6');
    expect(series(text, 'cairn_utilization_rollup_backlog_days', 1)).toBe('0');

    // Past the hourly retention, the partition holding the failed day is kept while it fails...
    const later = new Date(Date.now() + 100 * DAY_MS);
    const stuck = await maintain(later);
    expect(stuck?.kept.length).toBeGreaterThan(0);
    expect(
      await app
        .db('utilization_transfer_hourly')
        .where({ cluster_id: east, account: 'AUTH_zed' })
        .where('hour', '>=', new Date(day))
        .where('hour', '<', new Date(day + DAY_MS))
        .first(),
    ).toBeDefined();
    text = await metrics();
    expect(series(text, 'cairn_utilization_rollup_failures_total', east)).toBe('2');

    // ...and once the cause is gone, the next pass rolls it up and drops it.
    await app.db.raw('DROP TRIGGER test_refuse_rollup ON utilization_transfer_daily');
    const healed = await maintain(later);
    expect(healed?.failed).toEqual([]);
    expect(healed?.kept).toEqual([]);
    expect(healed?.dropped).toEqual(expect.arrayContaining(stuck!.kept));
    expect(await daily(east, 'AUTH_zed', day)).toEqual({ bytes_in: '3' });
    expect(series(await metrics(), 'cairn_utilization_rollup_backlog_days', east)).toBe('0');
  });
});
