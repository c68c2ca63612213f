import { findingKey, type Finding } from './findings';
import type { HealthRound } from './round';

type Keyed = Pick<Finding, 'code' | 'node' | 'device' | 'ringSet'>;

/** What one round does to a cluster's open findings. */
export interface Settlement<O extends Keyed> {
  /** Found now and not open: they open at this round. */
  opening: Finding[];
  /** Open and found again: they stay open and take the round's severity and sentence. */
  kept: Array<{ open: O; found: Finding }>;
  /** Open, not found, of a node this round could not read: left as they were. */
  held: O[];
  /** Open and no longer found by a round that could judge them: they close at this round. */
  closing: O[];
}

/**
 * Settles the open findings against what a round found. A node that is in the round but silent
 * tells nothing about its drives, replication, ring or clock: not finding its findings then is not
 * knowing, not health, so they are held (unchanged, beside its node_silent) until a round in which
 * it answers decides them, as Kubernetes marks a silent node's conditions Unknown rather than
 * clearing them. A node that left the round (the rings no longer list it) closes its findings;
 * cluster findings (node null) are judged from capacity history, which a silent node does not hide.
 */
export function settleFindings<O extends Keyed>(
  open: readonly O[],
  found: readonly Finding[],
  round: Pick<HealthRound, 'nodes'>,
): Settlement<O> {
  const silent = new Set(round.nodes.filter((n) => !n.answered).map((n) => n.node));
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
    if (f.node !== null && silent.has(f.node)) result.held.push(f);
    else result.closing.push(f);
  }
  return result;
}
