/**
 * `cairn utilization ingest-logs` when the API refuses some records of a batch (here: a policy
 * index the cluster's device report does not list): the collector names them and goes on, and the
 * other records of the same batches are counted. Real process, real management API on Postgres.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cairn } from '../support/processes';
import { ADMIN_AUTH, ADMIN_AUTH_NAME, ADMIN_KEY, startStack, type Stack } from '../support/stack';

const HOUR = 3_600_000;

/** A Swift proxy-logging line (the default template): a PUT of `bytesIn` bytes under `policy`. */
const line = (account: string, startMs: number, bytesIn: number, policy: number, i: number) => {
  const start = (startMs / 1000).toFixed(6);
  return `10.0.0.8 10.0.0.8 24/Nov/2026/00/00/00 PUT /v1/${account}/c/o${i} HTTP/1.0 201 - - - ${bytesIn} 0 - tx${i} - 0.0010 - - ${start} ${start} ${policy}`;
};

describe('ingest-logs and records the API refuses', () => {
  let stack: Stack;
  let work: string;

  beforeAll(async () => {
    stack = await startStack({ database: 'postgres' });
    work = mkdtempSync(join(tmpdir(), 'cairn-ingest-refused-'));
    const put = await fetch(`${stack.apiUrl}/api/v1/clusters/1/devices/`, {
      method: 'PUT',
      headers: { Authorization: ADMIN_AUTH, 'Content-Type': 'application/json' },
      body: JSON.stringify({ policies: [{ index: 0, name: 'gold', default: true }], devices: [] }),
    });
    expect(put.status).toBe(204);
    // Transfer is billed only to accounts the cluster has had a user for.
    for (const user of ['good', 'other']) await stack.createUser(user, `${user}-password-000000000001`);
  });
  afterAll(async () => {
    await stack?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('when a log names a policy index the cluster does not have, then those records are reported as refused and the rest of each batch is counted', async () => {
    const hour = Math.floor(Date.now() / HOUR) * HOUR - 2 * HOUR;
    const lines = [
      line('AUTH_good', hour + 60_000, 100, 0, 1),
      line('AUTH_odd', hour + 61_000, 1_000, 9, 2),
      line('AUTH_good', hour + 62_000, 200, 0, 3),
      line('AUTH_other', hour + 63_000, 50, 0, 4),
    ];
    const file = join(work, 'proxy-access.log');
    writeFileSync(file, `${lines.join('\n')}\n`);
    const env = { CAIRN_API_URL: stack.apiUrl, CAIRN_API_KEY: `${ADMIN_AUTH_NAME}:${ADMIN_KEY}` };
    const run = await cairn(['utilization', 'ingest-logs', '--cluster', '1', '--batch-lines', '2', file], env);
    expect(run.code).toBe(0);
    expect(run.out).toMatch(
      /record \d+ refused by the API: 'records\[\d+\]\.policy_index' 9 is not a storage policy of this cluster \(its policies are 0\)/,
    );
    expect(run.out).toContain('2 batch(es) sent, 0 already recorded, 1 record(s) refused');
    const detail = async (account: string) => {
      const res = await fetch(
        `${stack.apiUrl}/api/v1/clusters/1/utilization/transfer/total/${account}/detail/?start=${new Date(hour).toISOString()}`,
        { headers: { Authorization: ADMIN_AUTH } },
      );
      return ((await res.json()) as { objects: Array<{ bytes_in: number; req_count: number }> }).objects[0];
    };
    expect(await detail('AUTH_good')).toMatchObject({ bytes_in: 300, req_count: 2 });
    expect(await detail('AUTH_other')).toMatchObject({ bytes_in: 50, req_count: 1 });
  });
});
