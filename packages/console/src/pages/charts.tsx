import type { Bin } from '../lib/histogram';

/** The capacity planner's warning line: past this percent used, plan hardware. */
export const WARN_PCT = 80;

/** A used/free bar; drawn in SVG attributes (no inline style, which the CSP forbids). Past 100 %: "over". */
export function UsedBar({ pct, label }: { pct: number; label: string }) {
  const w = Math.max(0, Math.min(100, pct));
  return (
    <svg
      class={pct >= 100 ? 'usedbar over' : pct >= WARN_PCT ? 'usedbar warn' : 'usedbar'}
      viewBox="0 0 100 10"
      preserveAspectRatio="none"
      role="img"
      aria-label={`${label}: ${pct.toFixed(1)} % used`}
    >
      <rect class="free" x="0" y="0" width="100" height="10" />
      <rect class="used" x="0" y="0" width={w} height="10" />
      <line class="limit" x1={WARN_PCT} x2={WARN_PCT} y1="0" y2="10" />
    </svg>
  );
}

export interface Mark {
  label: string;
  value: number;
}

/**
 * Devices per percent-used bin, with the statistics marked as vertical lines. The figures are
 * also in the table beside it; the chart is described for assistive technology as one sentence.
 */
export function Histogram({ bins, marks, label }: { bins: Bin[]; marks: Mark[]; label: string }) {
  const W = 400;
  const H = 160;
  const pad = { l: 28, r: 16, t: 28, b: 22 };
  const max = Math.max(1, ...bins.map((b) => b.count));
  const x = (pct: number) => pad.l + (pct / 100) * (W - pad.l - pad.r);
  const y = (n: number) => H - pad.b - (n / max) * (H - pad.t - pad.b);
  const total = bins.reduce((a, b) => a + b.count, 0);
  const described = `${label}: ${total} devices; ${marks.map((m) => `${m.label} ${m.value.toFixed(1)} %`).join(', ')}`;
  return (
    <svg class="histogram" viewBox={`0 0 ${W} ${H}`} role="img" aria-label={described}>
      <rect class="warnzone" x={x(WARN_PCT)} y={pad.t} width={x(100) - x(WARN_PCT)} height={H - pad.t - pad.b} />
      {bins.map((b) =>
        b.count > 0 ? (
          <rect
            class="bin"
            x={x(b.from) + 0.5}
            y={y(b.count)}
            width={Math.max(1, x(b.to) - x(b.from) - 1)}
            height={H - pad.b - y(b.count)}
          />
        ) : null,
      )}
      <line class="axis" x1={pad.l} x2={W - pad.r} y1={H - pad.b} y2={H - pad.b} />
      {[0, 20, 40, 60, 80, 100].map((p) => (
        <text class="tick" x={x(p)} y={H - 6} text-anchor="middle">
          {p}%
        </text>
      ))}
      <text class="tick" x={pad.l - 4} y={pad.t + 4} text-anchor="end">
        {max}
      </text>
      <text class="tick" x={pad.l - 4} y={H - pad.b} text-anchor="end">
        0
      </text>
      {marks.map((m, i) => (
        <g class={`mark mark-${m.label}`}>
          <line x1={x(m.value)} x2={x(m.value)} y1={pad.t - 4} y2={H - pad.b} />
          <text x={x(m.value)} y={9 + (i % 2) * 10} text-anchor="middle">
            {m.label}
          </text>
        </g>
      ))}
    </svg>
  );
}
