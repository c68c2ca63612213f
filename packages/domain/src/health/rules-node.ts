import type { Finding } from './findings';
import { replicationLastOf, ringMd5Of, timeOf } from './recon';
import type { RoundNode } from './round';
import type { HealthThresholds } from './thresholds';

const HOUR_MS = 3_600_000;
const MINUTE_MS = 60_000;

const minutes = (ms: number): string => {
  const m = Math.round(ms / MINUTE_MS);
  return m < 120 ? `${m} minute(s)` : m < 48 * 60 ? `${Math.round(m / 60)} hour(s)` : `${Math.round(m / 1440)} day(s)`;
};

/**
 * A node that answered no recon endpoint. `lastAnswered`: when it last did (null: never), from the
 * previous rounds. Critical once silent for silent_critical_minutes.
 */
export function silentFindings(node: RoundNode, lastAnswered: Date | null, t: HealthThresholds, at: Date): Finding[] {
  if (node.answered) return [];
  const since = lastAnswered ?? at;
  const silentMs = at.getTime() - since.getTime();
  return [
    {
      code: 'node_silent',
      severity: lastAnswered === null || silentMs >= t.silent_critical_minutes * MINUTE_MS ? 'critical' : 'warning',
      node: node.node,
      device: null,
      ringSet: null,
      since,
      sentence:
        `${node.node} did not answer recon${node.error ? ` (${node.error})` : ''}` +
        (lastAnswered ? `; it last answered ${minutes(silentMs)} ago` : '; it never has') +
        '. Check that the node is up and reachable and that its server runs with the recon middleware (curl http://<node>/recon/time); while it is down its partitions are served and written by the other replicas and handoffs (Swift ops runbook: diagnose).',
    },
  ];
}

/**
 * Per server type the node serves, a replicator that has not completed a pass for longer than
 * replication_max_age_hours (or has never completed one).
 */
export function replicationFindings(node: RoundNode, t: HealthThresholds, at: Date): Finding[] {
  if (!node.answered) return [];
  const findings: Finding[] = [];
  for (const type of node.serverTypes) {
    const last = replicationLastOf(node, type);
    if (last === undefined) continue;
    const lastAt = last === null ? null : new Date(last * 1000);
    if (lastAt && at.getTime() - lastAt.getTime() <= t.replication_max_age_hours * HOUR_MS) continue;
    findings.push({
      code: `${type}_replication_stale`,
      severity: 'warning',
      node: node.node,
      device: null,
      ringSet: null,
      since: lastAt ?? at,
      sentence:
        `The ${type} replicator on ${node.node} has ${lastAt ? `not completed a pass since ${lastAt.toISOString()}` : 'never completed a pass'} (limit ${t.replication_max_age_hours} h). ` +
        `Check that swift-${type}-replicator runs (swift-init ${type}-replicator status) and read its log for errors such as rsync failures or full or unmounted devices; run 'swift-recon --replication' to compare with its peers (Swift ops runbook: replication).`,
    });
  }
  return findings;
}

/**
 * Async pendings over async_pending_max, and async pendings that only grew over the last
 * async_growing_minutes. `history`: the node's earlier samples (time, count), any order.
 */
export function asyncFindings(
  node: RoundNode,
  count: number | null,
  history: ReadonlyArray<{ at: Date; count: number }>,
  t: HealthThresholds,
  at: Date,
): Finding[] {
  if (count === null) return [];
  const findings: Finding[] = [];
  const advice =
    'Async pendings are container updates the object server could not make: check that the container servers of the affected containers answer and are not overloaded, and that swift-object-updater runs (Swift admin guide: object updater).';
  if (count > t.async_pending_max)
    findings.push({
      code: 'async_pending_high',
      severity: 'warning',
      node: node.node,
      device: null,
      ringSet: null,
      since: at,
      sentence: `${node.node} has ${count} async pending(s) (limit ${t.async_pending_max}). ${advice}`,
    });
  const since = growingSince([...history, { at, count }], t.async_growing_minutes * MINUTE_MS, at);
  if (since)
    findings.push({
      code: 'async_pending_growing',
      severity: 'warning',
      node: node.node,
      device: null,
      ringSet: null,
      since,
      sentence: `${node.node}'s async pendings grew at every round for ${minutes(at.getTime() - since.getTime())} (now ${count}); the updater is not keeping up. ${advice}`,
    });
  return findings;
}

/**
 * Whether a series never fell and rose overall over at least `spanMs` before `at`: the start is the
 * latest sample at least `spanMs` old; every later sample is at least the one before it, the last
 * greater than the start. Returns the start's time, or null.
 */
