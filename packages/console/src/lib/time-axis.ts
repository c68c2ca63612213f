/** Half a day, in the chart's unit (seconds). */
const HALF_DAY = 43_200;

/**
 * The time axis of a chart (seconds), from the x values themselves. uPlot widens a range of zero
 * width (one sample, or several at one time) by 86400 / its `ms` option, which with timestamps in
 * seconds is 86,400,000 s: an axis of about three years with the one sample at its left edge.
 * One sample is shown instead in the middle of its day; nothing at all, the day around now.
 */
export function timeAxisRange(x: readonly number[]): [number, number] {
  let min = Infinity;
  let max = -Infinity;
  for (const v of x) {
    if (!Number.isFinite(v)) continue;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  if (min === Infinity) {
    const now = Math.floor(Date.now() / 1000);
    return [now - HALF_DAY, now + HALF_DAY];
  }
  return min === max ? [min - HALF_DAY, max + HALF_DAY] : [min, max];
}
