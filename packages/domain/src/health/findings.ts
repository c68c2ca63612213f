/** What the health rules find, as the API stores and shows it. */
export type Severity = 'warning' | 'critical';
export const SEVERITIES: readonly Severity[] = ['warning', 'critical'];

/** Every kind of finding; docs/health.md describes each. */
export const FINDING_CODES = [
  'drive_unmounted',
  'drive_errors',
  'device_full',
  'account_replication_stale',
  'container_replication_stale',
  'object_replication_stale',
  'async_pending_high',
  'async_pending_growing',
  'quarantined_rising',
  'ring_mismatch',
  'clock_skew',
  'node_silent',
  'ring_set_filling',
] as const;
export type FindingCode = (typeof FINDING_CODES)[number];

export interface Finding {
  code: FindingCode;
  severity: Severity;
  /** ip:port, or null for a finding about the cluster (a ring set). */
  node: string | null;
  device: string | null;
  /** The ring set (policy names, as capacity shows them) of a ring-set finding, else null. */
  ringSet: string | null;
  /** Since when the condition holds, as far as the data tells (else the round's time). */
  since: Date;
  /** What is wrong and what to do about it. */
  sentence: string;
}

/** A cluster's status: its worst open finding, `ok` without any, `unknown` before any round. */
export type HealthStatus = 'ok' | Severity | 'unknown';

export function worstSeverity(severities: Iterable<Severity>): 'ok' | Severity {
  let worst: 'ok' | Severity = 'ok';
  for (const s of severities) {
    if (s === 'critical') return 'critical';
    worst = 'warning';
  }
  return worst;
}

/** The key a finding is tracked by: it opens once, and closes when no round finds it any more. */
export const findingKey = (f: Pick<Finding, 'code' | 'node' | 'device' | 'ringSet'>): string =>
  JSON.stringify([f.code, f.node ?? '', f.device ?? '', f.ringSet ?? '']);

/** "93.1 %": one decimal, as capacity shows percentages. */
export const pct = (x: number): string => `${(Math.floor(x * 10) / 10).toFixed(1)} %`;
