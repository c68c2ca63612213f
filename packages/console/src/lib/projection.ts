import { formatBytes } from './format';

/** A straight-line estimate of when a ring set fills to a threshold, from a history of samples. */

export interface Sample {
  /** Milliseconds since the epoch. */
  t: number;
  usedBytes: number;
  rawBytes: number;
}

export type Projection =
  | { kind: 'already'; pct: number }
  | { kind: 'never' }
  | { kind: 'insufficient' }
  | { kind: 'at'; t: number; bytesPerDay: number };

const DAY = 86_400_000;

/**
 * Least-squares line through used bytes over time; where it crosses `threshold` % of the latest
 * raw capacity. Fewer than two samples, or samples all at one time, cannot say anything.
 */
export function projectThreshold(samples: readonly Sample[], threshold = 80): Projection {
  if (samples.length === 0) return { kind: 'insufficient' };
  const last = samples.reduce((a, b) => (b.t > a.t ? b : a));
  const pct = last.rawBytes > 0 ? (last.usedBytes / last.rawBytes) * 100 : 0;
  if (pct >= threshold) return { kind: 'already', pct };
  const line = trend(samples);
  if (line === null) return { kind: 'insufficient' };
  const { mt, mu, slope } = line;
  if (slope <= 0) return { kind: 'never' };
  const target = (threshold / 100) * last.rawBytes;
  const t = mt + (target - mu) / slope;
  return { kind: 'at', t: Math.max(t, last.t), bytesPerDay: slope * DAY };
}

/**
 * The least-squares line through used bytes over time: its mean time and bytes and its slope in
 * bytes per millisecond; null for fewer than two samples or samples all at one time.
 */
export function trend(samples: readonly Sample[]): { mt: number; mu: number; slope: number } | null {
  if (samples.length < 2) return null;
  const n = samples.length;
  const mt = samples.reduce((a, s) => a + s.t, 0) / n;
  const mu = samples.reduce((a, s) => a + s.usedBytes, 0) / n;
  let cov = 0;
  let varT = 0;
  for (const s of samples) {
    cov += (s.t - mt) * (s.usedBytes - mu);
    varT += (s.t - mt) ** 2;
  }
  if (varT === 0) return null;
  return { mt, mu, slope: cov / varT };
}

/**
 * When `used` bytes of `raw` reach `threshold` %, growing from time `at` by `bytesPerDay` (null:
 * no growth known): the same kinds as projectThreshold.
 */
export function reachAt(
  used: number,
  raw: number,
  at: number,
  bytesPerDay: number | null,
  threshold: number,
): Projection {
  const pct = raw > 0 ? (used / raw) * 100 : 0;
  if (pct >= threshold) return { kind: 'already', pct };
  if (bytesPerDay === null) return { kind: 'insufficient' };
  if (bytesPerDay <= 0) return { kind: 'never' };
  return { kind: 'at', t: at + (((threshold / 100) * raw - used) / bytesPerDay) * DAY, bytesPerDay };
}

/** What the page says of a projection; always labelled as an estimate. */
export function describeProjection(p: Projection, threshold = 80): string {
  switch (p.kind) {
    case 'already':
      return `Already ${p.pct.toFixed(1)} % used, past ${threshold} %.`;
    case 'never':
      return `Estimate: not growing over this period, so no date at which it reaches ${threshold} %.`;
    case 'insufficient':
      return `Too little history for an estimate yet: it needs samples from at least two different hours.`;
    case 'at':
      return `Estimate: at this period's rate (${formatBytes(p.bytesPerDay)} a day, a straight line through the samples), it reaches ${threshold} % around ${new Date(p.t).toISOString().slice(0, 10)}.`;
  }
}

/** The samples of a ring set's history in the projection's terms (TB are 10^12 bytes). */
export const historySamples = (
  samples: ReadonlyArray<{ time: string; total_used_tb: number; total_raw_tb: number }>,
): Sample[] =>
  samples.map((s) => ({ t: Date.parse(s.time), usedBytes: s.total_used_tb * 1e12, rawBytes: s.total_raw_tb * 1e12 }));
