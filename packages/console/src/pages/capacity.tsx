import { useMemo } from 'preact/hooks';
import { listAll, type CapacityElement, type CapacityHistory, type Device } from '../api';
import { ErrorText, Loading, Section, ScrollBox } from '../components';
import { useSession } from '../context';
import { useLoad } from '../hooks';
import { devicePctUsed, formatBytes, formatPct, formatTb, formatTime, tbTitle } from '../lib/format';
import { binPercentages } from '../lib/histogram';
import { ringSetMatcher } from '../lib/ring-sets';
import type { DeviceRow } from '../lib/device-sort';
import { Histogram, UsedBar, WARN_PCT } from './charts';
import { DeviceTable } from './device-table';
import { Lazy } from '../lazy';
import { QuotaCommitment } from './quota-capacity';
import { WhatIfPanel } from './what-if';

/** The trend charts and uPlot load only when there is a history to draw. */
const loadTrend = () => import('./capacity-trend').then((m) => m.CapacityTrend);

/** The trend covers this many days up to now. */
const TREND_DAYS = 30;

/** Devices read for the histograms and the table; a larger cluster is summarised by the API's statistics. */
const DEVICE_READ_LIMIT = 50_000;

/** The cluster capacity planning page: the capacity API's table, then charts per ring set, then devices. */
export function CapacityPage({ clusterId }: { clusterId: number; params: URLSearchParams }) {
  const { call, clusters } = useSession();
  const cluster = clusters.find((c) => c.id === clusterId);
  const capacity = useLoad(
    () => call<{ capacity: CapacityElement[] }>('GET', `clusters/${clusterId}/capacity/list/`),
    [clusterId],
  );
  const history = useLoad(
    () =>
      call<CapacityHistory>(
        'GET',
        `clusters/${clusterId}/capacity/history/?start=${new Date(Date.now() - TREND_DAYS * 86_400_000).toISOString()}`,
      ),
    [clusterId],
  );
  const devices = useLoad(
    () => listAll<Device>(call, `clusters/${clusterId}/devices/?limit=1000`, DEVICE_READ_LIMIT),
    [clusterId],
  );
  const rows: DeviceRow[] = useMemo(() => {
    const ringSetOf = ringSetMatcher((capacity.data?.capacity ?? []).map((e) => e.ring_set));
    return (devices.data?.rows ?? []).map((d) => ({
      ...d,
      ringSet: ringSetOf(d.policies),
      pct: devicePctUsed(d.used_bytes, d.avail_bytes),
    }));
  }, [devices.data, capacity.data]);
  if (!cluster) {
    return (
      <>
        <h1 tabIndex={-1}>Capacity planning</h1>
        <ErrorText error={`No cluster with id ${clusterId} (or you may not see it).`} />
      </>
    );
  }
  const elements = capacity.data?.capacity ?? [];
  return (
    <>
      <div class="page-head">
        <h1 tabIndex={-1}>Capacity planning — {cluster.name}</h1>
        <a href="#/clusters">All clusters</a>
      </div>
      <p class="hint">
        Raw disk capacity per ring set (the set of storage policies whose object rings list a device). Sizes are in
        binary units (1 TiB = 2<sup>40</sup> bytes); the capacity API counts TB (10<sup>12</sup> bytes): hover a cell
        for its exact figure.
        {devices.data?.rows[0] ? ` Devices last reported ${formatTime(devices.data.rows[0].reported_at)}.` : ''}
      </p>
      <Section title="Capacity by ring set">
        {capacity.loading && !capacity.data ? <Loading what="capacity" /> : null}
        <ErrorText error={capacity.error} />
        {capacity.data && elements.length === 0 ? (
          <p>No devices reported for this cluster yet (see “cairn capacity collect”).</p>
        ) : null}
        {elements.length > 0 ? <CapacityTable elements={elements} /> : null}
      </Section>
      {capacity.data ? <QuotaCommitment clusterId={clusterId} elements={elements} /> : null}
      <div class="grid">
        {elements.map((el) => (
          <RingSetCard
            element={el}
            devices={rows.filter((r) => r.ringSet === el.ring_set)}
            devicesLoaded={!!devices.data}
          />
        ))}
      </div>
      {elements.length > 0 && devices.data ? (
        <WhatIfPanel clusterId={clusterId} elements={elements} devices={rows} history={history.data} />
      ) : null}
      <Section title={`Trend of the last ${TREND_DAYS} days`}>
        <p class="hint">
          Bytes used per ring set, one sample per hour a report arrived in, and a straight-line estimate of when the
          ring set reaches {WARN_PCT} % of its raw capacity — an estimate from past growth, not a promise.
        </p>
        {history.loading && !history.data ? <Loading what="the capacity history" /> : null}
        <ErrorText error={history.error} />
        {history.data && history.data.history.length === 0 ? (
          <p>No capacity history yet: it starts with the first device report.</p>
        ) : null}
        {history.data?.history.map((h) => (
          <Lazy load={loadTrend} props={{ ringSet: h.ring_set, samples: h.samples }} />
        ))}
      </Section>
      <Section title="Devices">
        {devices.loading && !devices.data ? <Loading what="devices" /> : null}
        <ErrorText error={devices.error} />
        {devices.data && devices.data.total > devices.data.rows.length ? (
          <p class="warning">
            Showing the first {devices.data.rows.length.toLocaleString()} of {devices.data.total.toLocaleString()}{' '}
            devices; the capacity table above covers all of them.
          </p>
        ) : null}
        {devices.data ? <DeviceTable rows={rows} /> : null}
      </Section>
    </>
  );
}