export function growingSince(
  samples: ReadonlyArray<{ at: Date; count: number }>,
  spanMs: number,
  at: Date,
): Date | null {
  const sorted = [...samples].sort((a, b) => a.at.getTime() - b.at.getTime());
  let startIndex = -1;
  sorted.forEach((s, i) => {
    if (s.at.getTime() <= at.getTime() - spanMs) startIndex = i;
  });
  if (startIndex < 0) return null;
  const window = sorted.slice(startIndex);
  if (window.length < 2) return null;
  for (let i = 1; i < window.length; i++) if (window[i]!.count < window[i - 1]!.count) return null;
  return window[window.length - 1]!.count > window[0]!.count ? window[0]!.at : null;
}

/**
 * Quarantined objects appearing: the node's count (objects, containers, accounts) rose. Returns
 * when it last rose (carried from round to round) and the finding while that is within
 * quarantine_window_hours.
 */
export function quarantineFindings(
  node: RoundNode,
  count: number | null,
  previous: { count: number | null; roseAt: Date | null },
  t: HealthThresholds,
  at: Date,
): { roseAt: Date | null; findings: Finding[] } {
  const rose = count !== null && previous.count !== null && count > previous.count;
  const roseAt = rose ? at : previous.roseAt;
  if (!roseAt || at.getTime() - roseAt.getTime() >= t.quarantine_window_hours * HOUR_MS)
    return { roseAt, findings: [] };
  return {
    roseAt,
    findings: [
      {
        code: 'quarantined_rising',
        severity: 'warning',
        node: node.node,
        device: null,
        ringSet: null,
        since: roseAt,
        sentence:
          `Quarantined items on ${node.node} rose to ${count ?? previous.count} at ${roseAt.toISOString()} (watched for ${t.quarantine_window_hours} h). ` +
          "The auditors quarantine objects and databases whose checksums or metadata are wrong and replication restores good copies; a steady rise points at a failing drive or memory: check the auditor logs and the node's drives (Swift admin guide: object auditor).",
      },
    ],
  };
}

/** A ring the node holds with an md5 other than the cluster's current ring's (swift-recon --md5). */
export function ringMismatchFindings(node: RoundNode, ringMd5: Record<string, string>, at: Date): Finding[] {
  const held = ringMd5Of(node);
  if (!node.answered || !held) return [];
  const wrong = Object.entries(ringMd5)
    .filter(([file, md5]) => held.has(file) && held.get(file) !== md5)
    .map(([file]) => file)
    .sort();
  if (wrong.length === 0) return [];
  return [
    {
      code: 'ring_mismatch',
      severity: 'critical',
      node: node.node,
      device: null,
      ringSet: null,
      since: at,
      sentence:
        `${node.node} holds a different ${wrong.join(', ')} than the cluster's current ring(s): it reads and writes partitions where the other nodes do not look for them. ` +
        "Copy the current ring files to its /etc/swift (as with every ring change) and run 'swift-recon --md5' to confirm (Swift admin guide: managing the rings).",
    },
  ];
}

/**
 * How far the node's clock lies outside the span in which the collector can have asked it (see
 * clockSkewFindings), in ms: negative behind, positive ahead, 0 within; null when not known.
 */
export function clockOffsetMs(node: RoundNode, at: Date, roundEnd: Date = at): number | null {
  const remote = timeOf(node);
  if (remote === null || !node.answered) return null;
  const remoteMs = remote * 1000;
  const start = at.getTime();
  const end = Math.max(start + node.elapsedMs, roundEnd.getTime());
  return remoteMs < start ? remoteMs - start : remoteMs > end ? remoteMs - end : 0;
}

/**
 * A node whose clock is off by more than clock_skew_ms, judged as swift-recon --time does: the
 * node's time must fall within the span in which the collector asked it, widened by the limit
 * either side. The span starts at the round's collected_at; the collector reads nodes a few at a
 * time, so a node is asked at some moment before `roundEnd` (when the API received the round),
 * and its answer came elapsed_ms after it was asked at the earliest. A clock behind is thus judged
 * to the limit; a clock ahead, to the limit plus the round's own duration.
 */
export function clockSkewFindings(node: RoundNode, t: HealthThresholds, at: Date, roundEnd: Date = at): Finding[] {
  const offset = clockOffsetMs(node, at, roundEnd);
  if (offset === null) return [];
  const offMs = Math.abs(offset);
  if (offMs <= t.clock_skew_ms) return [];
  return [
    {
      code: 'clock_skew',
      severity: 'warning',
      node: node.node,
      device: null,
      ringSet: null,
      since: at,
      sentence:
        `${node.node}'s clock is ${(offMs / 1000).toFixed(1)} s ${offset < 0 ? 'behind' : 'ahead of'} the collector's (limit ${t.clock_skew_ms / 1000} s). ` +
        "Swift orders writes and deletions by their timestamps: a node's clock off by seconds lets an older write win. Run NTP (chrony) on every node and check it with 'swift-recon --time' (Swift ops runbook: diagnose).",
    },
  ];
}
