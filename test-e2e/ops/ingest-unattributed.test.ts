/**
 * `cairn utilization ingest-logs` over lines it cannot bill: requests that name no account (S3
 * requests logged in Swift's default template) and requests to accounts the cluster never had a
 * user for (anyone can make a proxy log `/v1/<any name>`, even with a refused request). Both are
 * counted and reported, never billed, and the unknown names never become accounts. Real process,
 * real management API on Postgres.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cairn } from '../support/processes';
import { ADMIN_AUTH, ADMIN_AUTH_NAME, ADMIN_KEY, startStack, type Stack } from '../support/stack';

const HOUR = 3_600_000;

/** A Swift proxy-logging line: the default template, or with ` {account}` after it. */
function line(o: {
  method?: string;
  path: string;
  status?: number;
  bytesIn?: number;
  startMs: number;
  i: number;
  account?: string;
}): string {
  const start = (o.startMs / 1000).toFixed(6);
  const tail = o.account === undefined ? '' : ` ${o.account}`;
  return `10.0.0.8 10.0.0.8 24/Nov/2026/00/00/00 ${o.method ?? 'PUT'} ${o.path} HTTP/1.0 ${o.status ?? 201} - - - ${o.bytesIn ?? 0} 0 - tx${o.i} - 0.0010 - - ${start} ${start} 0${tail}`;
}

describe('ingest-logs and requests it cannot bill', () => {
  let stack: Stack;
  let work: string;

  beforeAll(async () => {
    stack = await startStack({ database: 'postgres' });
    await stack.createUser('owner', 'owner-password-0000000001');
    // Transfer records name policy indexes the cluster's device report must list (as 'cairn capacity collect' reports
    // them).
    const put = await fetch(`${stack.apiUrl}/api/v1/clusters/1/devices/`, {
      method: 'PUT',
      headers: { Authorization: ADMIN_AUTH, 'Content-Type': 'application/json' },
      body: JSON.stringify({ policies: [{ index: 0, name: 'gold', default: true }], devices: [] }),
    });
    expect(put.status).toBe(204);
    work = mkdtempSync(join(tmpdir(), 'cairn-ingest-unattributed-'));
  });
  afterAll(async () => {
    await stack?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('when a log holds requests with no account and requests to accounts no user had, then they are counted and reported as unattributed, never billed or learnt', async () => {
    const hour = Math.floor(Date.now() / HOUR) * HOUR - 2 * HOUR;
    // Swift quotes the path twice: the formula's '(' stays, '"' is %2522, ',' %252C.
    const formula = '=HYPERLINK(CONCAT("http",CHAR(58),CHAR(47),CHAR(47),"evil.example"),"Open invoice")';
    const quotedTwice = encodeURIComponent(encodeURIComponent(formula));
    const lines = [
      line({ path: '/v1/AUTH_owner/c/o1', bytesIn: 100, startMs: hour + 60_000, i: 1 }),
      // Unauthenticated, refused by the proxy: still logged with the name asked for.
      line({ method: 'GET', path: `/v1/${quotedTwice}`, status: 401, startMs: hour + 61_000, i: 2 }),
      line({ path: '/v1/AUTH_nobody/c/o', bytesIn: 5000, status: 401, startMs: hour + 62_000, i: 3 }),
      // S3 requests in the default template: no account in the line.
      line({ path: '/bucket/key', bytesIn: 70_000, status: 200, startMs: hour + 63_000, i: 4 }),
      line({ method: 'GET', path: '/', status: 200, startMs: hour + 64_000, i: 5 }),
      // The same S3 upload with {account} logged: billed to its owner.
      line({ path: '/bucket/key', bytesIn: 70_000, status: 200, startMs: hour + 65_000, i: 6, account: 'AUTH_owner' }),
      line({ method: 'GET', path: '/info', status: 200, startMs: hour + 66_000, i: 7, account: '-' }),
    ];
    const file = join(work, 'proxy-access.log');
    writeFileSync(file, `${lines.join('\n')}\n`);
    const env = { CAIRN_API_URL: stack.apiUrl, CAIRN_API_KEY: `${ADMIN_AUTH_NAME}:${ADMIN_KEY}` };
    const run = await cairn(['utilization', 'ingest-logs', '--cluster', '1', '--batch-lines', '3', file], env);
    expect(run.code).toBe(0);
    expect(run.out).toContain(
      'cluster 1: 7 line(s), 2 request(s) counted, 4 unattributed (2 with no account, 2 to accounts no user had), 1 skipped, 0 malformed,',
    );
    expect(run.out).toMatch(/proxy-access\.log:4: request with no account, not billed/);
    expect(run.out).toMatch(/proxy-access\.log:5: request with no account, not billed/);

    const get = async (path: string) => {
      const res = await fetch(`${stack.apiUrl}/api/v1/clusters/1/utilization/${path}`, {
        headers: { Authorization: ADMIN_AUTH },
      });
      expect(res.status).toBe(200);
      return res;
    };
    const range = `start=${new Date(hour).toISOString()}&end=${new Date(hour + HOUR).toISOString()}`;
    const summary = (await (await get(`summary/?${range}`)).json()) as {
      objects: Array<{ account: string; bytes_in: number; req_count: number }>;
    };
    expect(summary.objects.map((o) => [o.account, o.bytes_in, o.req_count])).toEqual([['AUTH_owner', 70_100, 2]]);
    const accounts = (await (await get('accounts/?limit=0')).json()) as { objects: Array<{ account: string }> };
    expect(accounts.objects.map((o) => o.account)).toEqual(['AUTH_owner']);
    expect(await (await get(`summary/?${range}&format=csv`)).text()).not.toContain('HYPERLINK');

    // Read again: the same figures, nothing counted twice.
    const again = await cairn(['utilization', 'ingest-logs', '--cluster', '1', '--batch-lines', '3', file], env);
    expect(again.out).toContain('2 request(s) counted, 4 unattributed (2 with no account, 2 to accounts no user had)');
    expect(again.out).toMatch(/2 batch\(es\) sent, 2 already recorded/);
  });
});