const COLUMNS: Array<{
  key: string;
  label: string;
  get: (e: CapacityElement) => number;
  show: (v: number) => string;
  title?: (v: number) => string | undefined;
}> = [
  // Used % first: what the page is read for, in view on a phone too.
  { key: 'total_used_pct', label: 'Used %', get: (e) => e.total_used_pct, show: formatPct },
  { key: 'total_raw_tb', label: 'Raw', get: (e) => e.total_raw_tb, show: formatTb, title: tbTitle },
  { key: 'total_used_tb', label: 'Used', get: (e) => e.total_used_tb, show: formatTb, title: tbTitle },
  { key: 'total_free_tb', label: 'Free', get: (e) => e.total_free_tb, show: formatTb, title: tbTitle },
  { key: 'count', label: 'Devices', get: (e) => e.pct_used_stats.count, show: (v) => v.toLocaleString() },
  { key: 'min', label: 'Min %', get: (e) => e.pct_used_stats.min, show: formatPct },
  { key: 'avg', label: 'Avg %', get: (e) => e.pct_used_stats.avg, show: formatPct },
  { key: 'pct_95', label: 'P95 %', get: (e) => e.pct_used_stats.pct_95, show: formatPct },
  { key: 'max', label: 'Max %', get: (e) => e.pct_used_stats.max, show: formatPct },
  { key: 'stddev', label: 'Std dev', get: (e) => e.pct_used_stats.stddev, show: (v) => v.toFixed(2) },
];

/** The capacity API's answer, one row per ring set, every number as returned (exact in data-raw and title). */
function CapacityTable({ elements }: { elements: CapacityElement[] }) {
  return (
    <ScrollBox label="Capacity by ring set">
      <table class="capacity">
        <caption class="sr-only">Capacity by ring set, as GET capacity/list/ returns it</caption>
        <thead>
          <tr>
            <th scope="col">Ring set</th>
            {COLUMNS.map((c) => (
              <th scope="col" class="num">
                {c.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {elements.map((e) => (
            <tr data-ring-set={e.ring_set} class={e.total_used_pct >= WARN_PCT ? 'warn' : undefined}>
              <th scope="row">{e.ring_set}</th>
              {COLUMNS.map((c) => (
                <td class="num" data-field={c.key} data-raw={String(c.get(e))} title={(c.title ?? String)(c.get(e))}>
                  {c.show(c.get(e))}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollBox>
  );
}

function RingSetCard({
  element: e,
  devices,
  devicesLoaded,
}: {
  element: CapacityElement;
  devices: DeviceRow[];
  devicesLoaded: boolean;
}) {
  const s = e.pct_used_stats;
  const pcts = devices.map((d) => d.pct).filter((p): p is number => p !== null);
  const over = pcts.filter((p) => p >= WARN_PCT).length;
  const marks = [
    { label: 'min', value: s.min },
    { label: 'avg', value: s.avg },
    { label: 'p95', value: s.pct_95 },
    { label: 'max', value: s.max },
  ];
  return (
    <Section title={`Ring set ${e.ring_set}`}>
      {e.total_used_pct >= WARN_PCT ? (
        <p class="warning" role="status">
          {formatPct(e.total_used_pct)} used — past {WARN_PCT} %: plan more capacity for this ring set.
        </p>
      ) : null}
      <UsedBar pct={e.total_used_pct} label={`Ring set ${e.ring_set}`} />
      <p class="legend">
        <span class="swatch used" /> used {formatTb(e.total_used_tb)} · <span class="swatch free" /> free{' '}
        {formatTb(e.total_free_tb)} · raw {formatTb(e.total_raw_tb)} · {formatPct(e.total_used_pct)} used
      </p>
      <h3>Devices by percent used</h3>
      {devicesLoaded ? (
        <Histogram
          bins={binPercentages(pcts)}
          marks={marks}
          label={`Devices of ring set ${e.ring_set} by percent used`}
        />
      ) : (
        <Loading what="devices" />
      )}
      <p class="legend">
        min {formatPct(s.min)} · avg {formatPct(s.avg)} · p95 {formatPct(s.pct_95)} · max {formatPct(s.max)} · {s.count}{' '}
        devices reporting
        {over > 0 ? ` · ${over} past ${WARN_PCT} %` : ''}
        {devicesLoaded && pcts.length > 0
          ? ` · largest ${formatBytes(Math.max(...devices.map((d) => (d.used_bytes ?? 0) + (d.avail_bytes ?? 0))))}`
          : ''}
      </p>
    </Section>
  );
}
