import { useEffect, useState } from 'preact/hooks';
import {
  errorText,
  query,
  type BigCount,
  type Call,
  type Cluster,
  type List,
  type PolicyQuotas,
  type QuotaField,
  type StoragePolicy,
  type StorageUser,
} from '../api';
import { ErrorText, Section, ScrollBox } from '../components';
import { useSession } from '../context';
import { useLoad } from '../hooks';
import { formatBytes, formatTime, NOT_SAMPLED } from '../lib/format';
import {
  BYTE_UNIT_CHOICES,
  exactCount,
  parseBytes,
  parseCount,
  pctOfQuota,
  quotaBody,
  type Parsed,
} from '../lib/quota-units';
import type { StorageRecord } from '../lib/utilization';
import { UsedBar } from './charts';

/** What an account holds against a quota: bytes and objects, null when not sampled. */
interface Usage {
  bytes: BigCount | null;
  count: BigCount | null;
}

/**
 * The account's usage per storage policy at the hour of its latest sample (`usage_sampled_at`, the
 * hour the user's totals come from), by policy name in lower case (as quotas name policies in any
 * case); a policy absent from that sample holds nothing. null without a sample.
 */
async function policyUsageAt(
  call: Call,
  clusterId: number,
  account: string,
  sampledAt: string | null,
  policies: readonly StoragePolicy[],
): Promise<Map<string, Usage> | null> {
  if (!sampledAt || policies.length === 0) return null;
  const hour = Date.parse(sampledAt);
  const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const q = query({ start: iso(hour), end: iso(hour + 3_600_000), limit: 1 });
  const rows = await Promise.all(
    policies.map(async (p): Promise<[string, Usage]> => {
      const page = await call<List<StorageRecord>>(
        'GET',
        `clusters/${clusterId}/utilization/storage/${p.index}/${encodeURIComponent(account)}/detail/${q}`,
      );
      const r = page.objects.find((o) => o.pct_complete > 0);
      // The account was sampled that hour: a policy without a record holds nothing.
      return [p.name.toLowerCase(), r ? { bytes: r.bytes_used, count: r.object_count } : { bytes: 0, count: 0 }];
    }),
  );
  return new Map(rows);
}

/** While Swift has not taken a change yet, the page reads the user again this often, this many times. */
const PENDING_POLL_MS = 3000;
const PENDING_POLLS = 20;

/** One quota the page shows: the total (policy null) or one storage policy's. */
interface QuotaLine {
  field: QuotaField;
  kind: 'bytes' | 'count';
  policy: string | null;
  value: BigCount | null;
}

/**
 * The user's quotas, where Swift stands with them, and (for an admin of its cluster) a form per
 * quota to set or clear it. Clearing sends null; a per-policy map is sent whole, as the API
 * replaces it whole.
 */
