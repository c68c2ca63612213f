import { useState } from 'preact/hooks';
import type { CapacityHistory, List, RingPlan } from '../api';
import { ErrorText, Loading, ScrollBox, TableHead } from '../components';
import { useSession } from '../context';
import { useLoad } from '../hooks';
import { bytesTitle, formatBytes, formatPct, formatTime } from '../lib/format';
import { historySamples, reachAt, trend } from '../lib/projection';
import {
  planCapacity,
  planFillRows,
  planLabel,
  receivingNodes,
  replicationSecondsEstimate,
  ringSetOfPlan,
  type PlanCapacity,
} from '../lib/ring-plan';
import { describeWhen, formatDuration, type ReplicationRate } from '../lib/what-if';
import { WARN_PCT } from './charts';

/** Plans offered in the list: the newest (each carries its whole plan, so the page stays small). */
const PLANS_SHOWN = 20;
/** Device rows of a plan's fill table. */
const ROWS = 50;

/**
 * The What-if panel's exact figures: a plan the ring host computed with Swift's ring builder
 * (`cairn rings plan --cluster`), chosen from the cluster's stored plans. Beside the panel's own
 * estimate, never mixed with it: every figure here is the plan's, but for the replication time,
 * which says it is an estimate.
 */
export function ComputedPlan({
  clusterId,
  rate,
  growth,
}: {
  clusterId: number;
  rate: ReplicationRate | null;
  growth: GrowthSource;
}) {
  const { call } = useSession();
  const plans = useLoad(
    () => call<List<RingPlan>>('GET', `clusters/${clusterId}/ring_plans/?limit=${PLANS_SHOWN}&order_by=-created_at`),
    [clusterId],
  );
  const [chosen, setChosen] = useState('');
  const list = plans.data?.objects ?? [];
  const plan = list.find((p) => p.id === chosen);
  return (
    <div class="what-if-plan">
      <h3>Computed plan</h3>
      {plans.loading && !plans.data ? <Loading what="ring plans" /> : null}
      <ErrorText error={plans.error} />
      {plans.data && list.length === 0 ? (
        <p class="hint">
          No plan of this cluster is stored yet: run <code>cairn rings plan … --cluster {clusterId}</code> on the ring
          host for Swift's own figures.
        </p>
      ) : null}
      {list.length > 0 ? (
        <label>
          Plan computed by Swift
          <select name="plan" value={chosen} onChange={(e) => setChosen(e.currentTarget.value)}>
            <option value="">None: the estimate only</option>
            {list.map((p) => (
              <option value={p.id}>{planLabel(p)}</option>
            ))}
          </select>
        </label>
      ) : null}
      {plan ? <PlanFigures plan={plan} rate={rate} growth={growth} /> : null}
    </div>
  );
}

/** Where a plan's growth comes from: the capacity page's devices (to find its ring set) and history. */
export interface GrowthSource {
  devices: ReadonlyArray<{ node: string; device: string; ringSet: string }>;
  history: CapacityHistory | undefined;
  /** The ring set chosen in the panel: the growth of a plan none of whose devices reports to the page. */
  chosen: string;
}

