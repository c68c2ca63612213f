import { useEffect, useMemo } from 'preact/hooks';
import { errorText, type Call } from '../api';
import { ErrorText, Loading, Section } from '../components';
import { useLoad } from '../hooks';
import { formatBytes, formatTime, NOT_SAMPLED } from '../lib/format';
import type { MyStorage } from '../self-session';
import { UsedBar } from './charts';
import { TimeChart } from './timechart';

type Amount = number | string | null;

const num = (v: Amount): number | null => (v === null ? null : Number(v));
const count = (v: Amount): string => (v === null ? '—' : Number(v).toLocaleString('en-US'));

/** One figure against its quota: the amounts, and a bar when there is a quota. */
function Standing({ label, used, quota, bytes }: { label: string; used: Amount; quota: Amount; bytes: boolean }) {
  const fmt = bytes ? (v: Amount) => (v === null ? '—' : formatBytes(v)) : count;
  const u = num(used);
  const q = num(quota);
  const pct = u !== null && q !== null ? (q === 0 ? (u > 0 ? 100 : 0) : (u / q) * 100) : null;
  return (
    <tr>
      <th scope="row">{label}</th>
      <td class="num">{used === null ? NOT_SAMPLED : fmt(used)}</td>
      <td class="num">{quota === null ? 'no quota' : fmt(quota)}</td>
      <td>{pct === null ? null : <UsedBar pct={pct} label={`${label} against its quota`} />}</td>
    </tr>
  );
}

/**
 * "My storage": what the signed-in storage user's account holds against its quotas, overall and per
 * storage policy (bars), when it was last sampled, and 30 days of storage and transfer as charts
 * with the same figures in a table. The chart library loads with this page only.
 */
export function MyStoragePage({ call }: { call: Call }) {
  const mine = useLoad(() => call<MyStorage>('GET', 'self/storage/'), []);
  useEffect(() => {
    document.querySelector<HTMLElement>('main h1')?.focus();
  }, []);
  // The charts draw again only when the figures change.
  const charts = useMemo(() => {
    const days = mine.data?.days ?? [];
    return {
      x: days.map((d) => Date.parse(`${d.day}T00:00:00Z`) / 1000),
      stored: [{ label: 'Stored', values: days.map((d) => d.bytes_used) }],
      moved: [
        { label: 'In', values: days.map((d) => Number(d.bytes_in)) },
        { label: 'Out', values: days.map((d) => Number(d.bytes_out)) },
      ],
    };
  }, [mine.data]);
  if (mine.error) return <ErrorText error={errorText(mine.error)} />;
  const s = mine.data;
  if (!s) return <Loading what="your storage" />;
  return (
    <>
      <h1 tabIndex={-1}>My storage</h1>
      <p>
        Account <code>{s.account}</code> on cluster <strong>{s.cluster}</strong>. Latest sample:{' '}
        <span class="sampled">{s.usage_sampled_at ? formatTime(s.usage_sampled_at) : NOT_SAMPLED}</span>.
      </p>
      <Section title="Usage against quota">
        <table class="standing">
          <thead>
            <tr>
              <th scope="col">What</th>
              <th scope="col">Used</th>
              <th scope="col">Quota</th>
              <th scope="col">Share</th>
            </tr>
          </thead>
          <tbody>
            <Standing label="Bytes" used={s.bytes_used} quota={s.quota_bytes} bytes />
            <Standing label="Objects" used={s.object_count} quota={s.quota_count} bytes={false} />
            {s.policies.flatMap((p) => [
              <Standing label={`${p.name}: bytes`} used={p.bytes_used} quota={p.quota_bytes} bytes />,
              <Standing label={`${p.name}: objects`} used={p.object_count} quota={p.quota_count} bytes={false} />,
            ])}
          </tbody>
        </table>
      </Section>
      <Section title="The last 30 days">
        <TimeChart title="Stored bytes, each day's last sample" x={charts.x} unit="bytes" series={charts.stored} />
        <TimeChart title="Transfer per day (Swift and S3)" x={charts.x} unit="bytes" series={charts.moved} />
        <table class="days">
          <caption>The charts' figures, one row per UTC day</caption>
          <thead>
            <tr>
              <th scope="col">Day</th>
              <th scope="col">Stored</th>
              <th scope="col">Objects</th>
              <th scope="col">In</th>
              <th scope="col">Out</th>
              <th scope="col">Requests</th>
            </tr>
          </thead>
          <tbody>
            {[...s.days].reverse().map((d) => (
              <tr>
                <th scope="row">{d.day}</th>
                <td class="num">{d.bytes_used === null ? '—' : formatBytes(d.bytes_used)}</td>
                <td class="num">{count(d.object_count)}</td>
                <td class="num">{formatBytes(d.bytes_in)}</td>
                <td class="num">{formatBytes(d.bytes_out)}</td>
                <td class="num">{count(d.requests)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </Section>
    </>
  );
}
