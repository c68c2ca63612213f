/** The time charts' axes: times as the tables write them, and value steps of whole bytes. */

/** "2026-11-24 22:00" (UTC, 24-hour) from seconds since the epoch, as the hourly tables read. */
export function chartTime(seconds: number): string {
  return new Date(seconds * 1000).toISOString().slice(0, 16).replace('T', ' ');
}

/**
 * The time axis's labels: the date and time at the first split and wherever the day changes,
 * the time alone in between ("2026-11-24 22:00", "23:00", "2026-11-25 00:00"); splits all at
 * midnight (a range of days) are dates alone.
 */
export function axisTimes(splits: readonly number[]): string[] {
  if (splits.length > 0 && splits.every((s) => chartTime(s).endsWith(' 00:00')))
    return splits.map((s) => chartTime(s).slice(0, 10));
  let day = '';
  return splits.map((s) => {
    const t = chartTime(s);
    if (t.slice(0, 10) === day) return t.slice(11);
    day = t.slice(0, 10);
    return t;
  });
}

/**
 * Steps the value axis may take: whole numbers only (no "0.5 bytes" tick), 1-2-5 decimal steps and
 * the powers of two, so binary units land on round figures (512 MiB, 1 GiB).
 */
export function byteIncrements(): number[] {
  const steps = new Set<number>();
  for (let p = 1; p < 1e19; p *= 10) for (const m of [1, 2, 5]) steps.add(m * p);
  for (let e = 0; e <= 62; e += 1) steps.add(2 ** e);
  return [...steps].sort((a, b) => a - b);
}

/** The x positions where some series has a value: what a chart would draw as points. */
export function samplesOf(
  x: readonly number[],
  series: ReadonlyArray<{ values: ReadonlyArray<number | null> }>,
): Array<{ t: number; values: Array<number | null> }> {
  const out: Array<{ t: number; values: Array<number | null> }> = [];
  x.forEach((t, i) => {
    const values = series.map((s) => s.values[i] ?? null);
    if (values.some((v) => v !== null)) out.push({ t, values });
  });
  return out;
}
