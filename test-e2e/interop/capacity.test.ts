/**
 * The capacity collector against a real single-node Swift: two storage policies whose object rings
 * overlap (gold = d1..d3, silver = d2..d4), rings written by swift-ring-builder, disk usage from the
 * object server's recon. The CLI reads them and reports to a real management API.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ADMIN_AUTH, ADMIN_KEY, ADMIN_AUTH_NAME, startStack, type Stack } from '../support/stack';
import { cairn } from '../support/processes';
import { startSwiftCluster, type SwiftCluster } from './swift-cluster';

interface Element {
  ring_set: string;
  total_raw_tb: number;
  total_used_tb: number;
  total_free_tb: number;
  pct_used_stats: { count: number };
}

describe('cairn capacity collect against a real Swift cluster', () => {
  let swift: SwiftCluster;
  let stack: Stack;
  let stopped = false;

  beforeAll(async () => {
    swift = await startSwiftCluster({ pipeline: 'tempauth' });
    stack = await startStack({ database: 'postgres' });
  });
  afterAll(async () => {
    await stack?.close();
    if (!stopped) await swift?.stop();
  });

  it('when it collects, then ring sets gold, gold,silver and silver have the right devices and recon byte totals', async () => {
    const env = { CAIRN_API_URL: stack.apiUrl, CAIRN_API_KEY: `${ADMIN_AUTH_NAME}:${ADMIN_KEY}` };
    const run = await cairn(['capacity', 'collect', '--cluster', 'default', '--swift-dir', swift.swiftDir], env);
    expect(run.out).toContain('reported 4 device(s), 4 with usage');
    expect(run.code).toBe(0);

    const recon = (await (await fetch(swift.nodes.object.reconUrl + '/diskusage')).json()) as Array<{
      device: string;
      size: number;
      avail: number;
    }>;
    const bytes = new Map(recon.map((d) => [d.device, { raw: d.size, used: d.size - d.avail, free: d.avail }]));
    const sum = (devices: string[], key: 'raw' | 'used' | 'free') =>
      devices.reduce((t, d) => t + bytes.get(d)![key], 0) / 1e12;

    const res = await fetch(`${stack.apiUrl}/api/v1/clusters/1/capacity/list/`, {
      headers: { Authorization: ADMIN_AUTH },
    });
    const { capacity } = (await res.json()) as { capacity: Element[] };
    expect(capacity.map((c) => [c.ring_set, c.pct_used_stats.count])).toEqual([
      ['gold', 1],
      ['gold,silver', 2],
      ['silver', 1],
    ]);
    const expected: Record<string, string[]> = { gold: ['d1'], 'gold,silver': ['d2', 'd3'], silver: ['d4'] };
    for (const c of capacity) {
      const devices = expected[c.ring_set]!;
      // Disk usage moves a little between the collector's read and ours: compare to the byte level within 1 MB.
      expect(Math.abs(c.total_raw_tb - sum(devices, 'raw'))).toBeLessThan(1e-6);
      expect(Math.abs(c.total_used_tb - sum(devices, 'used'))).toBeLessThan(1e-6);
      expect(Math.abs(c.total_free_tb - sum(devices, 'free'))).toBeLessThan(1e-6);
    }
  });

  it('when no storage node answers, then it exits non-zero, names the node and sends nothing', async () => {
    const env = {
      CAIRN_API_URL: stack.apiUrl,
      CAIRN_API_KEY: `${ADMIN_AUTH_NAME}:${ADMIN_KEY}`,
      CAIRN_RECON_TIMEOUT_MS: '500',
    };
    const before = await (
      await fetch(`${stack.apiUrl}/api/v1/clusters/1/capacity/list/`, { headers: { Authorization: ADMIN_AUTH } })
    ).text();
    // Keep the rings; stop every Swift server.
    const swiftDir = mkdtempSync(join(tmpdir(), 'cairn-swift-dir-'));
    cpSync(swift.swiftDir, swiftDir, { recursive: true });
    await swift.stop();
    stopped = true;
    const run = await cairn(['capacity', 'collect', '--cluster', 'default', '--swift-dir', swiftDir], env);
    rmSync(swiftDir, { recursive: true, force: true });
    expect(run.code).toBe(1);
    expect(run.out).toMatch(/warning: node 127\.0\.0\.1:\d+/);
    expect(run.out).toContain('nothing could be collected');
    const after = await (
      await fetch(`${stack.apiUrl}/api/v1/clusters/1/capacity/list/`, { headers: { Authorization: ADMIN_AUTH } })
    ).text();
    expect(after).toBe(before);
  });
});
