import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { formatBytes } from '../lib/format';
import { axisTimes, byteIncrements, chartTime, samplesOf } from '../lib/chart-axes';
import { timeAxisRange } from '../lib/time-axis';

const COLORS = ['#2563eb', '#c2410c', '#15803d', '#7c3aed', '#b91c1c', '#0f766e'];

export interface TimeSeries {
  label: string;
  values: Array<number | null>;
}

/** Bytes, bytes per hour (transfer: each point is an hour's sum), or a plain count. */
export type ChartUnit = 'bytes' | 'bytes/h' | 'count';

const formatterOf =
  (unit: ChartUnit) =>
  (v: number | null): string =>
    v === null
      ? '—'
      : unit === 'bytes'
        ? formatBytes(v)
        : unit === 'bytes/h'
          ? `${formatBytes(v)}/h`
          : Math.round(v).toLocaleString('en-US');

/**
 * A time-series chart (uPlot, canvas). Every caller puts the same figures in a table right below
 * it (the label says so); the chart is labelled for assistive technology by its title. Times read
 * as in the tables, 24-hour UTC; the value axis steps by whole bytes (or objects). With a single
 * sample there is no line to draw: a sentence gives it instead.
 */
export function TimeChart({
  title,
  x,
  series,
  unit,
}: {
  title: string;
  x: number[];
  series: TimeSeries[];
  unit: ChartUnit;
}) {
  const box = useRef<HTMLDivElement>(null);
  const samples = samplesOf(x, series);
  const fmt = formatterOf(unit);
  useEffect(() => {
    const el = box.current;
    if (!el || samples.length < 2) return;
    const plot = new uPlot(
      {
        width: Math.max(280, el.clientWidth),
        height: 220,
        // Splits at whole UTC hours and days, as the tables count them.
        tzDate: (ts: number) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
        // Points as well as lines: an hour between two unknown ones (a gap) has no line to draw.
        series: [
          { label: 'UTC', value: (_u: uPlot, v: number | null) => (v === null ? '—' : chartTime(v)) },
          ...series.map((s, i) => ({
            label: s.label,
            stroke: COLORS[i % COLORS.length],
            width: 2,
            points: { show: true, size: 5, fill: COLORS[i % COLORS.length] },
            value: (_u: uPlot, v: number | null) => fmt(v),
          })),
        ],
        axes: [
          {
            // Room for a whole "2026-11-24 22:00" between ticks, at phone width too.
            space: 120,
            values: (_u: uPlot, splits: number[]) => {
              const labels = axisTimes(splits);
              // The axis is drawn on the canvas: its labels, readable by tests and tools.
              el.dataset.xTicks = labels.join('|');
              return labels;
            },
          },
          {
            size: 90,
            incrs: byteIncrements(),
            values: (_u: uPlot, splits: number[]) => {
              const labels = splits.map((v) => fmt(v));
              el.dataset.yTicks = labels.join('|');
              return labels;
            },
          },
        ],
        // The time axis's span, readable by tests and tools (the axis itself is drawn on the canvas).
        hooks: {
          setScale: [
            (u: uPlot, key: string) => {
              if (key !== 'x') return;
              el.dataset.xMin = String(u.scales.x?.min);
              el.dataset.xMax = String(u.scales.x?.max);
            },
          ],
        },
        scales: {
          x: { time: true, range: () => timeAxisRange(x) },
          y: { range: (_u: uPlot, _min: number, max: number) => [0, max > 0 ? Math.max(max * 1.1, 4) : 4] },
        },
      },
      [x, ...series.map((s) => s.values)] as uPlot.AlignedData,
      el,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(280, el.clientWidth), height: 220 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [x, series, unit, samples.length]);
  if (samples.length < 2) {
    const only = samples[0];
    return (
      <figure class="timechart">
        <figcaption>{title}</figcaption>
        <p class="chart-note" data-samples={String(samples.length)}>
          {only
            ? `One sample so far, at ${chartTime(only.t)} UTC: ${only.values
                .map((v, i) => `${series[i]!.label} ${fmt(v)}`)
                .join(', ')}. A chart needs at least two.`
            : 'No samples in this range yet.'}
        </p>
      </figure>
    );
  }
  return (
    <figure class="timechart">
      <figcaption>{title}</figcaption>
      <div ref={box} role="img" aria-label={`${title}: chart; the figures are in the table below`} />
    </figure>
  );
}
