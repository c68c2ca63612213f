import type { Finding } from './findings';
import { asyncPendingOf, quarantinedOf } from './recon';
import type { HealthRound } from './round';
import { deviceFillFindings, driveErrorFindings, unmountedFindings } from './rules-drives';
import {
  asyncFindings,
  clockSkewFindings,
  quarantineFindings,
  replicationFindings,
  ringMismatchFindings,
  silentFindings,
} from './rules-node';
import type { HealthThresholds } from './thresholds';
import { timeToFullFindings, type FillSample } from './time-to-full';

/** What earlier rounds left of a node that the rules read. */
export interface NodeMemory {
  lastAnsweredAt: Date | null;
  quarantined: number | null;
  quarantinedRoseAt: Date | null;
  /** Async pending samples of the last async_growing_minutes and more. */
  asyncHistory: Array<{ at: Date; count: number }>;
}

/** What a round leaves of a node for the next. */
export interface NodeState {
  node: string;
  lastAnsweredAt: Date | null;
  quarantined: number | null;
  quarantinedRoseAt: Date | null;
  asyncPending: number | null;
}

const EMPTY: NodeMemory = { lastAnsweredAt: null, quarantined: null, quarantinedRoseAt: null, asyncHistory: [] };

/**
 * Every rule over one round: the findings that hold now, and each node's state for the next round.
 * `receivedAt`: when the round arrived, the latest moment a node can have been asked.
 */
export function evaluateRound(
  round: HealthRound,
  memory: ReadonlyMap<string, NodeMemory>,
  capacity: ReadonlyArray<FillSample>,
  t: HealthThresholds,
  receivedAt: Date = round.collectedAt,
): { findings: Finding[]; states: NodeState[] } {
  const at = round.collectedAt;
  const findings: Finding[] = [];
  const states: NodeState[] = [];
  for (const node of round.nodes) {
    const m = memory.get(node.node) ?? EMPTY;
    findings.push(...silentFindings(node, m.lastAnsweredAt, t, at));
    const asyncPending = node.answered ? asyncPendingOf(node) : null;
    const quarantined = node.answered ? quarantinedOf(node) : null;
    const q = quarantineFindings(node, quarantined, { count: m.quarantined, roseAt: m.quarantinedRoseAt }, t, at);
    if (node.answered) {
      findings.push(
        ...unmountedFindings(node, at),
        ...driveErrorFindings(node, t, at),
        ...deviceFillFindings(node, t, at),
        ...replicationFindings(node, t, at),
        ...asyncFindings(node, asyncPending, m.asyncHistory, t, at),
        ...ringMismatchFindings(node, round.ringMd5, at),
        ...clockSkewFindings(node, t, at, receivedAt),
      );
    }
    findings.push(...q.findings);
    states.push({
      node: node.node,
      lastAnsweredAt: node.answered ? at : m.lastAnsweredAt,
      // A silent node keeps what it last said, so its next answer compares with that.
      quarantined: quarantined ?? m.quarantined,
      quarantinedRoseAt: q.roseAt,
      asyncPending,
    });
  }
  findings.push(...timeToFullFindings(capacity, t, at));
  return { findings, states };
}
