import { useMemo, useState } from 'preact/hooks';
import type { ClusterHealthResource } from '@cairn/contract';
import type { CapacityElement, CapacityHistory, List, RingVersion } from '../api';
import { ScrollBox, Section, TableHead } from '../components';
import { useSession } from '../context';
import { useLoad } from '../hooks';
import { rawBytes, type DeviceRow } from '../lib/device-sort';
import { bytesTitle, formatBytes, formatPct, formatTime } from '../lib/format';
import { historySamples } from '../lib/projection';
import { parseBytes } from '../lib/quota-units';
import {
  DEFAULT_STEP_PCT,
  crowdedZones,
  describeWhen,
  formatDuration,
  measuredRate,
  passesOf,
  projectChange,
  projectionRing,
  ringsOfSet,
  thresholdBeforeAfter,
  zoneFill,
  zoneLabel,
  zonesOfRings,
  type Change,
  type MeasuredRate,
  type ReplicationRate,
  type RingGeometry,
  type WhatIf,
  type WhatIfDevice,
  type Zone,
} from '../lib/what-if';
import { WARN_PCT } from './charts';
import { ComputedPlan } from './what-if-plan';

const MIB = 2 ** 20;
/** Rows of the fill table; the rest change the same way (every existing device by the same factor when adding). */
const SHOWN = 50;

/** What the panel says of every figure it shows. */
export const ESTIMATE_NOTE =
  'Estimated: proportional to weight; a ring plan computed by Swift (cairn rings plan --cluster, below) gives exact figures.';

/** Form fields as typed: the figures update as the operator types, nothing is sent anywhere. */
interface Fields {
  ringSet: string;
  kind: Change['kind'];
  count: string;
  size: string;
  nodes: string;
  /** '' for the ring set as a whole, else a zone's label (r1z2). */
  zone: string;
  drain: string;
  partPower: string;
  replicas: string;
  rate: string;
}

/**
 * "What if" for one ring set: add N devices of a size to it or to one of its zones, or drain one,
 * and read the projected fill, what moves, in how many steps and how long, and when the set fills
 * before and after. The arithmetic is lib/what-if.ts; the history is the page's own (the trend's
 * straight line); zones come from the cluster's stored rings, the replication rate from the
 * replication passes its health rounds report.
 */