export function UserQuotas({
  user: u,
  cluster,
  clusterId,
  writable,
  onChanged,
}: {
  user: StorageUser;
  cluster: Cluster | undefined;
  clusterId: number;
  writable: boolean;
  onChanged: () => void;
}) {
  const { call } = useSession();
  const policies = useLoad(
    () => call<List<StoragePolicy>>('GET', `clusters/${clusterId}/utilization/policies/?limit=1000`),
    [clusterId],
  );
  const perPolicy = useLoad(
    () => policyUsageAt(call, clusterId, `AUTH_${u.user}`, u.usage_sampled_at ?? null, policies.data?.objects ?? []),
    [clusterId, u.user, u.usage_sampled_at, policies.data],
  );
  usePendingPoll(u.quota_status === 'pending', onChanged);
  // The cluster's policies, and any a quota names that the cluster no longer reports.
  const names = [...(policies.data?.objects.map((p) => p.name) ?? [])];
  for (const n of [...Object.keys(u.quota_bytes_policy ?? {}), ...Object.keys(u.quota_count_policy ?? {})]) {
    if (!names.some((m) => m.toLowerCase() === n.toLowerCase())) names.push(n);
  }
  const lines: QuotaLine[] = [
    { field: 'quota_bytes', kind: 'bytes', policy: null, value: u.quota_bytes ?? null },
    { field: 'quota_count', kind: 'count', policy: null, value: u.quota_count ?? null },
    ...names.flatMap((name): QuotaLine[] => [
      { field: 'quota_bytes_policy', kind: 'bytes', policy: name, value: u.quota_bytes_policy?.[name] ?? null },
      { field: 'quota_count_policy', kind: 'count', policy: name, value: u.quota_count_policy?.[name] ?? null },
    ]),
  ];
  const support = cluster?.quota_support;
  return (
    <Section title="Quotas">
      <QuotaStatus user={u} />
      <p class="hint">
        Swift's account_quotas middleware enforces them: an upload that would go over is refused (413). Usage is the
        account's at the latest storage sample
        {u.usage_sampled_at ? ` (${formatTime(u.usage_sampled_at)})` : ' (none yet)'}, per policy at the same sample.
      </p>
      <ScrollBox label={`Quotas of ${u.user}`}>
        <table class="quotas">
          <caption class="sr-only">Quotas of {u.user}</caption>
          <thead>
            <tr>
              <th scope="col">Quota</th>
              <th scope="col">Limit</th>
              <th scope="col">Used</th>
              {writable ? <th scope="col">Change</th> : null}
            </tr>
          </thead>
          <tbody>
            {lines.map((line) => (
              <QuotaRow
                key={`${line.field}:${line.policy ?? ''}`}
                line={line}
                user={u}
                usage={
                  line.policy === null
                    ? { bytes: u.bytes_used ?? null, count: u.object_count ?? null }
                    : perPolicy.data === undefined
                      ? undefined
                      : (perPolicy.data?.get(line.policy.toLowerCase()) ?? { bytes: null, count: null })
                }
                writable={writable}
                unsupported={
                  support && !support.fields.includes(line.field)
                    ? `This cluster's Swift ${support.swift_version ?? ''} cannot enforce it.`
                    : undefined
                }
                onChanged={onChanged}
              />
            ))}
          </tbody>
        </table>
      </ScrollBox>
      <ErrorText error={policies.error ?? perPolicy.error} />
    </Section>
  );
}

/** What the reconciler last said about this user's quotas. */
function QuotaStatus({ user: u }: { user: StorageUser }) {
  switch (u.quota_status) {
    case 'applied':
      return (
        <p data-field="quota_status" data-status="applied">
          <span class="badge">applied</span> Swift accepted these quotas {formatTime(u.quota_applied_at)}.
        </p>
      );
    case 'pending':
      return (
        <p data-field="quota_status" data-status="pending" role="status">
          <span class="badge">pending</span> Changed; not yet applied to Swift.
        </p>
      );
    case 'error':
      return (
        <p class="warning" data-field="quota_status" data-status="error" role="status">
          <span class="badge off">error</span> Not applied: {u.quota_error}
        </p>
      );
    default:
      return (
        <p data-field="quota_status" data-status="none">
          No quota has been set: the account may store without limit.
        </p>
      );
  }
}

const labelOf = (line: QuotaLine): string =>
  `${line.kind === 'bytes' ? 'Byte quota' : 'Object quota'}${line.policy === null ? '' : `, policy ${line.policy}`}`;

