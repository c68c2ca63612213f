import { useMemo, useState } from 'preact/hooks';
import type { CapacityElement, CapacityHistory } from '../api';
import { ScrollBox, Section, TableHead } from '../components';
import { rawBytes, type DeviceRow } from '../lib/device-sort';
import { bytesTitle, formatBytes, formatPct } from '../lib/format';
import { historySamples } from '../lib/projection';
import { parseBytes } from '../lib/quota-units';
import {
  DEFAULT_STEP_PCT,
  describeWhen,
  formatDuration,
  projectChange,
  thresholdBeforeAfter,
  type Change,
  type WhatIf,
  type WhatIfDevice,
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
  drain: string;
  partPower: string;
  replicas: string;
  rate: string;
}

/**
 * "What if" for one ring set: add N devices of a size, or drain one, and read the projected fill,
 * what moves, in how many steps and how long, and when the set fills before and after. The
 * arithmetic is lib/what-if.ts; the history is the page's own (the trend's straight line).
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
  const [f, setF] = useState<Fields>({
    ringSet: elements[0]?.ring_set ?? '',
    kind: 'add',
    count: '4',
    size: '16 TB',
    nodes: '1',
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
        })),
    [devices, ringSet],
  );
  const drainKey = f.drain && members.some((m) => m.key === f.drain) ? f.drain : members[0]?.key;
  const input = readInput(f, drainKey);
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
        Add devices to a ring set or drain one of its devices, and see where its data would go. Swift's ring builder
        places partitions in proportion to weight, within the limits of dispersion; here a device's weight is its raw
        size (used + free, a new device's size as typed) and its bytes follow its partitions.
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
          <label>
            Replication rate per node, MiB/s (assumed)
            <input name="rate" type="number" min="1" step="any" value={f.rate} onInput={set('rate')} />
          </label>
        </div>
        <p class="hint">
          Part power and replicas are the ring's (<code>swift-ring-builder object.builder</code> prints them); the
          replication rate is an assumption — the API does not know it. A step moves at most {DEFAULT_STEP_PCT} % of the
          ring's partition replicas.
        </p>
      </form>
      {typeof result === 'string' ? (
        <p class="error" role="alert">
          {result}
        </p>
      ) : (
        <WhatIfResult result={result} samples={samples} />
      )}
      <ComputedPlan clusterId={clusterId} bytesPerSecondPerNode={Number(f.rate) > 0 ? Number(f.rate) * MIB : null} />
    </Section>
  );
}

function WhatIfResult({ result: w, samples }: { result: WhatIf; samples: ReturnType<typeof historySamples> }) {
  const delta = w.rawAfter - w.rawBefore;
  const warn = thresholdBeforeAfter(samples, delta, WARN_PCT);
  const full = thresholdBeforeAfter(samples, delta, 100);
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
        <dt>Replication time</dt>
        <dd data-field="time">
          {formatDuration(w.seconds)} at the assumed rate, {w.nodesInParallel} node
          {w.nodesInParallel === 1 ? '' : 's'} moving data at once (not counting min_part_hours between steps)
        </dd>
        <dt>Reaches {WARN_PCT} %</dt>
        <dd data-field="warn-when">
          today {describeWhen(warn.before)} · after {describeWhen(warn.after)}
        </dd>
        <dt>Full</dt>
        <dd data-field="full-when">
          today {describeWhen(full.before)} · after {describeWhen(full.after)}
        </dd>
      </dl>
      <p class="hint">
        Dates: the trend's straight line (least squares through the last 30 days' samples below), the same growth in
        bytes against the raw capacity today and after.
      </p>
      <ScrollBox label="Projected fill per device">
        <table class="what-if-devices">
          <caption>
            Projected fill per device
            {w.devices.length > SHOWN ? ` (${SHOWN} of ${w.devices.length}: new devices, then the fullest today)` : ''}
          </caption>
          <TableHead row="Device" nums={['Today', 'After', 'Used after', 'Size after']} />
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
): { change: Change; options: Parameters<typeof projectChange>[2] } | string {
  const whole = (v: string, min: number, max: number) => {
    const n = Number(v);
    return Number.isInteger(n) && n >= min && n <= max ? n : null;
  };
  const partPower = whole(f.partPower, 0, 32);
  if (partPower === null) return 'Part power: give a whole number from 0 to 32.';
  const replicas = whole(f.replicas, 1, 100);
  if (replicas === null) return 'Replicas: give a whole number from 1.';
  const rate = Number(f.rate);
  if (!(rate > 0) || !Number.isFinite(rate)) return 'Replication rate: give a number of MiB/s above 0.';
  const options = { partPower, replicas, stepPct: DEFAULT_STEP_PCT, bytesPerSecondPerNode: rate * MIB };
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
  return { change: { kind: 'add', count, sizeBytes: Number(size.value), nodes }, options };
}

function attempt(f: () => WhatIf): WhatIf | string {
  try {
    return f();
  } catch (e) {
    return (e as Error).message;
  }
}