export function WhatIfPanel({
  clusterId,
  elements,
  devices,
  history,
}: {
  clusterId: number;
  elements: CapacityElement[];
  devices: DeviceRow[];
  history: CapacityHistory | undefined;
}) {
  const { call } = useSession();
  // Neither is needed for the estimate: without them the panel targets only ring sets and says the rate is assumed.
  const rings = useLoad(
    () => call<List<RingVersion>>('GET', `clusters/${clusterId}/rings/?current=true&limit=100`),
    [clusterId],
  );
  const health = useLoad(() => call<ClusterHealthResource>('GET', `clusters/${clusterId}/health/`), [clusterId]);
  const zones = useMemo(() => zonesOfRings(rings.data?.objects ?? []), [rings.data]);
  const measured = useMemo(() => measuredRate(passesOf(health.data?.nodes ?? [])), [health.data]);
  const [f, setF] = useState<Fields>({
    ringSet: elements[0]?.ring_set ?? '',
    kind: 'add',
    count: '4',
    size: '16 TB',
    nodes: '1',
    zone: '',
    drain: '',
    partPower: '10',
    replicas: '3',
    rate: '100',
  });
  // Another cluster's page reuses the panel: a ring set it does not have falls back to its first.
  const ringSet = elements.some((e) => e.ring_set === f.ringSet) ? f.ringSet : (elements[0]?.ring_set ?? '');
  const set = (k: keyof Fields) => (e: { currentTarget: { value: string } }) =>
    setF({ ...f, [k]: e.currentTarget.value });
  const members: WhatIfDevice[] = useMemo(
    () =>
      devices
        .filter((d) => d.ringSet === ringSet && rawBytes(d) !== null && rawBytes(d)! > 0)
        .map((d) => ({
          key: `${d.node}/${d.device}`,
          node: d.node,
          device: d.device,
          weight: rawBytes(d)!,
          used: d.used_bytes!,
          zone: zones.get(`${d.node}/${d.device}`) ?? null,
        })),
    [devices, ringSet, zones],
  );
  const setZones = useMemo(() => {
    const byLabel = new Map(members.flatMap((m) => (m.zone ? [[zoneLabel(m.zone), m.zone] as const] : [])));
    return [...byLabel.values()].sort((a, b) => a.region - b.region || a.zone - b.zone);
  }, [members]);
  const setRings = useMemo(
    () =>
      ringsOfSet(
        rings.data?.objects ?? [],
        members.map((m) => m.key),
      ),
    [rings.data, members],
  );
  const ring = projectionRing(setRings);
  const target = setZones.find((z) => zoneLabel(z) === f.zone) ?? null;
  const drainKey = f.drain && members.some((m) => m.key === f.drain) ? f.drain : members[0]?.key;
  const input = readInput(f, drainKey, target, measured, ring);
  const result: WhatIf | string =
    typeof input === 'string'
      ? input
      : members.length === 0
        ? 'No device of this ring set reports its usage: nothing to project.'
        : attempt(() => projectChange(members, input.change, input.options));
  const samples = historySamples(history?.history.find((h) => h.ring_set === ringSet)?.samples ?? []);
  return (
    <Section title="What if">
      <p class="hint">
        Add devices to a ring set or one of its zones, or drain one of its devices, and see where its data would go.
        Swift's ring builder places partitions in proportion to weight, within the limits of dispersion; here a device's
        weight is its raw size (used + free, a new device's size as typed) and its bytes follow its partitions.
      </p>
      <form class="what-if-form" onSubmit={(e) => e.preventDefault()} aria-label="What if">
        <div class="row filters">
          <label>
            Ring set
            <select name="ring_set" value={ringSet} onChange={set('ringSet')}>
              {elements.map((e) => (
                <option value={e.ring_set}>{e.ring_set}</option>
              ))}
            </select>
          </label>
          <fieldset class="row">
            <legend>Change</legend>
            <label class="check">
              <input type="radio" name="kind" value="add" checked={f.kind === 'add'} onChange={set('kind')} /> Add
              devices
            </label>
            <label class="check">
              <input type="radio" name="kind" value="drain" checked={f.kind === 'drain'} onChange={set('kind')} /> Drain
              a device
            </label>
          </fieldset>
        </div>
        {f.kind === 'add' ? (
          <div class="row filters">
            <label>
              Devices to add
              <input name="count" type="number" min="1" step="1" value={f.count} onInput={set('count')} />
            </label>
            <label>
              Size of each
              <input name="size" value={f.size} onInput={set('size')} placeholder="16 TB" />
            </label>
            <label>
              On how many nodes
              <input name="nodes" type="number" min="1" step="1" value={f.nodes} onInput={set('nodes')} />
            </label>
            <label>
              In zone
              <select name="zone" value={target ? zoneLabel(target) : ''} onChange={set('zone')}>
                <option value="">Any zone</option>
                {setZones.map((z) => (
                  <option value={zoneLabel(z)}>{zoneLabel(z)}</option>
                ))}
              </select>
            </label>
          </div>
        ) : (
          <div class="row filters">
            <label>
              Device to drain
              <select name="drain" value={drainKey} onChange={set('drain')}>
                {members.map((m) => (
                  <option value={m.key}>{m.key}</option>
                ))}
              </select>
            </label>
          </div>
        )}
        <div class="row filters">
          {ring ? null : (
            <>
              <label>
                Part power
                <input
                  name="part_power"
                  type="number"
                  min="0"
                  max="32"
                  step="1"
                  value={f.partPower}
                  onInput={set('partPower')}
                />
              </label>
              <label>
                Replicas
                <input name="replicas" type="number" min="1" step="1" value={f.replicas} onInput={set('replicas')} />
              </label>
            </>
          )}
          {measured ? null : (
            <label>
              Replication rate per node, MiB/s (assumed)
              <input name="rate" type="number" min="1" step="any" value={f.rate} onInput={set('rate')} />
            </label>
          )}
        </div>
        <GeometryLine ring={ring} rings={setRings} reading={rings.loading && !rings.data} error={rings.error} />
        <RateLine measured={measured} reading={health.loading && !health.data} />
        <p class="hint">
          A step moves at most {DEFAULT_STEP_PCT} % of the ring's partition replicas.
          {setZones.length === 0
            ? ' No stored ring lists the devices of this ring set, so no zone can be chosen: push the rings (cairn rings push) to target a zone.'
            : ''}
        </p>
      </form>
      {typeof result === 'string' ? (
        <p class="error" role="alert">
          {result}
        </p>
      ) : (
        <WhatIfResult result={result} samples={samples} target={target} />
      )}
      <ComputedPlan
        clusterId={clusterId}
        growth={{ devices, history, chosen: ringSet }}
        rate={
          measured
            ? { kind: 'measured', ...measured }
            : Number(f.rate) > 0
              ? { kind: 'assumed', bytesPerSecondPerNode: Number(f.rate) * MIB }
              : null
        }
      />
    </Section>
  );
}

/** Where the part power and replicas come from: the cluster's stored ring, or (said so) the fields above. */
function GeometryLine({
  ring,
  rings,
  reading,
  error,
}: {
  ring: RingGeometry | null;
  rings: readonly RingGeometry[];
  reading: boolean;
  error: string | undefined;
}) {
  if (!ring && reading)
    return (
      <p class="hint" data-field="geometry">
        Part power and replicas: reading the cluster's stored rings…
      </p>
    );
  if (!ring && error)
    return (
      <p class="hint" data-field="geometry">
        Part power and replicas: as typed above — the cluster's stored rings could not be read ({error}).
      </p>
    );
  if (!ring)
    return (
      <p class="hint" data-field="geometry">
        Part power and replicas: as typed above — no stored object ring of this cluster lists the devices of this ring
        set (<code>swift-ring-builder object.builder</code> prints them; <code>cairn rings push</code> stores the
        rings).
      </p>
    );
  const others = rings.filter((r) => r !== ring);
  return (
    <p class="hint" data-field="geometry">
      Part power {ring.partPower} and {ring.replicas} replicas: the cluster's stored ring {ring.ring}, version{' '}
      {ring.version}.
      {others.length > 0
        ? ` The ring set's devices are also in ${others.map((r) => `${r.ring} (part power ${r.partPower}, ${r.replicas} replicas)`).join(', ')}, which move the same share of their partitions; the figures are ${ring.ring}'s, the ring with the most partition replicas.`
        : ''}
    </p>
  );
}

/**
 * Where the replication time's rate comes from: the cluster's measured passes, or the operator's
 * assumption (said so).
 */
function RateLine({ measured: m, reading }: { measured: MeasuredRate | null; reading: boolean }) {
  if (!m && reading)
    return (
      <p class="hint" data-field="rate">
        Replication rate: reading the cluster's replication passes…
      </p>
    );
  if (!m)
    return (
      <p class="hint" data-field="rate">
        Replication rate: assumed, as typed above — no storage node reports a completed object replication pass with its
        length and partitions yet (<code>cairn health collect</code> reads them from recon).
      </p>
    );
  const to = new Date(m.to).toISOString();
  const from = new Date(m.from).toISOString();
  return (
    <p class="hint" data-field="rate">
      Replication rate: measured, {formatRate(m.partitionsPerSecondPerNode)} partitions a second per node — the last
      completed object replication pass of {m.passes} node{m.passes === 1 ? '' : 's'} (recon), the latest ended{' '}
      <time datetime={to}>{formatTime(to)}</time>
      {m.passes > 1 ? (
        <>
          , the earliest <time datetime={from}>{formatTime(from)}</time>
        </>
      ) : null}
      ; the longest took {formatDuration(m.longestPassSeconds)}.
    </p>
  );
}

/** A rate with three significant digits: 0.125, 12.5, 1,250. */
export const formatRate = (r: number): string =>
  r >= 100 ? Math.round(r).toLocaleString('en-US') : String(Number(r.toPrecision(3)));

function WhatIfResult({
  result: w,
  samples,
  target,
}: {
  result: WhatIf;
  samples: ReturnType<typeof historySamples>;
  target: Zone | null;
}) {
  const delta = w.rawAfter - w.rawBefore;
  const warn = thresholdBeforeAfter(samples, delta, WARN_PCT);
  const full = thresholdBeforeAfter(samples, delta, 100);
  const replicas = w.parts > 0 ? w.partReplicas / w.parts : 0;
  const zones = zoneFill(w, replicas);
  const crowded = crowdedZones(zones, replicas);
  const showZones = zones.some((z) => z.zone !== null);
  const rows = [...w.devices]
    .sort((a, b) => Number(b.isNew) - Number(a.isNew) || (b.pct ?? -1) - (a.pct ?? -1))
    .slice(0, SHOWN);
  return (
    <div class="what-if-result">
      <p class="note" role="note" data-field="estimate-note">
        {ESTIMATE_NOTE}
      </p>
      <dl class="facts">
        <dt>Raw capacity</dt>
        <dd data-field="raw" title={`${bytesTitle(w.rawBefore)} → ${bytesTitle(w.rawAfter)}`}>
          {formatBytes(w.rawBefore)} → {formatBytes(w.rawAfter)}
        </dd>
        <dt>Weight changing hands</dt>
        <dd data-field="share">{formatPct(w.shareMoved * 100)}</dd>
        <dt>Partitions to move</dt>
        <dd data-field="parts">
          {w.partsToMove.toLocaleString('en-US')} of {w.partReplicas.toLocaleString('en-US')} partition replicas
        </dd>
        <dt>Bytes to move</dt>
        <dd data-field="bytes" title={bytesTitle(w.bytesToMove)}>
          {formatBytes(w.bytesToMove)}
        </dd>
        <dt>Steps of {DEFAULT_STEP_PCT} %</dt>
        <dd data-field="steps">{w.steps.toLocaleString('en-US')}</dd>
        <dt>Replication time (estimated)</dt>
        <dd data-field="time">
          {formatDuration(w.seconds)} at the {w.rate === 'measured' ? 'measured' : 'assumed'} rate, {w.nodesInParallel}{' '}
          node{w.nodesInParallel === 1 ? '' : 's'} moving data at once
          {w.rate === 'measured' ? ', and a replication pass at least per step' : ''} (not counting min_part_hours
          between steps)
        </dd>
        <dt>Reaches {WARN_PCT} % (estimated)</dt>
        <dd data-field="warn-when">
          today {describeWhen(warn.before)} · after {describeWhen(warn.after)}
        </dd>
        <dt>Full (estimated)</dt>
        <dd data-field="full-when">
          today {describeWhen(full.before)} · after {describeWhen(full.after)}
        </dd>
      </dl>
      <p class="hint">
        Dates, for the ring set: the trend's straight line (least squares through the last 30 days' samples below), the
        same growth in bytes against the raw capacity today and after.
      </p>
      {target ? (
        <p class="note" role="note" data-field="zone-note">
          Added to {zoneLabel(target)}: an estimate. Swift's builder places by weight whatever the zone (overload 0), so
          every device of the ring set empties by the same factor and the new devices take what moves; dispersion may
          make it keep some replicas elsewhere.
        </p>
      ) : null}
      {crowded.length > 0 ? (
        <p class="warning" role="status" data-field="dispersion">
          {crowded
            .map(
              (z) => `${zoneLabel(z.zone)} would weigh ${z.replicasWantedAfter.toFixed(2)} replicas of each partition`,
            )
            .join('; ')}
          : some partitions would keep two replicas in one zone. Within its overload Swift's builder keeps them in other
          zones instead, so these figures are least certain there — compute a plan.
        </p>
      ) : null}
      {showZones ? (
        <ScrollBox label="Projected fill per zone">
          <table class="what-if-zones">
            <caption>Projected fill per zone (estimated)</caption>
            <TableHead row="Zone" nums={['Devices', 'Today', 'After', 'Replicas per partition']} />
            <tbody>
              {zones.map((z) => (
                <tr
                  data-zone={zoneLabel(z.zone)}
                  class={z.pctAfter !== null && z.pctAfter >= WARN_PCT ? 'warn' : undefined}
                >
                  <th scope="row">{zoneLabel(z.zone)}</th>
                  <td class="num" data-field="devices">
                    {z.devices - z.newDevices}
                    {z.newDevices > 0 ? ` + ${z.newDevices} new` : ''}
                  </td>
                  <td class="num" data-field="pct">
                    {formatPct(z.pct)}
                  </td>
                  <td class="num" data-field="pct-after">
                    {formatPct(z.pctAfter)}
                  </td>
                  <td class="num" data-field="replicas">
                    {z.replicasWanted.toFixed(2)} → {z.replicasWantedAfter.toFixed(2)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollBox>
      ) : null}
      <ScrollBox label="Projected fill per device">
        <table class="what-if-devices">
          <caption>
            Projected fill per device
            {w.devices.length > SHOWN ? ` (${SHOWN} of ${w.devices.length}: new devices, then the fullest today)` : ''}
          </caption>
          <TableHead row="Device" nums={['Today', 'After', 'Used after', 'Size after', 'Zone']} />
          <tbody>
            {rows.map((d) => (
              <tr data-device={d.key} class={d.pctAfter !== null && d.pctAfter >= WARN_PCT ? 'warn' : undefined}>
                <th scope="row">{d.isNew ? d.device : d.key}</th>
                <td class="num" data-field="pct">
                  {d.isNew ? 'new' : formatPct(d.pct)}
                </td>
                <td class="num" data-field="pct-after">
                  {d.pctAfter === null ? 'drained' : formatPct(d.pctAfter)}
                </td>
                <td class="num" data-field="used-after" title={bytesTitle(d.usedAfter)}>
                  {formatBytes(d.usedAfter)}
                </td>
                <td class="num">{formatBytes(d.weightAfter)}</td>
                <td class="num" data-field="zone">
                  {d.zone ? zoneLabel(d.zone) : '—'}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollBox>
    </div>
  );
}

/** The typed fields as a change, or the sentence saying which field is wrong. */
function readInput(
  f: Fields,
  drainKey: string | undefined,
  zone: Zone | null,
  measured: MeasuredRate | null,
  ring: RingGeometry | null,
): { change: Change; options: Parameters<typeof projectChange>[2] } | string {
  const whole = (v: string, min: number, max: number) => {
    const n = Number(v);
    return Number.isInteger(n) && n >= min && n <= max ? n : null;
  };
  // The stored ring's, when there is one; the typed fields only stand in for it.
  const partPower = ring ? ring.partPower : whole(f.partPower, 0, 32);
  if (partPower === null) return 'Part power: give a whole number from 0 to 32.';
  const replicas = ring ? ring.replicas : whole(f.replicas, 1, 100);
  if (replicas === null) return 'Replicas: give a whole number from 1.';
  let rate: ReplicationRate;
  if (measured) rate = { kind: 'measured', ...measured };
  else {
    const typed = Number(f.rate);
    if (!(typed > 0) || !Number.isFinite(typed)) return 'Replication rate: give a number of MiB/s above 0.';
    rate = { kind: 'assumed', bytesPerSecondPerNode: typed * MIB };
  }
  const options = { partPower, replicas, stepPct: DEFAULT_STEP_PCT, rate };
  if (f.kind === 'drain') {
    if (!drainKey) return 'No device of this ring set reports its usage: none to drain.';
    return { change: { kind: 'drain', key: drainKey }, options };
  }
  const count = whole(f.count, 1, 10_000);
  if (count === null) return 'Devices to add: give a whole number from 1 to 10,000.';
  const nodes = whole(f.nodes, 1, 10_000);
  if (nodes === null) return 'On how many nodes: give a whole number from 1.';
  const size = parseBytes(f.size, 'TB');
  if (!size.ok) return `Size of each: ${size.error}`;
  if (size.value === '0') return 'Size of each: give a size above 0, such as 16 TB.';
  return { change: { kind: 'add', count, sizeBytes: Number(size.value), nodes, zone }, options };
}

function attempt(f: () => WhatIf): WhatIf | string {
  try {
    return f();
  } catch (e) {
    return (e as Error).message;
  }
}
