/**
 * `cairn utilization ingest-logs` over a log with requests the API would refuse for their time
 * (older than its hourly retention keeps, or ahead of its clock): they are counted, reported and
 * skipped, and the rest of the log is recorded. Real process, real management API on Postgres.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cairn } from '../support/processes';
import { ADMIN_AUTH, ADMIN_AUTH_NAME, ADMIN_KEY, startStack, type Stack } from '../support/stack';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** A Swift proxy-logging line (the default template) for a PUT of `bytesIn` bytes starting at `startMs`. */
const line = (account: string, startMs: number, bytesIn: number, i: number) => {
  const start = (startMs / 1000).toFixed(6);
  return `10.0.0.8 10.0.0.8 24/Nov/2026/00/00/00 PUT /v1/${account}/c/o${i} HTTP/1.0 201 - - - ${bytesIn} 0 - tx${i} - 0.0010 - - ${start} ${start} 0`;
};

describe('ingest-logs and the times the API accepts', () => {
  let stack: Stack;
  let work: string;

  beforeAll(async () => {
    stack = await startStack({ database: 'postgres' });
    // Logs bill only accounts the cluster has had a user for.
    await stack.createUser('window', 'window-password-000000001');
    // Transfer records name policy indexes the cluster's device report must list (as 'cairn capacity collect' reports
    // them).
    const put = await fetch(`${stack.apiUrl}/api/v1/clusters/1/devices/`, {
      method: 'PUT',
      headers: { Authorization: ADMIN_AUTH, 'Content-Type': 'application/json' },
      body: JSON.stringify({ policies: [{ index: 0, name: 'gold', default: true }], devices: [] }),
    });
    expect(put.status).toBe(204);
    work = mkdtempSync(join(tmpdir(), 'cairn-ingest-window-'));
  });
  afterAll(async () => {
    await stack?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('when a log has requests older than the retention or in the future, then they are counted, reported and skipped, and the rest is recorded', async () => {
    const hour = Math.floor(Date.now() / HOUR) * HOUR - 2 * HOUR;
    const lines = [
      line('AUTH_window', hour + 60_000, 100, 1),
      line('AUTH_window', Date.now() - 200 * DAY, 1_000_000, 2),
      line('AUTH_window', hour + 120_000, 200, 3),
      'not an access log line',
      line('AUTH_window', Date.now() + DAY, 1_000_000, 4),
      line('AUTH_window', Date.now() - 91 * DAY, 1_000_000, 5),
      line('AUTH_window', hour + 180_000, 300, 6),
    ];
    const file = join(work, 'proxy-access.log');
    writeFileSync(file, `${lines.join('\n')}\n`);
    const env = { CAIRN_API_URL: stack.apiUrl, CAIRN_API_KEY: `${ADMIN_AUTH_NAME}:${ADMIN_KEY}` };
    // Batches of 2 lines: the out-of-range requests share batches with counted ones.
    const run = await cairn(['utilization', 'ingest-logs', '--cluster', '1', '--batch-lines', '2', file], env);
    expect(run.code).toBe(0);
    expect(run.out).toContain(
      'cluster 1: 7 line(s), 3 request(s) counted, 0 unattributed (0 with no account, 0 to accounts no user had), 0 skipped, 1 malformed (1 fields), 0 with an unknown method, 0 internal, 2 too old, 1 in the future;',
    );
    expect(run.out).toMatch(
      new RegExp(`proxy-access\\.log:2: request at \\S+ skipped: older than the API keeps hourly records`),
    );
    expect(run.out).toMatch(
      /proxy-access\.log:5: request at \S+ skipped: later than the API's clock allows .*check the proxy's clock/,
    );
    expect(run.out).toMatch(/proxy-access\.log:6: request at \S+ skipped: older/);

    const res = await fetch(
      `${stack.apiUrl}/api/v1/clusters/1/utilization/transfer/total/AUTH_window/detail/?start=${new Date(hour).toISOString()}`,
      { headers: { Authorization: ADMIN_AUTH } },
    );
    expect(res.status).toBe(200);
    const body = (await res.json()) as { objects: Array<{ bytes_in: number; req_count: number }> };
    expect(body.objects[0]).toMatchObject({ bytes_in: 600, req_count: 3 });

    // Read again, nothing counts twice.
    const again = await cairn(['utilization', 'ingest-logs', '--cluster', '1', '--batch-lines', '2', file], env);
    expect(again.code).toBe(0);
    expect(again.out).toMatch(/(\d+) batch\(es\) sent, \1 already recorded/);
  });
});
