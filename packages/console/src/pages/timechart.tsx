import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { formatBytes } from '../lib/format';
import { timeAxisRange } from '../lib/time-axis';

const COLORS = ['#2563eb', '#c2410c', '#15803d', '#7c3aed', '#b91c1c', '#0f766e'];

export interface TimeSeries {
  label: string;
  values: Array<number | null>;
}

/**
 * A time-series chart (uPlot, canvas). Every caller puts the same figures in a table right below
 * it (the label says so); the chart is labelled for assistive technology by its title.
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
  unit: 'bytes' | 'count';
}) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const fmt = (v: number | null) => (v === null ? '—' : unit === 'bytes' ? formatBytes(v) : v.toLocaleString());
    const plot = new uPlot(
      {
        width: Math.max(280, el.clientWidth),
        height: 220,
        // Points as well as lines: an hour between two unknown ones (a gap) has no line to draw.
        series: [
          {},
          ...series.map((s, i) => ({
            label: s.label,
            stroke: COLORS[i % COLORS.length],
            width: 2,
            points: { show: true, size: 5, fill: COLORS[i % COLORS.length] },
            value: (_u: uPlot, v: number | null) => fmt(v),
          })),
        ],
        axes: [{}, { size: 80, values: (_u: uPlot, splits: number[]) => splits.map((v) => fmt(v)) }],
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
          y: { range: (_u: uPlot, _min: number, max: number) => [0, max > 0 ? max * 1.1 : 1] },
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
  }, [x, series, unit]);
  return (
    <figure class="timechart">
      <figcaption>{title}</figcaption>
      <div ref={box} role="img" aria-label={`${title}: chart; the figures are in the table below`} />
    </figure>
  );
}