function QuotaRow({
  line,
  user: u,
  usage,
  writable,
  unsupported,
  onChanged,
}: {
  line: QuotaLine;
  user: StorageUser;
  /** What the account holds against this line's quota; undefined while it is read. */
  usage: Usage | undefined;
  writable: boolean;
  unsupported?: string;
  onChanged: () => void;
}) {
  const { call } = useSession();
  const [text, setText] = useState('');
  const [unit, setUnit] = useState<string>('GiB');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const label = labelOf(line);
  const key = `${line.field}-${line.policy ?? 'all'}`.replace(/[^A-Za-z0-9_-]/g, '_');
  const used = usage === undefined ? undefined : line.kind === 'bytes' ? usage.bytes : usage.count;
  const show = (v: BigCount) => (line.kind === 'bytes' ? formatBytes(v) : `${exactCount(v)} objects`);

  /** The PATCH body that sets this quota to `value` (null: none). */
  const bodyOf = (value: BigCount | null): Record<string, unknown> => {
    if (line.policy === null) return { [line.field]: value };
    const current: PolicyQuotas =
      (line.field === 'quota_bytes_policy' ? u.quota_bytes_policy : u.quota_count_policy) ?? {};
    const map: Record<string, BigCount | null> = { ...current };
    map[line.policy] = value;
    return { [line.field]: map };
  };
  const send = async (value: BigCount | null) => {
    setBusy(true);
    setError(undefined);
    try {
      await call('PATCH', `users/${u.id}/`, bodyOf(value));
      setText('');
      onChanged();
    } catch (err) {
      setError(errorText(err));
    }
    setBusy(false);
  };
  const submit = (e: Event) => {
    e.preventDefault();
    const parsed: Parsed = line.kind === 'bytes' ? parseBytes(text, unit) : parseCount(text);
    if (!parsed.ok) {
      setError(parsed.error);
      return;
    }
    void send(quotaBody(parsed.value));
  };
  const pct = used === null || used === undefined ? null : pctOfQuota(used, line.value);
  return (
    <tr data-quota={key}>
      <th scope="row">
        {label}
        {unsupported ? <span class="hint">{unsupported}</span> : null}
      </th>
      <td data-field="limit" title={line.value === null ? undefined : `${exactCount(line.value)}`}>
        {line.value === null ? 'none' : show(line.value)}
      </td>
      <td data-field="used">
        {used === undefined ? (
          '…'
        ) : used === null ? (
          NOT_SAMPLED
        ) : (
          <>
            {show(used)}
            {pct !== null ? (
              <>
                {' '}
                ({Number.isFinite(pct) ? `${pct.toFixed(1)} %` : 'over'})
                <UsedBar pct={Number.isFinite(pct) ? pct : 100} label={`${label} of ${u.user}`} />
              </>
            ) : null}
          </>
        )}
      </td>
      {writable ? (
        <td>
          <form class="row quota-form" onSubmit={submit} aria-label={`Set ${label}`}>
            <label>
              <span class="sr-only">New {label.toLowerCase()}</span>
              <input
                name={key}
                required
                inputMode={line.kind === 'count' ? 'numeric' : 'text'}
                autoComplete="off"
                size={12}
                placeholder={line.kind === 'bytes' ? 'e.g. 10 GiB' : 'objects'}
                value={text}
                onInput={(e) => setText(e.currentTarget.value)}
                aria-describedby={error ? `${key}-error` : undefined}
              />
            </label>
            {line.kind === 'bytes' ? (
              <label>
                <span class="sr-only">Unit of the {label.toLowerCase()}</span>
                <select name={`${key}-unit`} value={unit} onChange={(e) => setUnit(e.currentTarget.value)}>
                  {BYTE_UNIT_CHOICES.map((c) => (
                    <option value={c}>{c}</option>
                  ))}
                </select>
              </label>
            ) : null}
            <button type="submit" disabled={busy}>
              Set<span class="sr-only"> {label.toLowerCase()}</span>
            </button>
            <button
              type="button"
              class="secondary"
              disabled={busy || line.value === null}
              onClick={() => void send(null)}
            >
              Clear<span class="sr-only"> {label.toLowerCase()}</span>
            </button>
          </form>
          <ErrorText error={error} id={`${key}-error`} />
        </td>
      ) : null}
    </tr>
  );
}

/** Reads the user again a few times while its quotas are pending, so "applied" shows without a reload. */
function usePendingPoll(pending: boolean, reload: () => void) {
  const [polls, setPolls] = useState(0);
  useEffect(() => {
    if (!pending) {
      setPolls(0);
      return undefined;
    }
    if (polls >= PENDING_POLLS) return undefined;
    const t = setTimeout(() => {
      setPolls((n) => n + 1);
      reload();
    }, PENDING_POLL_MS);
    return () => clearTimeout(t);
  }, [pending, polls]);
}
