/**
 * `cairn health collect` against a real single-node Swift (account, container and object servers,
 * each with recon in its pipeline): every endpoint of every server is read and parses, the ring md5s
 * the CLI computes are the ones Swift's recon computes, and a stopped server is silent with a
 * sentence. The round goes to a stand-in for the API's ingest that records it.
 */
import { HEALTH_ENDPOINTS } from '@cairn/swift-cluster';
import { startRoundReceiver, type RoundReceiver } from '../../packages/cli/test/helpers/round-receiver';
import type { HealthRoundBody } from '../../packages/cli/src/health/round';
import { cairn } from '../support/processes';
import { startSwiftCluster, type SwiftCluster } from './swift-cluster';

describe('cairn health collect against a real Swift cluster', () => {
  let swift: SwiftCluster;
  let receiver: RoundReceiver;
  let env: Record<string, string>;

  beforeAll(async () => {
    swift = await startSwiftCluster({ pipeline: 'tempauth' });
    receiver = await startRoundReceiver();
    env = { CAIRN_API_URL: receiver.apiUrl, CAIRN_API_KEY: 'collector:k3y' };
  });
  afterAll(async () => {
    await receiver?.close();
    await swift?.stop();
  });

  it('when every server answers, then each endpoint is read and parsed and the ring md5s match recon', async () => {
    const before = Date.now() / 1000;
    const run = await cairn(['health', 'collect', '--cluster', 'east', '--swift-dir', swift.swiftDir], env);
    const after = Date.now() / 1000;
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(
      /^\S+Z cluster 7: round 1 sent: 3 of 3 storage node\(s\) answered, 0 silent, 0 endpoint error\(s\); 0 finding\(s\) open\n$/,
    );
    const round = receiver.rounds.at(-1) as HealthRoundBody;
    const { account, container, object } = swift.nodes;
    expect(round.nodes.map((n) => [n.node, n.server_types])).toEqual([
      [`127.0.0.1:${account.port}`, ['account']],
      [`127.0.0.1:${container.port}`, ['container']],
      [`127.0.0.1:${object.port}`, ['object']],
    ]);
    for (const n of round.nodes) {
      expect([n.node, n.answered, n.error]).toEqual([n.node, true, null]);
      expect(Object.keys(n.recon)).toEqual([...HEALTH_ENDPOINTS]);
      expect(Object.entries(n.recon).filter(([, v]) => typeof v === 'object' && v !== null && 'error' in v)).toEqual(
        [],
      );
      // The node's clock was read during the round.
      expect(n.recon.time).toBeGreaterThanOrEqual(before - 1);
      expect(n.recon.time).toBeLessThanOrEqual(after + 1);
      // recon lists devices by directory: d1..d4 on the shared devices dir, all mounted.
      const usage = n.recon.diskusage as Array<{ device: string; mounted: unknown }>;
      expect(usage.map((d) => [d.device, d.mounted]).sort()).toEqual(swift.devices.map((d) => [d, true]));
      expect(n.recon.unmounted).toEqual([]);
      // Swift's md5 of each ring (keys are paths in the node's swift_dir) is the collector's.
      const md5s = Object.fromEntries(
        Object.entries(n.recon.ringmd5 as Record<string, string>).map(([path, md5]) => [path.split('/').pop(), md5]),
      );
      expect(md5s).toEqual(round.ring_md5);
    }
    expect(Object.keys(round.ring_md5).sort()).toEqual([
      'account.ring.gz',
      'container.ring.gz',
      'object-1.ring.gz',
      'object.ring.gz',
    ]);
  });

  it('when the object server is stopped, then it is silent with a sentence and the round is still sent', async () => {
    const objectPid = swift.pids()['object-server'];
    expect(objectPid).toBeDefined();
    process.kill(-objectPid!, 'SIGKILL');
    const sent = receiver.rounds.length;
    const run = await cairn(['health', 'collect', '--cluster', '7', '--swift-dir', swift.swiftDir], env);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('2 of 3 storage node(s) answered, 1 silent, 0 endpoint error(s)');
    expect(receiver.rounds).toHaveLength(sent + 1);
    const round = receiver.rounds.at(-1) as HealthRoundBody;
    const object = round.nodes.find((n) => n.server_types.includes('object'))!;
    expect(object.answered).toBe(false);
    expect(object.error).toBe('none of the 14 recon requests was answered: request failed (ECONNREFUSED)');
    expect(round.nodes.filter((n) => n.answered)).toHaveLength(2);
  });
});
