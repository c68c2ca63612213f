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
  if (samples.length < 2) return { kind: 'insufficient' };
  const n = samples.length;
  const mt = samples.reduce((a, s) => a + s.t, 0) / n;
  const mu = samples.reduce((a, s) => a + s.usedBytes, 0) / n;
  let cov = 0;
  let varT = 0;
  for (const s of samples) {
    cov += (s.t - mt) * (s.usedBytes - mu);
    varT += (s.t - mt) ** 2;
  }
  if (varT === 0) return { kind: 'insufficient' };
  const slope = cov / varT;
  if (slope <= 0) return { kind: 'never' };
  const target = (threshold / 100) * last.rawBytes;
  const t = mt + (target - mu) / slope;
  return { kind: 'at', t: Math.max(t, last.t), bytesPerDay: slope * DAY };
}
