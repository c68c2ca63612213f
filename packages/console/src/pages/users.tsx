import { useState } from 'preact/hooks';
import { clusterIdOf, errorText, listAll, query, type List, type StorageUser } from '../api';
import { ErrorText, Loading, Section, ShownOnce, ScrollBox } from '../components';
import { canWriteCluster, useSession } from '../context';
import { navigate, useLoad } from '../hooks';
import { PasswordFields, usePasswordChoice } from './password';
import { pctOfQuota } from '../lib/quota-units';
import { bytesTitle, formatBytes, NOT_SAMPLED } from '../lib/format';
import { UsedBar, WARN_PCT } from './charts';

const PAGE = 50;
/** "Fullest first" sorts in the browser, so it reads every matching user with a byte quota, up to this many. */
const SORT_READ_LIMIT = 1000;
/** The order the API cannot give (a percentage of a joined sample): sorted here, over every match. */
const FULLEST = 'fullest';

type UsersPage = { objects: StorageUser[]; total: number; tooMany?: number };

/** Storage users, paged and filtered by the API (so it stays fast with a million of them). */
export function UsersPage({ params }: { params: URLSearchParams }) {
  const { call, clusters, me } = useSession();
  const cluster = params.get('cluster') ?? '';
  const prefix = params.get('q') ?? '';
  const enabled = params.get('enabled') ?? '';
  const order = params.get('order') ?? '';
  const offset = Math.max(0, Number(params.get('offset') ?? 0) || 0);
  const state = { cluster, q: prefix, enabled, order };
  const filters = {
    cluster: cluster || undefined,
    user__startswith: prefix || undefined,
    enabled: enabled || undefined,
  };
  const list = useLoad(async (): Promise<UsersPage> => {
    if (order !== FULLEST) {
      const page = await call<List<StorageUser>>(
        'GET',
        `users/${query({ ...filters, order_by: order || undefined, limit: PAGE, offset })}`,
      );
      return { objects: page.objects, total: page.meta.total_count };
    }
    // Every match with a byte quota (without one there is no percentage), sorted whole, then paged here.
    const all = await listAll<StorageUser>(
      call,
      `users/${query({ ...filters, quota_bytes__isnull: 'false', order_by: 'id', limit: SORT_READ_LIMIT })}`,
      SORT_READ_LIMIT,
    );
    if (all.total > all.rows.length) return { objects: [], total: 0, tooMany: all.total };
    const sorted = byFullest(all.rows);
    return { objects: sorted.slice(offset, offset + PAGE), total: sorted.length };
  }, [cluster, prefix, enabled, order, offset]);
  const writable = clusters.filter((c) => canWriteCluster(me, c.id));
  const [creating, setCreating] = useState(false);
  const nameOf = (uri: string) => clusters.find((c) => c.id === clusterIdOf(uri))?.name ?? uri;
  const go = (changes: Record<string, string | number | undefined>) =>
    navigate('/users', { ...state, offset: undefined, ...changes });
  const total = list.data?.total ?? 0;
  return (
    <>
      <div class="page-head">
        <h1 tabIndex={-1}>Users</h1>
        {writable.length > 0 && !creating ? (
          <button type="button" onClick={() => setCreating(true)}>
            New user
          </button>
        ) : null}
      </div>
      {creating ? (
        <CreateUser
          onClose={() => setCreating(false)}
          onCreated={list.reload}
          defaultCluster={Number(cluster) || undefined}
        />
      ) : null}
      <form
        class="row filters"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          const f = new FormData(e.currentTarget);
          go({
            cluster: String(f.get('cluster') ?? ''),
            q: String(f.get('q') ?? ''),
            enabled: String(f.get('enabled') ?? ''),
            order: String(f.get('order') ?? ''),
          });
        }}
      >
        <label>
          Cluster
          <select name="cluster" value={cluster}>
            <option value="">all</option>
            {clusters.map((c) => (
              <option value={String(c.id)}>{c.name}</option>
            ))}
          </select>
        </label>
        <label>
          Name starts with
          <input name="q" type="search" value={prefix} />
        </label>
        <label>
          Status
          <select name="enabled" value={enabled}>
            <option value="">any</option>
            <option value="true">enabled</option>
            <option value="false">disabled</option>
          </select>
        </label>
        <label>
          Order
          <select name="order" value={order}>
            <option value="">oldest first</option>
            <option value="user">by name</option>
            <option value="-id">newest first</option>
            <option value="-quota_bytes">largest byte quota first</option>
            <option value={FULLEST}>fullest first (% of byte quota used)</option>
          </select>
        </label>
        <button type="submit">Apply</button>
      </form>
      <ErrorText error={list.error} />
      {order === FULLEST ? (
        <p class="hint">
          Users with a byte quota only, by the share of it their account used at its latest sample; not sampled ones
          last.
        </p>
      ) : null}
      {list.data?.tooMany ? (
        <p class="warning" role="status">
          {list.data.tooMany.toLocaleString()} users with a byte quota match: sorting by the share used reads at most{' '}
          {SORT_READ_LIMIT.toLocaleString()}. Narrow the list (a cluster, a name prefix) to sort it.
        </p>
      ) : null}
      {list.loading && !list.data ? <Loading what="users" /> : null}
      {list.data && !list.data.tooMany ? (
        <ScrollBox label="Storage users" busy={list.loading}>
          <table class="users">
            <caption class="sr-only">Storage users</caption>
            <thead>
              <tr>
                <th scope="col">User</th>
                <th scope="col">Used / quota</th>
                <th scope="col" title="Where Swift stands with the user's quotas">
                  Quota
                </th>
                <th scope="col">Cluster</th>
                <th scope="col">Status</th>
                <th scope="col">Superuser</th>
              </tr>
            </thead>
            <tbody>
              {list.data.objects.map((u) => (
                <tr data-user={u.user}>
                  <td>
                    <a href={`#/users/${u.id}`}>{u.user}</a>
                  </td>
                  <td data-field="usage" data-quota-state={quotaState(u) ?? undefined}>
                    <UsageCell user={u} />
                  </td>
                  <td data-field="quota_status">
                    <QuotaStatusBadge status={u.quota_status} />
                  </td>
                  <td>{nameOf(u.cluster)}</td>
                  <td>{u.enabled ? 'enabled' : <span class="badge off">disabled</span>}</td>
                  <td>{u.is_superuser ? 'yes' : 'no'}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {list.data.objects.length === 0 ? <p>No users match.</p> : null}
        </ScrollBox>
      ) : null}
      {list.data && !list.data.tooMany ? (
        <nav class="pager row" aria-label="Pages">
          <button
            type="button"
            class="secondary"
            disabled={offset === 0}
            onClick={() => go({ offset: Math.max(0, offset - PAGE) || undefined })}
          >
            Previous
          </button>
          <span role="status">
            {total === 0 ? 0 : offset + 1}–{Math.min(offset + PAGE, total)} of {total.toLocaleString()}
          </span>
          <button
            type="button"
            class="secondary"
            disabled={offset + PAGE >= total}
            onClick={() => go({ offset: offset + PAGE })}
          >
            Next
          </button>
        </nav>
      ) : null}
    </>
  );
}

/** Used ÷ byte quota in percent; null without a quota or a sample. */
const pctUsed = (u: StorageUser): number | null =>
  u.bytes_used === null || u.bytes_used === undefined ? null : pctOfQuota(u.bytes_used, u.quota_bytes);

/** Fullest first; equal shares by name; not sampled last. */
export function byFullest(users: readonly StorageUser[]): StorageUser[] {
  return [...users].sort((a, b) => {
    const pa = pctUsed(a);
    const pb = pctUsed(b);
    if (pa === null || pb === null)
      return pa === null && pb === null ? a.user.localeCompare(b.user) : pa === null ? 1 : -1;
    return pb - pa || a.user.localeCompare(b.user);
  });
}

/** Over its byte quota, nearly full (past the 80 % line), or within it; null without a quota or a sample. */
export function quotaState(u: StorageUser): 'over' | 'near' | 'ok' | null {
  const pct = pctUsed(u);
  if (pct === null) return null;
  return pct >= 100 ? 'over' : pct >= WARN_PCT ? 'near' : 'ok';
}

/**
 * The account's bytes at the latest storage sample against its byte quota, with a bar; without a
 * quota, just what it uses; never sampled, "not sampled" (against the quota when there is one).
 * Over the quota and nearly full read differently: a badge and the bar's colour.
 */
function UsageCell({ user: u }: { user: StorageUser }) {
  const quota = u.quota_bytes === null || u.quota_bytes === undefined ? null : u.quota_bytes;
  if (u.bytes_used === null || u.bytes_used === undefined) {
    return (
      <span class="hint" title={quota === null ? undefined : bytesTitle(quota)}>
        {NOT_SAMPLED}
        {quota === null ? '' : ` / ${formatBytes(quota)}`}
      </span>
    );
  }
  const used = <span title={bytesTitle(u.bytes_used)}>{formatBytes(u.bytes_used)}</span>;
  if (quota === null) return used;
  const pct = pctUsed(u);
  const state = quotaState(u);
  const shown = pct === null ? '' : Number.isFinite(pct) ? ` (${pct.toFixed(1)} %)` : ' (over)';
  return (
    <div class="usage-cell">
      <span>
        {used} / <span title={bytesTitle(quota)}>{formatBytes(quota)}</span>
        {shown}
        {state === 'over' ? (
          <>
            {' '}
            <span class="badge off">over quota</span>
          </>
        ) : state === 'near' ? (
          <>
            {' '}
            <span class="badge warn">nearly full</span>
          </>
        ) : null}
      </span>
      {pct !== null ? <UsedBar pct={Number.isFinite(pct) ? pct : 100} label={`${u.user}'s byte quota`} /> : null}
    </div>
  );
}

/** The reconciler's word on the user's quotas, short; the user's page says more. */
function QuotaStatusBadge({ status }: { status: StorageUser['quota_status'] }) {
  if (!status) return <span class="hint">none</span>;
  return <span class={status === 'error' ? 'badge off' : status === 'pending' ? 'badge warn' : 'badge'}>{status}</span>;
}

function CreateUser({
  onClose,
  onCreated,
  defaultCluster,
}: {
  onClose: () => void;
  onCreated: () => void;
  defaultCluster?: number;
}) {
  const { call, clusters, me } = useSession();
  const writable = clusters.filter((c) => canWriteCluster(me, c.id));
  const [cluster, setCluster] = useState(
    String(writable.find((c) => c.id === defaultCluster)?.id ?? writable[0]?.id ?? ''),
  );
  const [user, setUser] = useState('');
  const [superuser, setSuperuser] = useState(false);
  const pw = usePasswordChoice();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [created, setCreated] = useState<StorageUser>();
  if (created) {
    return (
      <Section title={`User ${created.user} created`}>
        <ShownOnce title={`Password of ${created.user}`} value={created.password ?? ''} onDone={onClose} />
        <p>
          <a href={`#/users/${created.id}`}>Open {created.user}'s page</a> for ready-to-paste connection settings.
        </p>
      </Section>
    );
  }
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const u = await call<StorageUser>('POST', 'users/', {
        cluster: `/api/v1/clusters/${cluster}/`,
        user,
        password: pw.password,
        is_superuser: superuser,
      });
      setCreated(u);
      onCreated();
    } catch (err) {
      setError(errorText(err));
      setBusy(false);
    }
  };
  return (
    <Section title="New user">
      <form class="stack" onSubmit={submit}>
        <label>
          Cluster
          <select name="cluster" value={cluster} onChange={(e) => setCluster(e.currentTarget.value)}>
            {writable.map((c) => (
              <option value={String(c.id)}>{c.name}</option>
            ))}
          </select>
        </label>
        <label>
          User name
          <input name="user" required autoComplete="off" value={user} onInput={(e) => setUser(e.currentTarget.value)} />
        </label>
        <PasswordFields choice={pw} />
        <label class="check">
          <input
            name="is_superuser"
            type="checkbox"
            checked={superuser}
            onChange={(e) => setSuperuser(e.currentTarget.checked)}
          />{' '}
          Superuser (ResellerAdmin: every account of the cluster)
        </label>
        <ErrorText error={error} />
        <div class="row">
          <button type="submit" disabled={busy}>
            Create user
          </button>
          <button type="button" class="secondary" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Section>
  );
}
