import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ADMIN,
  ADMIN_AUTH,
  createUser,
  startTestApp,
  type TestApp,
} from '../../../services/management-api/test/support/harness';
import { parsePriceSheet } from '@cairn/domain';
import type { CollectorConfig } from '../src/config';
import { invoice } from '../src/utilization/invoice';
import { ingestLogs } from '../src/utilization/ingest';

/**
 * `cairn utilization ingest-logs` into the real management API on Postgres: a log of a known
 * workload (Swift and S3 requests, a copy, failures, middleware subrequests, internal traffic,
 * lines it must refuse) comes out of the summary (JSON and CSV) and the detail with the figures the
 * workload itself adds up to, written here by hand from the lines, not from what was stored.
 */
const HOUR = 3_600_000;

describe('ingest by request class, API and network', () => {
  let app: TestApp;
  let dir: string;
  const hour = Math.floor(Date.now() / HOUR) * HOUR - 3 * HOUR;
  const start = ((hour + 60_000) / 1000).toFixed(6);
  const line = (o: {
    method: string;
    path: string;
    status?: number;
    recvd?: number;
    sent?: number;
    source?: string;
    txn?: string;
    peer?: string;
    account?: string;
    policy?: string;
  }) =>
    `Nov 23 20:45:36 proxy1 proxy-server: ${o.peer ?? '198.51.100.4'} ${o.peer ?? '198.51.100.4'} 23/Nov/2026/20/45/36 ${o.method} ${o.path} HTTP/1.1 ${o.status ?? 200} - agent - ${o.recvd ?? '-'} ${o.sent ?? '-'} - ${o.txn ?? 'tx-'} - 0.0100 ${o.source ?? '-'} - ${start} ${start} ${o.policy ?? '0'} ${o.account ?? (o.path.startsWith('/v1/') ? o.path.split('/')[2] : '-')}`;
  const get = (p: string) => app.http().get(`/api/v1/clusters/1/utilization/${p}`).set('Authorization', ADMIN_AUTH);
  const range = () => `start=${new Date(hour).toISOString()}&end=${new Date(hour + HOUR).toISOString()}`;

  beforeAll(async () => {
    app = await startTestApp('postgres');
    await createUser(app, 'carol');
    const report = await app
      .http()
      .put('/api/v1/clusters/1/devices/')
      .set('Authorization', ADMIN_AUTH)
      .send({ policies: [{ index: 0, name: 'gold', default: true }], devices: [] });
    expect(report.status).toBe(204);
    dir = mkdtempSync(join(tmpdir(), 'cairn-ingest-classes-'));
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await app.close();
  });

  it('when a mixed workload is ingested, then the summary, its CSV and the detail show every class and share exactly, and refused lines are counted by reason', async () => {
    const lines = [
      line({ method: 'PUT', path: '/v1/AUTH_carol/c/a', status: 201, recvd: 1000, peer: '10.9.8.7' }),
      line({ method: 'GET', path: '/v1/AUTH_carol/c/a', sent: 1000 }),
      line({ method: 'GET', path: '/v1/AUTH_carol/c/a', status: 499, sent: 300 }),
      line({ method: 'GET', path: '/v1/AUTH_carol/c/seg', sent: 1000, source: 'SLO' }),
      line({ method: 'GET', path: '/v1/AUTH_carol/c', sent: 80, policy: '-' }),
      line({ method: 'HEAD', path: '/v1/AUTH_carol/c/a', status: 200, peer: '10.9.8.7' }),
      line({ method: 'PUT', path: '/v1/AUTH_carol/c/huge', status: 413, recvd: 4096, sent: 50 }),
      line({ method: 'GET', path: '/v1/AUTH_carol/c/a', sent: 1000, source: 'SSC', txn: 'txcp' }),
      line({ method: 'PUT', path: '/v1/AUTH_carol/c/b', status: 201, source: 'SSC', txn: 'txcp' }),
      line({ method: 'POST', path: '/carol-bucket/big%3Fuploads', sent: 200, account: 'AUTH_carol' }),
      line({
        method: 'PUT',
        path: '/carol-bucket/big%3FpartNumber%3D1%26uploadId%3Du',
        recvd: 700,
        account: 'AUTH_carol',
      }),
      line({ method: 'PUT', path: '/v1/AUTH_carol/carol-bucket%2Bsegments/big/u/1', recvd: 700, source: 'S3' }),
      line({ method: 'POST', path: '/carol-bucket/big%3FuploadId%3Du', recvd: 100, sent: 150, account: 'AUTH_carol' }),
      line({ method: 'GET', path: '/carol-bucket', sent: 400, account: 'AUTH_carol', policy: '-' }),
      line({ method: 'DELETE', path: '/carol-bucket/big', status: 204, account: 'AUTH_carol' }),
      line({ method: 'OPTIONS', path: '/v1/AUTH_carol/c/a' }),
      // Refused, whatever account they name: an unknown method, a line cut short, a bad status, no account.
      line({ method: 'FROB', path: '/v1/AUTH_carol/c/a', status: 405, sent: 10 }),
      line({ method: 'GET', path: '/v1/AUTH_carol/c/a', sent: 10 }).slice(0, 90),
      line({ method: 'GET', path: '/v1/AUTH_carol/c/a', sent: 10 }).replace(' 200 ', ' 2x0 '),
      line({ method: 'GET', path: '/carol-bucket/k', status: 403, sent: 243, account: '-' }),
    ];
    const file = join(dir, 'proxy-access.log');
    writeFileSync(file, `${lines.join('\n')}\n`);
    const warnings: string[] = [];
    const config: CollectorConfig = {
      apiUrl: app.baseUrl,
      apiKey: `${ADMIN.name}:${ADMIN.key}`,
      reconTimeoutMs: 5000,
      reconConcurrency: 1,
      healthConcurrency: 1,
      healthNodeTimeoutMs: 5000,
      utilizationConcurrency: 1,
      utilizationTimeoutMs: 5000,
      utilizationRetries: 0,
      utilizationInternalNetworks: '10.0.0.0/8',
      utilizationInternalAddress: 'remote_addr',
    };
    const result = await ingestLogs({ cluster: '1', inputs: [file], config, warn: (l) => warnings.push(l) });
    expect(result).toMatchObject({
      lines: 20,
      requests: 13,
      skipped: 3,
      malformed: 2,
      malformedByReason: { fields: 1, status: 1 },
      unknownMethod: 1,
      noAccount: 1,
      internal: 2,
    });
    expect(warnings.some((w) => w.includes("unknown method 'FROB'"))).toBe(true);

    // By hand: 13 billed requests of carol's (the 20 lines less 3 subrequests and 4 refused), 5 through S3.
    const expected = {
      account: 'AUTH_carol',
      bytes_in: 1000 + 4096 + 700 + 100,
      bytes_out: 1000 + 300 + 80 + 50 + 200 + 150 + 400,
      req_count: 13,
      req_get: 2,
      req_head: 1,
      req_put: 3,
      req_post: 2,
      req_delete: 1,
      req_list: 2,
      req_copy: 1,
      req_other: 1,
      req_errors: 2,
      s3_bytes_in: 700 + 100,
      s3_bytes_out: 200 + 150 + 400,
      s3_req_count: 5,
      internal_bytes_in: 1000,
      internal_bytes_out: 0,
      internal_req_count: 2,
    };
    const summary = await get(`summary/?${range()}`);
    expect(summary.status).toBe(200);
    expect(summary.body.objects).toEqual([expect.objectContaining(expected)]);

    const csv = await get(`summary/?${range()}&format=csv`);
    const [header, row] = csv.text.split('\r\n').map((l) => l.split(','));
    const cell = (f: string) => row![header!.indexOf(f)];
    for (const [field, value] of Object.entries(expected)) expect([field, cell(field)]).toEqual([field, String(value)]);

    // The detail of all policies sums the policy-0 object requests and the policy-less listings alike.
    const detail = await get(`transfer/total/AUTH_carol/detail/?${range()}`);
    expect(detail.status).toBe(200);
    const { account: _, ...figures } = expected;
    expect(detail.body.objects).toEqual([expect.objectContaining(figures)]);
  });

  it('when a collector sends totals only (as before classes existed), then they are stored and the classes read 0', async () => {
    const res = await app
      .http()
      .post('/api/v1/clusters/1/utilization/transfer/')
      .set('Authorization', ADMIN_AUTH)
      .send({
        batch_id: 'totals-only-1',
        records: [
          {
            account: 'AUTH_carol',
            policy_index: 0,
            hour: new Date(hour - HOUR).toISOString(),
            bytes_in: 5,
            bytes_out: 6,
            req_count: 3,
          },
        ],
      });
    expect(res.body).toMatchObject({ accepted: 1, duplicate: false });
    const detail = await get(
      `transfer/0/AUTH_carol/detail/?start=${new Date(hour - HOUR).toISOString()}&end=${new Date(hour).toISOString()}`,
    );
    expect(detail.body.objects).toEqual([
      expect.objectContaining({
        bytes_in: 5,
        req_count: 3,
        req_get: 0,
        req_put: 0,
        s3_req_count: 0,
        internal_req_count: 0,
      }),
    ]);
  });

  it('when a record says more of a share or of its classes than its totals hold, then that record is refused with a sentence', async () => {
    const base = {
      account: 'AUTH_carol',
      policy_index: 0,
      hour: new Date(hour - 2 * HOUR).toISOString(),
      bytes_in: 5,
      bytes_out: 6,
      req_count: 3,
    };
    const res = await app
      .http()
      .post('/api/v1/clusters/1/utilization/transfer/')
      .set('Authorization', ADMIN_AUTH)
      .send({
        batch_id: 'too-much-1',
        records: [
          { ...base, s3_bytes_in: 6 },
          { ...base, req_get: 2, req_put: 2 },
          { ...base, req_get: 3, req_errors: 1, internal_bytes_out: 6 },
        ],
      });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ accepted: 1, refused_count: 2 });
    expect(res.body.refused).toEqual([
      { index: 0, reason: "'records[0].s3_bytes_in' (6) must not exceed 'records[0].bytes_in' (5)." },
      { index: 1, reason: "The request classes of 'records[1]' add up to 4, more than its req_count (3)." },
    ]);
  });

  it('when the range is invoiced from a price sheet, then each amount is what the sheet and the workload give, to the last decimal', async () => {
    const stored = await app
      .http()
      .post('/api/v1/clusters/1/utilization/storage/')
      .set('Authorization', ADMIN_AUTH)
      .send({
        interval: 3600,
        sampled_at: new Date(hour + 60_000).toISOString(),
        samples: [
          {
            account: 'AUTH_carol',
            bytes_used: 10 ** 12,
            object_count: 4,
            container_count: 2,
            policies: [{ index: 0, bytes_used: 10 ** 12, object_count: 4, container_count: 2 }],
          },
        ],
      });
    expect(stored.status).toBe(200);
    const sheet = parsePriceSheet({
      currency: 'EUR',
      decimals: 9,
      storage_gb_month: { gold: '0.045', default: '0.02' },
      egress_gb: '0.05',
      requests_per_1000: { put: '0.005', post: '0.005', copy: '0.005', list: '0.005', get: '0.0004', head: '0.0004' },
    });
    const lines = await invoice(
      { apiUrl: app.baseUrl, apiKey: `${ADMIN.name}:${ADMIN.key}` },
      1,
      new Date(hour).toISOString(),
      new Date(hour + HOUR).toISOString(),
      sheet,
    );
    // 1000 GB in gold for 1 of 730 hours: 1.369863… GB-months × 0.045 = 45/730 = 0.0616438356… → 0.061643836.
    // Egress: 2180 external bytes = 0.00000218 GB × 0.05 = 0.000000109. Requests: 8 at 0.005 and 3 at
    // 0.0004 per 1000 = 0.0000412; the delete and the OPTIONS are free.
    expect(lines).toEqual([
      {
        account: 'AUTH_carol',
        storage_gb_months: '1.369863',
        storage: '0.061643836',
        egress_gb: '0.000002',
        egress: '0.000000109',
        ingress: '0.000000000',
        requests: '0.000041200',
        request_count: '13',
        total: '0.061685145',
        currency: 'EUR',
      },
    ]);
  });
});
