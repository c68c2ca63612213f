/**
 * `cairn utilization ingest-logs` killed half-way through a proxy access log and run again: the
 * API's transfer figures equal the log's exactly, nothing lost and nothing counted twice. Real
 * process (SIGKILL, no chance to clean up), real management API on Postgres.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cairn, nodeCommand, REPO_ROOT } from '../support/processes';
import { ADMIN_AUTH, ADMIN_AUTH_NAME, ADMIN_KEY, startStack, type Stack } from '../support/stack';

const HOUR = 3_600_000;
/**
 * 60 batches: the kill lands after a tenth of them, with most still to send. The claim (nothing
 * lost, nothing counted twice) does not grow with the log; each batch posted costs the API
 * a transaction, three times over (the killed run, the re-run, the third reading).
 */
const LINES = 12_000;
const BATCH_LINES = 200;
const ACCOUNTS = 40;

describe('ingest-logs killed half-way', () => {
  let stack: Stack;
  let work: string;
  let logFile: string;
  const expected = new Map<string, { in: number; out: number }>();
  const firstHour = Math.floor(Date.now() / HOUR) * HOUR - 6 * HOUR;

  beforeAll(async () => {
    stack = await startStack({ database: 'postgres' });
    // Logs bill only accounts the cluster has had a user for.
    for (let i = 0; i < ACCOUNTS; i++) await stack.createUser(`crash${i}`, 'crash-password-0000000001');
    // Transfer records name policy indexes the cluster's device report must list (as 'cairn capacity collect' reports
    // them).
    const put = await fetch(`${stack.apiUrl}/api/v1/clusters/1/devices/`, {
      method: 'PUT',
      headers: { Authorization: ADMIN_AUTH, 'Content-Type': 'application/json' },
      body: JSON.stringify({ policies: [{ index: 0, name: 'gold', default: true }], devices: [] }),
    });
    expect(put.status).toBe(204);
    work = mkdtempSync(join(tmpdir(), 'cairn-ingest-crash-'));
    logFile = join(work, 'proxy-access.log');
    // Swift 2.30 proxy_logging lines (the default template), spread over 5 hours and 40 accounts.
    const lines: string[] = [];
    for (let i = 0; i < LINES; i++) {
      const account = `AUTH_crash${i % ACCOUNTS}`;
      const bytesIn = (i * 7919) % 100_000;
      const bytesOut = (i * 104_729) % 50_000;
      const start = (firstHour + ((i * 997) % (5 * HOUR))) / 1000;
      const e = expected.get(account) ?? { in: 0, out: 0 };
      expected.set(account, { in: e.in + bytesIn, out: e.out + bytesOut });
      lines.push(
        `10.0.0.8 10.0.0.8 24/Nov/2026/00/00/00 PUT /v1/${account}/c/o${i} HTTP/1.0 201 - - - ${bytesIn} ${bytesOut} - tx${i} - 0.0010 - - ${start.toFixed(6)} ${(start + 0.001).toFixed(6)} 0`,
      );
    }
    writeFileSync(logFile, `${lines.join('\n')}\n`);
  });
  afterAll(async () => {
    await stack?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  const env = () => ({ CAIRN_API_URL: stack.apiUrl, CAIRN_API_KEY: `${ADMIN_AUTH_NAME}:${ADMIN_KEY}` });
  const args = ['utilization', 'ingest-logs', '--cluster', '1', '--batch-lines', String(BATCH_LINES)];
  const batchesRecorded = async () => Number((await stack.db('utilization_transfer_batches').count({ n: '*' }))[0]!.n);

  it('when the collector is killed mid-file and run again, then every account totals exactly what the log says', async () => {
    const [node, nodeArgs] = nodeCommand('packages/cli/src/main.ts');
    const child = spawn(node, [...nodeArgs, ...args, logFile], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env() },
      stdio: 'ignore',
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const total = LINES / BATCH_LINES;
    for (let i = 0; i < 3000 && (await batchesRecorded()) < total / 10; i++)
      await new Promise((r) => setTimeout(r, 10));
    child.kill('SIGKILL');
    await exited;
    const before = await batchesRecorded();
    // Half-way: some batches recorded, not all.
    expect(before).toBeGreaterThan(0);
    expect(before).toBeLessThan(total);

    const rerun = await cairn([...args, logFile], env());
    expect(rerun.code).toBe(0);
    expect(rerun.out).toContain(`${LINES} request(s) counted`);
    // The batches recorded before the kill are recognised, not counted again (one more may have
    // been committed by the API after the collector died, while it was being answered).
    const recognised = Number(/(\d+) already recorded/.exec(rerun.out)?.[1]);
    expect(recognised).toBeGreaterThanOrEqual(before);
    expect(recognised).toBeLessThanOrEqual(before + 1);
    expect(await batchesRecorded()).toBe(total);

    const start = new Date(firstHour).toISOString();
    const end = new Date(firstHour + 6 * HOUR).toISOString();
    const res = await fetch(
      `${stack.apiUrl}/api/v1/clusters/1/utilization/summary/?start=${start}&end=${end}&limit=1000`,
      { headers: { Authorization: ADMIN_AUTH } },
    );
    expect(res.status).toBe(200);
    const body = (await res.json()) as { objects: Array<{ account: string; bytes_in: number; bytes_out: number }> };
    const got = new Map(
      body.objects
        .filter((o) => o.account.startsWith('AUTH_crash'))
        .map((o) => [o.account, { in: o.bytes_in, out: o.bytes_out }]),
    );
    expect(got).toEqual(expected);

    // A third reading changes nothing.
    const third = await cairn([...args, logFile], env());
    expect(third.out).toContain(`${total} already recorded`);
  });
});
