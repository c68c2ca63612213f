import type { Finding } from './findings';
import type { HealthThresholds } from './thresholds';

const DAY_MS = 86_400_000;

/** One ring set's hourly capacity sample (capacity/history/'s numbers). */
export interface FillSample {
  ringSet: string;
  hour: Date;
  usedTb: number;
  freeTb: number;
}

/** At least this long a stretch of history before a projection is made: a day's swing is noise. */
export const MIN_PROJECTION_SPAN_MS = DAY_MS;

/**
 * The days until a ring set is full, by ordinary least squares of used TB over time across its
 * samples from the last `full_projection_days`: the slope is the growth per day, and the latest
 * sample's free TB divided by it is the time left. Null when the set does not grow, or fewer than
 * 3 samples span less than a day.
 */
export function projectDaysToFull(samples: ReadonlyArray<FillSample>): number | null {
  if (samples.length < 3) return null;
  const sorted = [...samples].sort((a, b) => a.hour.getTime() - b.hour.getTime());
  const t0 = sorted[0]!.hour.getTime();
  const span = sorted[sorted.length - 1]!.hour.getTime() - t0;
  if (span < MIN_PROJECTION_SPAN_MS) return null;
  const xs = sorted.map((s) => (s.hour.getTime() - t0) / DAY_MS);
  const ys = sorted.map((s) => s.usedTb);
  const n = xs.length;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (let i = 0; i < n; i++) {
    sxy += (xs[i]! - mx) * (ys[i]! - my);
    sxx += (xs[i]! - mx) ** 2;
  }
  const perDay = sxy / sxx;
  if (!(perDay > 0)) return null;
  return Math.max(0, sorted[n - 1]!.freeTb) / perDay;
}

/** Per ring set, a finding when it is projected full within full_warning_days. */
export function timeToFullFindings(samples: ReadonlyArray<FillSample>, t: HealthThresholds, at: Date): Finding[] {
  const from = at.getTime() - t.full_projection_days * DAY_MS;
  const bySet = new Map<string, FillSample[]>();
  for (const s of samples) {
    if (s.hour.getTime() < from || s.hour.getTime() > at.getTime()) continue;
    bySet.set(s.ringSet, [...(bySet.get(s.ringSet) ?? []), s]);
  }
  const findings: Finding[] = [];
  for (const [ringSet, set] of [...bySet].sort(([a], [b]) => a.localeCompare(b))) {
    const days = projectDaysToFull(set);
    if (days === null || days >= t.full_warning_days) continue;
    const full = new Date(at.getTime() + days * DAY_MS);
    findings.push({
      code: 'ring_set_filling',
      severity: days < t.full_critical_days ? 'critical' : 'warning',
      node: null,
      device: null,
      ringSet,
      since: at,
      sentence:
        `Ring set ${ringSet} is projected to be full in ${days.toFixed(1)} day(s), around ${full.toISOString().slice(0, 10)} (the trend of its used bytes over the last ${t.full_projection_days} day(s); warning under ${t.full_warning_days} days). ` +
        'Order and add capacity now: new devices take hours to days to fill by rebalancing, and Swift refuses writes to full devices (Swift admin guide: preventing disk full scenarios).',
    });
  }
  return findings;
}
