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

/** Bytes a file written and removed between two recon readings may add to one device's usage. */
const CHURN_BYTES = 16 << 20;

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
    type Bytes = { raw: number; used: number; free: number };
    const readRecon = async () => {
      const recon = (await (await fetch(swift.nodes.object.reconUrl + '/diskusage')).json()) as Array<{
        device: string;
        size: number;
        avail: number;
      }>;
      return new Map<string, Bytes>(
        recon.map((d) => [d.device, { raw: d.size, used: d.size - d.avail, free: d.avail }]),
      );
    };
    // The devices are directories on one shared disk whose usage moves with everything else the
    // machine writes, and not only upwards (files come and go). So recon is read again and again while
    // the collector runs, and the collector's figure must lie within what those readings span,
    // widened by CHURN_BYTES a device for a file that came and went between two of them.
    const readings = [await readRecon()];
    let collecting = true;
    const polling = (async () => {
      while (collecting) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        readings.push(await readRecon());
      }
    })();
    const run = await cairn(['capacity', 'collect', '--cluster', 'default', '--swift-dir', swift.swiftDir], env);
    collecting = false;
    await polling;
    readings.push(await readRecon());
    expect(run.out).toContain('reported 4 device(s), 4 with usage');
    expect(run.code).toBe(0);
    const sum = (reading: Map<string, Bytes>, devices: string[], key: keyof Bytes) =>
      devices.reduce((t, d) => t + reading.get(d)![key], 0) / 1e12;

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
    // A collector that summed the wrong devices would be off by at least one device's used or free
    // bytes: the test can tell only while those are far above the margin.
    const smallest = Math.min(...readings.flatMap((r) => [...r.values()].flatMap((d) => [d.used, d.free])));
    expect(smallest).toBeGreaterThan(8 * CHURN_BYTES);
    const within = (got: number, devices: string[], key: keyof Bytes) => {
      const sums = readings.map((r) => sum(r, devices, key));
      const margin = (devices.length * CHURN_BYTES) / 1e12;
      expect(got).toBeGreaterThanOrEqual(Math.min(...sums) - margin);
      expect(got).toBeLessThanOrEqual(Math.max(...sums) + margin);
    };
    for (const c of capacity) {
      const devices = expected[c.ring_set]!;
      expect(Math.abs(c.total_raw_tb - sum(readings[0]!, devices, 'raw'))).toBeLessThan(1e-6);
      within(c.total_used_tb, devices, 'used');
      within(c.total_free_tb, devices, 'free');
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
