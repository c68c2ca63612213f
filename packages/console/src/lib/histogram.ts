/** Distribution of device percent-used, for the capacity page's histogram. */

export interface Bin {
  /** Inclusive lower edge, percent. */
  from: number;
  /** Exclusive upper edge, percent (the last bin also holds exactly 100). */
  to: number;
  count: number;
}

/** `width`-percent bins over 0–100; values outside are clamped into the first or last bin. */
export function binPercentages(values: readonly number[], width = 5): Bin[] {
  if (!(width > 0) || 100 % width !== 0) throw new Error(`bin width must divide 100, got ${width}`);
  const n = 100 / width;
  const bins: Bin[] = Array.from({ length: n }, (_, i) => ({ from: i * width, to: (i + 1) * width, count: 0 }));
  for (const v of values) {
    if (!Number.isFinite(v)) continue;
    const i = Math.min(n - 1, Math.max(0, Math.floor(v / width)));
    bins[i]!.count += 1;
  }
  return bins;
}

export interface Summary {
  count: number;
  min: number;
  max: number;
  avg: number;
  /** Nearest rank, as the capacity API: the value at rank ⌈0.95·n⌉. */
  p95: number;
}

/** The same statistics the API stores, for a filtered subset of devices; null for none. */
export function summarize(values: readonly number[]): Summary | null {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  const n = sorted.length;
  if (n === 0) return null;
  const sum = sorted.reduce((a, b) => a + b, 0);
  return { count: n, min: sorted[0]!, max: sorted[n - 1]!, avg: sum / n, p95: sorted[Math.ceil(0.95 * n) - 1]! };
}