function PlanFigures({
  plan: p,
  rate,
  growth,
}: {
  plan: RingPlan;
  rate: ReplicationRate | null;
  growth: GrowthSource;
}) {
  const rows = planFillRows(p, ROWS);
  const seconds = rate === null ? null : replicationSecondsEstimate(p, rate);
  const nodes = receivingNodes(p);
  const last = p.plan.steps[p.plan.steps.length - 1];
  return (
    <div class="what-if-result" data-plan={p.id}>
      <p class="note computed" role="note" data-field="plan-note">
        Computed by Swift {p.swift_version} with seed {p.seed}
        {p.computed_at ? (
          <>
            {' '}
            at <time datetime={p.computed_at}>{formatTime(p.computed_at)}</time>
          </>
        ) : null}{' '}
        for ring {p.ring}: exact figures from Swift's ring builder.
      </p>
      <dl class="facts">
        <dt>Partitions to move</dt>
        <dd data-field="plan-parts">
          {p.parts_moved.toLocaleString('en-US')} of {p.parts_total.toLocaleString('en-US')} partitions (
          {formatPct(p.parts_moved_pct)}), {p.replicas_moved.toLocaleString('en-US')} partition replicas
        </dd>
        <dt>Bytes to move</dt>
        <dd data-field="plan-bytes" title={bytesTitle(p.bytes_to_move)}>
          {p.bytes_to_move === null
            ? 'unknown: the plan was made without usage (--usage-from-recon)'
            : formatBytes(p.bytes_to_move)}
        </dd>
        <dt>Balance</dt>
        <dd data-field="plan-balance">
          {p.plan.balance.toFixed(2)} after (today {p.plan.balance_before.toFixed(2)})
        </dd>
        <dt>Steps of {p.plan.max_move_pct} %</dt>
        <dd data-field="plan-steps">
          {last && last.fraction >= 1
            ? `${p.steps_computed} (all computed by Swift)`
            : `${p.steps_computed} computed by Swift so far; about ${p.steps_estimated} in all (estimated)`}
        </dd>
        <dt>Replication time (estimated)</dt>
        <dd data-field="plan-time">
          {seconds === null
            ? 'unknown: the plan has no bytes to move, or no rate is given'
            : rate?.kind === 'measured'
              ? `${formatDuration(seconds)} for the plan's partition replicas at the measured rate, ${nodes} receiving node${nodes === 1 ? '' : 's'} at once and a replication pass at least per step (not counting min_part_hours between steps)`
              : `${formatDuration(seconds)} for the plan's bytes at the assumed rate, ${nodes} receiving node${nodes === 1 ? '' : 's'} at once (not counting min_part_hours between steps)`}
        </dd>
      </dl>
      <PlanWhenFull plan={p} growth={growth} />
      <ScrollBox label="Steps computed by Swift">
        <table class="what-if-steps">
          <caption>Steps computed by Swift</caption>
          <TableHead row="Step" nums={['Partitions moved', 'Share', 'Balance after']} />
          <tbody>
            {p.plan.steps.map((s) => (
              <tr data-step={s.step}>
                <th scope="row">{s.step}</th>
                <td class="num" data-field="step-parts">
                  {s.parts_moved.toLocaleString('en-US')}
                </td>
                <td class="num">{formatPct(s.parts_moved_pct)}</td>
                <td class="num">{s.balance.toFixed(2)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollBox>
      <ScrollBox label="Computed fill per device">
        <table class="what-if-plan-devices">
          <caption>
            Computed fill per device
            {p.device_count > ROWS
              ? ` (${ROWS} of ${p.device_count}: the devices the change touches, then the fullest after)`
              : ''}
          </caption>
          <TableHead row="Device" nums={['Today', 'After', 'Partitions', 'Weight']} />
          <tbody>
            {rows.map((d) => (
              <tr data-device={d.key} class={d.pctAfter !== null && d.pctAfter >= WARN_PCT ? 'warn' : undefined}>
                <th scope="row">
                  d{d.id} z{d.zone} {d.key}
                </th>
                <td class="num" data-field="pct">
                  {d.existing ? formatPct(d.pct) : 'new'}
                </td>
                <td class="num" data-field="pct-after" title={bytesTitle(d.usedAfter)}>
                  {formatPct(d.pctAfter)}
                </td>
                <td class="num" data-field="parts">
                  {d.parts.toLocaleString('en-US')} → {d.partsAfter.toLocaleString('en-US')}
                </td>
                <td class="num" data-field="weight">
                  {d.weight} → {d.weightAfter}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollBox>
      {p.plan.notes.map((n) => (
        <p class="hint">Swift's plan notes: {n}</p>
      ))}
    </div>
  );
}

/**
 * When the plan's devices fill, before and after the change: their used bytes and sizes are the
 * plan's (recon's and Swift's projection), the growth is the trend of their ring set's history,
 * from when the plan was computed; so the dates are estimates, the fills are not (but for devices
 * sized from their weight, said so).
 */
function PlanWhenFull({ plan: p, growth: g }: { plan: RingPlan; growth: GrowthSource }) {
  const cap = planCapacity(p);
  if (typeof cap === 'string')
    return (
      <p class="hint" data-field="plan-when-full">
        Time to full: unknown. {cap}
      </p>
    );
  const matched = ringSetOfPlan(p, g.devices);
  const ringSet = matched ?? g.chosen;
  const samples = historySamples(g.history?.history.find((h) => h.ring_set === ringSet)?.samples ?? []);
  const line = trend(samples);
  const bytesPerDay = line === null ? null : line.slope * 86_400_000;
  const at = Date.parse(p.computed_at ?? p.created_at);
  const when = (c: PlanCapacity, threshold: number) => ({
    before: reachAt(c.usedBefore, c.rawBefore, at, bytesPerDay, threshold),
    after: reachAt(c.usedAfter, c.rawAfter, at, bytesPerDay, threshold),
  });
  const warn = when(cap, WARN_PCT);
  const full = when(cap, 100);
  return (
    <>
      <dl class="facts">
        <dt>Fill of the plan's devices</dt>
        <dd
          data-field="plan-fill"
          title={`${bytesTitle(cap.usedBefore)} of ${bytesTitle(cap.rawBefore)} → ${bytesTitle(cap.usedAfter)} of ${bytesTitle(cap.rawAfter)}`}
        >
          {formatPct(cap.rawBefore > 0 ? (100 * cap.usedBefore) / cap.rawBefore : null)} of {formatBytes(cap.rawBefore)}{' '}
          → {formatPct(cap.rawAfter > 0 ? (100 * cap.usedAfter) / cap.rawAfter : null)} of {formatBytes(cap.rawAfter)}
          {cap.sizedFromWeight > 0 || !cap.usedAfterProjected ? ' (partly estimated, below)' : " (the plan's)"}
        </dd>
        <dt>Reaches {WARN_PCT} % (estimated)</dt>
        <dd data-field="plan-warn-when">
          before {describeWhen(warn.before)} · after {describeWhen(warn.after)}
        </dd>
        <dt>Full (estimated)</dt>
        <dd data-field="plan-full-when">
          before {describeWhen(full.before)} · after {describeWhen(full.after)}
        </dd>
      </dl>
      <p class="hint" data-field="plan-growth">
        The fills are the plan's: its devices' used bytes and sizes from recon when it was computed, and Swift's
        projection of each device's bytes after.
        {cap.sizedFromWeight > 0 && cap.bytesPerWeight !== null
          ? ` Estimated: the plan has no size for ${cap.sizedFromWeight} device${cap.sizedFromWeight === 1 ? '' : 's'}, sized from ${cap.sizedFromWeight === 1 ? 'its' : 'their'} weight at ${formatBytes(cap.bytesPerWeight)} per unit of weight, as the devices with a size have (weight taken as proportional to size, as the estimate above does).`
          : ''}
        {cap.usedAfterProjected
          ? ''
          : ' Estimated: a device to hold data has no projection (recon did not report it), so the bytes after are the bytes before (moving keeps them).'}{' '}
        The dates are estimates: from when the plan was computed, at{' '}
        {bytesPerDay === null ? 'no known growth' : `${formatBytes(bytesPerDay)} a day`}, the growth of ring set{' '}
        {ringSet}
        {matched === null ? " (the one chosen above: none of the plan's devices reports to this page)" : ''} (the
        trend's straight line through its samples).
      </p>
    </>
  );
}
