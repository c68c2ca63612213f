import { formatBytes } from '../lib/format';
import type { PolicyTotal } from '../lib/utilization';

/**
 * The cluster's average bytes stored per storage policy as horizontal bars, in SVG attributes (no
 * inline style, which the CSP forbids, and no chart library: a few bars need none). The figures
 * are in the legend beside it; assistive technology gets them as one sentence.
 */
export function PolicyBars({
  totals,
  label,
  nameOf,
}: {
  totals: PolicyTotal[];
  label: string;
  nameOf: (index: number) => string;
}) {
  const W = 400;
  const ROW = 24;
  const pad = { l: 90, r: 78, t: 4, b: 4 };
  const H = pad.t + pad.b + ROW * totals.length;
  const max = Math.max(1, ...totals.map((t) => t.bytes_used_avg));
  const width = (v: number) => (v / max) * (W - pad.l - pad.r);
  const described = `${label}: ${totals.map((t) => `${nameOf(t.policy_index)} ${formatBytes(t.bytes_used_avg)}`).join(', ')}`;
  return (
    <svg class="policybars" viewBox={`0 0 ${W} ${H}`} role="img" aria-label={described}>
      {totals.map((t, i) => {
        const y = pad.t + i * ROW;
        return (
          <g
            data-policy={String(t.policy_index)}
            data-policy-name={nameOf(t.policy_index)}
            data-raw={String(t.bytes_used_avg)}
          >
            <text class="tick" x={pad.l - 6} y={y + ROW / 2 + 4} text-anchor="end">
              {nameOf(t.policy_index)}
            </text>
            <rect
              class="bar"
              x={pad.l}
              y={y + 4}
              width={Math.max(t.bytes_used_avg > 0 ? 1 : 0, width(t.bytes_used_avg))}
              height={ROW - 8}
            />
            <text class="tick" x={pad.l + width(t.bytes_used_avg) + 4} y={y + ROW / 2 + 4}>
              {formatBytes(t.bytes_used_avg)}
            </text>
          </g>
        );
      })}
    </svg>
  );
}
