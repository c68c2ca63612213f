import { useMemo } from 'preact/hooks';
import type { CapacitySample } from '../api';
import { formatPct, formatTb, tbTitle } from '../lib/format';
import { ScrollBox } from '../components';
import { describeProjection, historySamples, projectThreshold } from '../lib/projection';
import { WARN_PCT } from './charts';
import { TimeChart } from './timechart';

/**
 * A ring set's bytes used over the stored history, with the 80 % line, and the straight-line
 * estimate of when it gets there. Loaded with the chart library, only when a trend is shown.
 */
export function CapacityTrend({ ringSet, samples }: { ringSet: string; samples: CapacitySample[] }) {
  const x = useMemo(() => samples.map((s) => Date.parse(s.time) / 1000), [samples]);
  const series = useMemo(
    () => [
      { label: 'used', values: samples.map((s) => s.total_used_tb * 1e12) },
      { label: `${WARN_PCT} % of raw`, values: samples.map((s) => (s.total_raw_tb * 1e12 * WARN_PCT) / 100) },
    ],
    [samples],
  );
  const estimate = describeProjection(projectThreshold(historySamples(samples), WARN_PCT), WARN_PCT);
  const last = samples[samples.length - 1];
  return (
    <div class="trend" data-ring-set={ringSet}>
      <TimeChart title={`Ring set ${ringSet}: bytes used`} x={x} series={series} unit="bytes" />
      <p class="estimate" role="note">
        {estimate}
      </p>
      <ScrollBox label={`Ring set ${ringSet}: samples`}>
        <table class="trend-samples">
          <caption>Ring set {ringSet}: the samples drawn above</caption>
          <thead>
            <tr>
              <th scope="col">Time (UTC)</th>
              <th scope="col" class="num">
                Used
              </th>
              <th scope="col" class="num">
                Raw
              </th>
              <th scope="col" class="num">
                {WARN_PCT} % of raw
              </th>
              <th scope="col" class="num">
                Used %
              </th>
            </tr>
          </thead>
          <tbody>
            {samples.map((s) => (
              <tr key={s.time}>
                <td>{s.time.slice(0, 16).replace('T', ' ')}</td>
                <td class="num" title={tbTitle(s.total_used_tb)}>
                  {formatTb(s.total_used_tb)}
                </td>
                <td class="num" title={tbTitle(s.total_raw_tb)}>
                  {formatTb(s.total_raw_tb)}
                </td>
                <td class="num">{formatTb((s.total_raw_tb * WARN_PCT) / 100)}</td>
                <td class="num" title={s.total_used_pct === null ? undefined : `${s.total_used_pct} %`}>
                  {formatPct(s.total_used_pct)}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollBox>
      {last ? (
        <p class="legend">
          {samples.length} sample{samples.length === 1 ? '' : 's'}, from{' '}
          {samples[0]!.time.slice(0, 16).replace('T', ' ')} to {last.time.slice(0, 16).replace('T', ' ')} UTC; last{' '}
          {formatTb(last.total_used_tb)} used of {formatTb(last.total_raw_tb)}.
        </p>
      ) : null}
    </div>
  );
}
