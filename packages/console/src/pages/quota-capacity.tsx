import { useState } from 'preact/hooks';
import type { CapacityElement, Cluster } from '../api';
import { ErrorText, Loading, Section } from '../components';
import { useSession } from '../context';
import { useLoad } from '../hooks';
import { formatTb } from '../lib/format';
import { exactCount, formatQuotaBytes, ratio } from '../lib/quota-units';

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
            <dd data-field="quota_bytes_total" title={total === null ? undefined : `${exactCount(total)} bytes`}>
              {total === null
                ? 'none — no user of this cluster has a byte quota'
                : `${formatQuotaBytes(total)} (${formatTb(Number(BigInt(total)) / TB)})`}
            </dd>
            <dt>Raw capacity</dt>
            <dd>{formatTb(rawBytes / TB)}</dd>
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
            Per-policy quotas are not in this sum. Raw capacity is every ring set's added up, as in the table above.
          </p>
        </>
      ) : null}
    </Section>
  );
}
