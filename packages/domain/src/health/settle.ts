import { findingKey, type Finding, type FindingCode } from './findings';
import type { HealthRound, ReconKey, RoundNode } from './round';

type Keyed = Pick<Finding, 'code' | 'node' | 'device' | 'ringSet'>;

/** What one round does to a cluster's open findings. */
export interface Settlement<O extends Keyed> {
  /** Found now and not open: they open at this round. */
  opening: Finding[];
  /** Open and found again: they stay open and take the round's severity and sentence. */
  kept: Array<{ open: O; found: Finding }>;
  /** Open, not found, of a node (or of its recon documents) this round could not read: left as they were. */
  held: O[];
  /** Open and no longer found by a round that could judge them: they close at this round. */
  closing: O[];
}

/**
 * The recon documents each node finding is judged from (any one of them is enough: an unmounted
 * drive shows in /recon/unmounted and in diskusage). node_silent is judged from whether the node
 * answered at all.
 */
const JUDGED_FROM: Record<Exclude<FindingCode, 'node_silent' | 'ring_set_filling'>, readonly ReconKey[]> = {
  drive_unmounted: ['unmounted', 'diskusage'],
  drive_errors: ['driveaudit'],
  device_full: ['diskusage'],
  account_replication_stale: ['replication/account'],
  container_replication_stale: ['replication/container'],
  object_replication_stale: ['replication/object'],
  async_pending_high: ['async'],
  async_pending_growing: ['async'],
  quarantined_rising: ['quarantined'],
  ring_mismatch: ['ringmd5'],
  clock_skew: ['time'],
};

/** Read this round: present and not the collector's {"error": …} for an endpoint that failed. */
const wasRead = (value: unknown): boolean =>
  value !== undefined && !(typeof value === 'object' && value !== null && 'error' in value);

/** Whether this round could judge the finding on its node: some document it is judged from was read. */
const canJudge = (f: Keyed, node: RoundNode): boolean => {
  const from = JUDGED_FROM[f.code as keyof typeof JUDGED_FROM] as readonly ReconKey[] | undefined;
  return from === undefined || from.some((key) => wasRead(node.recon[key]));
};

/**
 * Settles the open findings against what a round found. A node that is in the round but silent
 * tells nothing about its drives, replication, ring or clock: not finding its findings then is not
 * knowing, not health, so they are held (unchanged, beside its node_silent) until a round in which
 * it answers decides them, as Kubernetes marks a silent node's conditions Unknown rather than
 * clearing them. The same holds for one endpoint of a node that answered: a device_full is not
 * cured by a diskusage that timed out. A node that left the round (the rings no longer list it) closes its findings;
 * cluster findings (node null) are judged from capacity history, which a silent node does not hide.
 */
export function settleFindings<O extends Keyed>(
  open: readonly O[],
  found: readonly Finding[],
  round: Pick<HealthRound, 'nodes'>,
): Settlement<O> {
  const nodes = new Map(round.nodes.map((n) => [n.node, n]));
  const openByKey = new Map(open.map((f) => [findingKey(f), f]));
  const foundByKey = new Map(found.map((f) => [findingKey(f), f]));
  const result: Settlement<O> = { opening: [], kept: [], held: [], closing: [] };
  for (const [key, f] of foundByKey) {
    const was = openByKey.get(key);
    if (was) result.kept.push({ open: was, found: f });
    else result.opening.push(f);
  }
  for (const [key, f] of openByKey) {
    if (foundByKey.has(key)) continue;
    const node = f.node === null ? undefined : nodes.get(f.node);
    if (node && (!node.answered || !canJudge(f, node))) result.held.push(f);
    else result.closing.push(f);
  }
  return result;
}
