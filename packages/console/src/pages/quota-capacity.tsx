import { useState } from 'preact/hooks';
import type { BigCount, CapacityElement, Cluster } from '../api';
import { ErrorText, Loading, ScrollBox, Section, TableHead } from '../components';
import { useSession } from '../context';
import { useLoad } from '../hooks';
import { bytesTitle, formatBytes, formatTb, tbTitle } from '../lib/format';
import { ratio } from '../lib/quota-units';

const TB = 1e12;

/** Swift's usual replica count; the operator sets the cluster's own. */
const DEFAULT_COPIES = 3;

/**
 * The cluster's byte quotas added up against its disks: how far the operator has sold more than
 * it has (over-commit is normal — few accounts fill their quota — but worth watching). Usable is
 * raw ÷ the bytes Swift writes per byte stored (3 for three replicas; (k+m)/k for erasure coding),
 * which the device reports do not carry, so the operator gives it here.
 */
export function QuotaCommitment({ clusterId, elements }: { clusterId: number; elements: CapacityElement[] }) {
  const { call } = useSession();
  const cluster = useLoad(() => call<Cluster>('GET', `clusters/${clusterId}/`), [clusterId]);
  const [copies, setCopies] = useState(String(DEFAULT_COPIES));
  const factor = Number(copies);
  const validFactor = Number.isFinite(factor) && factor >= 1;
  const rawBytes = elements.reduce((sum, e) => sum + e.total_raw_tb, 0) * TB;
  const usableBytes = validFactor ? rawBytes / factor : NaN;
  const total = cluster.data?.quota_bytes_total ?? null;
  const overUsable = total === null ? null : ratio(total, usableBytes);
  const overRaw = total === null ? null : ratio(total, rawBytes);
  const times = (r: number | null) => (r === null ? '—' : `${r < 10 ? r.toFixed(2) : r.toFixed(1)}×`);
  return (
    <Section title="Quotas against capacity">
      {cluster.loading && !cluster.data ? <Loading what="the quota total" /> : null}
      <ErrorText error={cluster.error} />
      {cluster.data ? (
        <>
          <dl class="facts">
            <dt>Byte quotas of all users</dt>
            <dd data-field="quota_bytes_total" title={total === null ? undefined : bytesTitle(total)}>
              {total === null ? 'none — no user of this cluster has a byte quota' : formatBytes(total)}
            </dd>
            <dt>Raw capacity</dt>
            <dd title={tbTitle(rawBytes / TB)}>{formatTb(rawBytes / TB)}</dd>
            <dt>
              <label for="quota-copies">Bytes written per byte stored</label>
            </dt>
            <dd>
              <input
                id="quota-copies"
                name="copies"
                type="number"
                min="1"
                step="0.1"
                inputMode="decimal"
                value={copies}
                onInput={(e) => setCopies(e.currentTarget.value)}
                aria-describedby="quota-copies-hint"
              />{' '}
              <span class="hint" id="quota-copies-hint">
                3 for three replicas; (data + parity) ÷ data for erasure coding, e.g. 1.5 for 8+4.
              </span>
            </dd>
            <dt>Usable capacity</dt>
            <dd data-field="usable">
              {validFactor ? formatTb(usableBytes / TB) : 'give the bytes written per byte stored (1 or more)'}
            </dd>
          </dl>
          {total !== null && rawBytes > 0 && validFactor ? (
            <p
              class={overUsable !== null && overUsable > 1 ? 'warning' : undefined}
              data-field="overcommit"
              role="status"
            >
              <strong>
                quota {times(overUsable)} usable · {times(overRaw)} raw
              </strong>
              {overUsable !== null && overUsable > 1
                ? ' — the quotas promise more than the disks hold if every account fills its quota.'
                : ''}
            </p>
          ) : null}
          {total !== null && rawBytes === 0 ? <p>No device capacity reported yet to compare the quotas with.</p> : null}
          <p class="hint">
            Raw capacity is every ring set's added up, as in the table above. Per-policy quotas are limits within the
            byte quotas, so they are not added to them: they are set against each ring set below.
          </p>
          <PolicyQuotasByRingSet
            elements={elements}
            totals={cluster.data.quota_bytes_policy_total ?? null}
            factor={validFactor ? factor : null}
            times={times}
          />
        </>
      ) : null}
    </Section>
  );
}

/**
 * The per-policy byte quotas against each ring set: the quotas of the policies a ring set holds
 * (its name lists them) added up, against its raw and usable capacity. A policy on several ring
 * sets is counted against each of them.
 */
function PolicyQuotasByRingSet({
  elements,
  totals,
  factor,
  times,
}: {
  elements: CapacityElement[];
  totals: Record<string, BigCount> | null;
  factor: number | null;
  times: (r: number | null) => string;
}) {
  if (!totals || Object.keys(totals).length === 0)
    return <p data-field="policy-quotas">No user of this cluster has a per-policy byte quota.</p>;
  // Quotas name policies in any case; the capacity API spells them as the cluster does.
  const byName = new Map<string, bigint>();
  for (const [name, total] of Object.entries(totals))
    byName.set(name.toLowerCase(), (byName.get(name.toLowerCase()) ?? 0n) + BigInt(total));
  const rows = elements.map((e) => {
    const policies = e.ring_set.split(',');
    const quota = policies.reduce((sum, p) => sum + (byName.get(p.toLowerCase()) ?? 0n), 0n);
    const raw = e.total_raw_tb * TB;
    return { e, quota, raw, usable: factor ? raw / factor : NaN };
  });
  return (
    <ScrollBox label="Per-policy byte quotas by ring set">
      <table class="policy-quotas">
        <caption>Per-policy byte quotas by ring set</caption>
        <TableHead row="Ring set" nums={['Quotas', 'Against usable', 'Against raw', 'Raw']} />
        <tbody>
          {rows.map(({ e, quota, raw, usable }) => {
            const overUsable = quota === 0n ? null : ratio(quota.toString(), usable);
            return (
              <tr data-ring-set={e.ring_set} class={overUsable !== null && overUsable > 1 ? 'warn' : undefined}>
                <th scope="row">{e.ring_set}</th>
                <td class="num" data-field="quota" data-raw={quota.toString()} title={bytesTitle(quota)}>
                  {quota === 0n ? 'none' : formatBytes(quota)}
                </td>
                <td class="num" data-field="usable">
                  {times(overUsable)}
                </td>
                <td class="num" data-field="raw-ratio">
                  {times(quota === 0n ? null : ratio(quota.toString(), raw))}
                </td>
                <td class="num" title={tbTitle(e.total_raw_tb)}>
                  {formatTb(e.total_raw_tb)}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </ScrollBox>
  );
}
