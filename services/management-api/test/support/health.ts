/** Health rounds as the collector posts them (docs/health.md), for the health tests. */

export const RING = {
  'object.ring.gz': 'a'.repeat(32),
  'container.ring.gz': 'b'.repeat(32),
  'account.ring.gz': 'c'.repeat(32),
};
export const TB = 1e12;

type Recon = Record<string, unknown>;
/** A storage node as Swift 2.30's recon answers for a healthy one at `at`. */
export function healthyNode(node: string, at: Date, recon: Recon = {}, more: Record<string, unknown> = {}) {
  const now = at.getTime() / 1000;
  return {
    node,
    server_types: ['account', 'container', 'object'],
    answered: true,
    error: null,
    elapsed_ms: 15,
    recon: {
      diskusage: [{ device: 'sdb1', mounted: true, size: 4 * TB, used: 1 * TB, avail: 3 * TB }],
      unmounted: [],
      driveaudit: { drive_audit_errors: 0 },
      async: { async_pending: 3, async_pending_last: now - 60 },
      quarantined: { objects: 1, containers: 0, accounts: 0, policies: { '0': { objects: 1 } } },
      'replication/account': { replication_time: 1.2, replication_stats: {}, replication_last: now - 600 },
      'replication/container': { replication_time: 1.2, replication_stats: {}, replication_last: now - 600 },
      'replication/object': {
        replication_time: 1.2,
        replication_stats: {},
        replication_last: now - 600,
        object_replication_time: 1.2,
        object_replication_last: now - 600,
      },
      ringmd5: Object.fromEntries(Object.entries(RING).map(([f, md5]) => [`/etc/swift/${f}`, md5])),
      time: now,
      load: { '1m': 0.1, '5m': 0.1, '15m': 0.1, tasks: '1/100', processes: 100 },
      ...recon,
    },
    ...more,
  };
}
