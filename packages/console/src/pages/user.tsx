import { useState } from 'preact/hooks';
import { clusterIdOf, errorText, type StorageUser } from '../api';
import { ConfirmDeletion, CopyButton, ErrorText, Loading, Section, ShownOnce } from '../components';
import { canWriteCluster, useSession } from '../context';
import { navigate, useLoad } from '../hooks';
import { Lazy } from '../lazy';
import { connectionLines } from '../lib/connect';
import { PasswordFields, usePasswordChoice } from './password';
import { UserQuotas } from './user-quotas';

/** The account's charts come with the utilization chunk (and uPlot), loaded when a user is opened. */
const loadUsage = () => import('./utilization').then((m) => m.UserUsage);

/** One storage user: its state, the changes an admin may make, and how to connect to it. */
export function UserPage({ id }: { id: string }) {
  const { call, clusters, me } = useSession();
  const user = useLoad(() => call<StorageUser>('GET', `users/${id}/`), [id]);
  if (user.loading && !user.data) return <Loading what="the user" />;
  if (!user.data) {
    return (
      <>
        <h1 tabIndex={-1}>User</h1>
        <ErrorText error={user.error} />
        <a href="#/users">All users</a>
      </>
    );
  }
  const u = user.data;
  const clusterId = clusterIdOf(u.cluster);
  const cluster = clusters.find((c) => c.id === clusterId);
  const writable = canWriteCluster(me, clusterId);
  return (
    <>
      <div class="page-head">
        <h1 tabIndex={-1}>User {u.user}</h1>
        <a href={`#/users?cluster=${clusterId}`}>Users of {cluster?.name ?? 'this cluster'}</a>
      </div>
      <Section title="Details">
        <dl class="facts">
          <dt>Cluster</dt>
          <dd>{cluster?.name ?? u.cluster}</dd>
          <dt>Swift account</dt>
          <dd>
            <code>AUTH_{u.user}</code>
          </dd>
          <dt>Status</dt>
          <dd data-field="enabled">{u.enabled ? 'enabled' : 'disabled — cannot log in'}</dd>
          <dt>Superuser</dt>
          <dd data-field="is_superuser">{u.is_superuser ? 'yes (ResellerAdmin)' : 'no'}</dd>
          <dt>S3</dt>
          <dd>
            <a href={`#/users/${u.id}/s3`}>S3 credentials</a>
          </dd>
          <dt>Application credentials</dt>
          <dd>
            <a href={`#/users/${u.id}/application-credentials`}>Application credentials</a>
          </dd>
          <dt>Usage</dt>
          <dd>
            Last 7 days below;{' '}
            <a href={`#/clusters/${clusterId}/utilization?account=${encodeURIComponent(`AUTH_${u.user}`)}`}>
              any range on the utilization page
            </a>
          </dd>
        </dl>
        {writable ? <UserActions user={u} onChanged={user.reload} /> : null}
      </Section>
      <UserQuotas user={u} cluster={cluster} clusterId={clusterId} writable={writable} onChanged={user.reload} />
      {cluster ? <Connect authUrl={cluster.auth_url} user={u.user} /> : null}
      <Lazy load={loadUsage} props={{ clusterId, account: `AUTH_${u.user}` }} />
    </>
  );
}

function UserActions({ user: u, onChanged }: { user: StorageUser; onChanged: () => void }) {
  const { call } = useSession();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [mode, setMode] = useState<'none' | 'password' | 'delete'>('none');
  const patch = async (body: Partial<StorageUser>) => {
    setBusy(true);
    setError(undefined);
    try {
      await call('PATCH', `users/${u.id}/`, body);
      onChanged();
    } catch (err) {
      setError(errorText(err));
    }
    setBusy(false);
  };
  return (
    <>
      <div class="row actions">
        <button type="button" disabled={busy} onClick={() => patch({ enabled: !u.enabled })}>
          {u.enabled ? 'Disable' : 'Enable'}
        </button>
        <button
          type="button"
          class="secondary"
          disabled={busy}
          onClick={() => patch({ is_superuser: !u.is_superuser })}
        >
          {u.is_superuser ? 'Remove superuser' : 'Make superuser'}
        </button>
        <button type="button" class="secondary" onClick={() => setMode('password')}>
          Change password
        </button>
        <button type="button" class="danger" onClick={() => setMode('delete')}>
          Delete
        </button>
      </div>
      <ErrorText error={error} />
      {mode === 'password' ? <ChangePassword user={u} onClose={() => setMode('none')} /> : null}
      {mode === 'delete' ? <ConfirmDelete user={u} onCancel={() => setMode('none')} /> : null}
    </>
  );
}

function ChangePassword({ user: u, onClose }: { user: StorageUser; onClose: () => void }) {
  const { call } = useSession();
  const pw = usePasswordChoice();
  const [error, setError] = useState<string>();
  const [shown, setShown] = useState<string>();
  if (shown !== undefined) return <ShownOnce title={`New password of ${u.user}`} value={shown} onDone={onClose} />;
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    try {
      const r = await call<StorageUser>('PATCH', `users/${u.id}/`, { password: pw.password });
      setShown(r.password ?? pw.password);
    } catch (err) {
      setError(errorText(err));
    }
  };
  return (
    <form class="stack" onSubmit={submit}>
      <PasswordFields choice={pw} />
      <p class="hint">Every token of {u.user} stops working at once.</p>
      <ErrorText error={error} />
      <div class="row">
        <button type="submit">Set password</button>
        <button type="button" class="secondary" onClick={onClose}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function ConfirmDelete({ user: u, onCancel }: { user: StorageUser; onCancel: () => void }) {
  return (
    <ConfirmDeletion
      id="confirm-delete"
      title={`Delete the login of ${u.user}?`}
      action="Delete login"
      path={`users/${u.id}/`}
      onDeleted={() => navigate('/users', { cluster: clusterIdOf(u.cluster) })}
      onCancel={onCancel}
    >
      This removes the login only. The Swift account <code>AUTH_{u.user}</code> and all its data stay in Swift, and a
      new user with the same name in this cluster owns them again.
    </ConfirmDeletion>
  );
}

function Connect({ authUrl, user }: { authUrl: string; user: string }) {
  const lines = connectionLines(authUrl, user);
  const block = (title: string, text: string) => (
    <div class="snippet">
      <div class="row">
        <h3>{title}</h3>
        <CopyButton text={text} label={title} />
      </div>
      <pre tabIndex={0}>
        <code>{text}</code>
      </pre>
    </div>
  );
  return (
    <Section title="Connect">
      <p class="hint">
        Replace &lt;password&gt; with the user's password (the console never shows it again after it was set).
      </p>
      {block('swift CLI, V1', lines.swiftV1)}
      {block('swift CLI, Keystone V3', lines.swiftV3)}
      {block('rclone (rclone.conf)', lines.rclone)}
    </Section>
  );
}
