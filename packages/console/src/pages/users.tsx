import { useState } from 'preact/hooks';
import { clusterIdOf, errorText, query, type List, type StorageUser } from '../api';
import { ErrorText, Loading, Section, ShownOnce, ScrollBox } from '../components';
import { canWriteCluster, useSession } from '../context';
import { navigate, useLoad } from '../hooks';
import { PasswordFields, usePasswordChoice } from './password';
import { formatQuotaBytes, pctOfQuota } from '../lib/quota-units';
import { UsedBar } from './charts';

const PAGE = 50;

/** Storage users, paged and filtered by the API (so it stays fast with a million of them). */
export function UsersPage({ params }: { params: URLSearchParams }) {
  const { call, clusters, me } = useSession();
  const cluster = params.get('cluster') ?? '';
  const prefix = params.get('q') ?? '';
  const enabled = params.get('enabled') ?? '';
  const order = params.get('order') ?? '';
  const offset = Math.max(0, Number(params.get('offset') ?? 0) || 0);
  const state = { cluster, q: prefix, enabled, order };
  const list = useLoad(
    () =>
      call<List<StorageUser>>(
        'GET',
        `users/${query({ cluster: cluster || undefined, user__startswith: prefix || undefined, enabled: enabled || undefined, order_by: order || undefined, limit: PAGE, offset })}`,
      ),
    [cluster, prefix, enabled, order, offset],
  );
  const writable = clusters.filter((c) => canWriteCluster(me, c.id));
  const [creating, setCreating] = useState(false);
  const nameOf = (uri: string) => clusters.find((c) => c.id === clusterIdOf(uri))?.name ?? uri;
  const go = (changes: Record<string, string | number | undefined>) =>
    navigate('/users', { ...state, offset: undefined, ...changes });
  const total = list.data?.meta.total_count ?? 0;
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
          </select>
        </label>
        <button type="submit">Apply</button>
      </form>
      <ErrorText error={list.error} />
      {list.loading && !list.data ? <Loading what="users" /> : null}
      {list.data ? (
        <ScrollBox label="Storage users" busy={list.loading}>
          <table class="users">
            <caption class="sr-only">Storage users</caption>
            <thead>
              <tr>
                <th scope="col">User</th>
                <th scope="col">Cluster</th>
                <th scope="col">Status</th>
                <th scope="col">Superuser</th>
                <th scope="col">Used / quota</th>
              </tr>
            </thead>
            <tbody>
              {list.data.objects.map((u) => (
                <tr data-user={u.user}>
                  <td>
                    <a href={`#/users/${u.id}`}>{u.user}</a>
                  </td>
                  <td>{nameOf(u.cluster)}</td>
                  <td>{u.enabled ? 'enabled' : <span class="badge off">disabled</span>}</td>
                  <td>{u.is_superuser ? 'yes' : 'no'}</td>
                  <td data-field="usage">
                    <UsageCell user={u} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {list.data.objects.length === 0 ? <p>No users match.</p> : null}
        </ScrollBox>
      ) : null}
      {list.data ? (
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

/**
 * The account's bytes at the latest storage sample against its byte quota, with a bar; without a
 * quota, just what it uses.
 */
function UsageCell({ user: u }: { user: StorageUser }) {
  if (u.bytes_used === null || u.bytes_used === undefined) {
    return (
      <span class="hint">
        {u.quota_bytes === null || u.quota_bytes === undefined
          ? 'not sampled'
          : `— / ${formatQuotaBytes(u.quota_bytes)}`}
      </span>
    );
  }
  const used = formatQuotaBytes(u.bytes_used);
  if (u.quota_bytes === null || u.quota_bytes === undefined) return <span>{used}</span>;
  const pct = pctOfQuota(u.bytes_used, u.quota_bytes);
  const shown = pct === null ? '' : Number.isFinite(pct) ? ` (${pct.toFixed(1)} %)` : ' (over)';
  return (
    <div class="usage-cell">
      <span>
        {used} / {formatQuotaBytes(u.quota_bytes)}
        {shown}
      </span>
      {pct !== null ? <UsedBar pct={Number.isFinite(pct) ? pct : 100} label={`${u.user}'s byte quota`} /> : null}
    </div>
  );
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
