import { useState } from 'preact/hooks';
import { clusterIdOf, errorText, listAll, type ApiKey, type Operator } from '../api';
import { Confirm, ErrorText, Loading, Section, ShownOnce } from '../components';
import { useSession } from '../context';
import { useLoad } from '../hooks';
import { formatTime } from '../lib/format';

/** Operators, their roles and cluster limits, and their API keys (admins limited to no cluster). */
export function OperatorsPage() {
  const { call } = useSession();
  const ops = useLoad(() => listAll<Operator>(call, 'operators/?limit=1000&order_by=name'), []);
  const [creating, setCreating] = useState(false);
  return (
    <>
      <div class="page-head">
        <h1 tabIndex={-1}>Operators</h1>
        {!creating ? (
          <button type="button" onClick={() => setCreating(true)}>
            New operator
          </button>
        ) : null}
      </div>
      {creating ? <OperatorForm onClose={() => setCreating(false)} onSaved={ops.reload} /> : null}
      <ErrorText error={ops.error} />
      {ops.loading && !ops.data ? <Loading what="operators" /> : null}
      {ops.data?.rows.map((o) => (
        <OperatorCard key={o.id} op={o} onChanged={ops.reload} />
      ))}
    </>
  );
}

function ClusterChoices({ chosen, setChosen }: { chosen: number[]; setChosen: (ids: number[]) => void }) {
  const { clusters } = useSession();
  return (
    <fieldset>
      <legend>Limited to clusters (none ticked: every cluster)</legend>
      {clusters.map((c) => (
        <label class="check">
          <input
            type="checkbox"
            checked={chosen.includes(c.id)}
            onChange={(e) => setChosen(e.currentTarget.checked ? [...chosen, c.id] : chosen.filter((x) => x !== c.id))}
          />{' '}
          {c.name}
        </label>
      ))}
    </fieldset>
  );
}

function OperatorForm({ op, onClose, onSaved }: { op?: Operator; onClose: () => void; onSaved: () => void }) {
  const { call } = useSession();
  const [name, setName] = useState(op?.name ?? '');
  const [role, setRole] = useState<Operator['role']>(op?.role ?? 'reader');
  const [chosen, setChosen] = useState<number[]>(op?.clusters.map(clusterIdOf) ?? []);
  const [error, setError] = useState<string>();
  const [key, setKey] = useState<string>();
  if (key) {
    return (
      <Section title={`Operator ${name} created`}>
        <ShownOnce title={`API key of ${name}`} value={`${name}:${key}`} onDone={onClose} />
      </Section>
    );
  }
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    const clusters = chosen.map((id) => `/api/v1/clusters/${id}/`);
    try {
      if (op) {
        await call('PATCH', `operators/${op.id}/`, { role, clusters });
        onSaved();
        onClose();
      } else {
        const created = await call<Operator & { api_key: string }>('POST', 'operators/', { name, role, clusters });
        onSaved();
        setKey(created.api_key);
      }
    } catch (err) {
      setError(errorText(err));
    }
  };
  const form = (
    <form class="stack" onSubmit={submit}>
      {op ? null : (
        <label>
          Name (cannot change later)
          <input name="name" required autoComplete="off" value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
      )}
      <label>
        Role
        <select name="role" value={role} onChange={(e) => setRole(e.currentTarget.value as Operator['role'])}>
          <option value="reader">reader (read only)</option>
          <option value="admin">admin</option>
        </select>
      </label>
      <ClusterChoices chosen={chosen} setChosen={setChosen} />
      <ErrorText error={error} />
      <div class="row">
        <button type="submit">{op ? 'Save changes' : 'Create operator'}</button>
        <button type="button" class="secondary" onClick={onClose}>
          Cancel
        </button>
      </div>
    </form>
  );
  return op ? form : <Section title="New operator">{form}</Section>;
}

function OperatorCard({ op, onChanged }: { op: Operator; onChanged: () => void }) {
  const { call, clusters, me } = useSession();
  const [editing, setEditing] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const [error, setError] = useState<string>();
  const limits = op.clusters.map((u) => clusters.find((c) => c.id === clusterIdOf(u))?.name ?? u);
  const remove = async () => {
    setError(undefined);
    try {
      await call('DELETE', `operators/${op.id}/`);
      onChanged();
    } catch (err) {
      setError(errorText(err));
      setConfirming(false);
    }
  };
  return (
    <Section
      title={op.name}
      actions={
        <span class="row">
          <span class="badge">{op.role}</span>
          {!editing ? (
            <button
              type="button"
              class="secondary"
              onClick={() => setEditing(true)}
              aria-label={`Edit operator ${op.name}`}
            >
              Edit
            </button>
          ) : null}
          {op.id !== me.id ? (
            <button
              type="button"
              class="danger"
              onClick={() => setConfirming(true)}
              aria-label={`Delete operator ${op.name}`}
            >
              Delete
            </button>
          ) : null}
        </span>
      }
    >
      {editing ? (
        <OperatorForm op={op} onClose={() => setEditing(false)} onSaved={onChanged} />
      ) : (
        <p>Clusters: {limits.length === 0 ? 'every cluster' : limits.join(', ')}</p>
      )}
      {confirming ? (
        <div class="confirm" role="alertdialog" aria-label={`Delete operator ${op.name}`}>
          <p>Delete operator {op.name}? Its API keys stop working; the audit trail keeps its entries.</p>
          <div class="row">
            <button type="button" class="danger" onClick={remove} ref={(b) => b?.focus()}>
              Delete operator
            </button>
            <button type="button" class="secondary" onClick={() => setConfirming(false)}>
              Cancel
            </button>
          </div>
        </div>
      ) : null}
      <ErrorText error={error} />
      <Keys op={op} />
    </Section>
  );
}

function Keys({ op }: { op: Operator }) {
  const { call, me, signOut } = useSession();
  const keys = useLoad(() => listAll<ApiKey>(call, `operators/${op.id}/keys/?limit=1000`), [op.id]);
  const [error, setError] = useState<string>();
  const [fresh, setFresh] = useState<string>();
  const [confirming, setConfirming] = useState<ApiKey>();
  const add = async () => {
    setError(undefined);
    try {
      const k = await call<ApiKey>('POST', `operators/${op.id}/keys/`);
      setFresh(k.key);
      keys.reload();
    } catch (err) {
      setError(errorText(err));
    }
  };
  const revoke = async (k: ApiKey) => {
    setError(undefined);
    try {
      await call('DELETE', `operators/${op.id}/keys/${k.id}/`);
      setConfirming(undefined);
      // The console's own key is gone: any further call would be refused, so say why now.
      if (k.resource_uri === me.key_uri)
        signOut('You revoked the API key you were signed in with; sign in with another key.');
      else keys.reload();
    } catch (err) {
      setError(errorText(err));
      setConfirming(undefined);
    }
  };
  return (
    <div class="keys">
      <div class="row">
        <h3>API keys</h3>
        <button type="button" class="secondary" onClick={add} aria-label={`Add key for ${op.name}`}>
          Add key
        </button>
      </div>
      {fresh ? (
        <ShownOnce
          title={`New API key of ${op.name}`}
          value={`${op.name}:${fresh}`}
          onDone={() => setFresh(undefined)}
        />
      ) : null}
      <ErrorText error={error ?? keys.error} />
      {keys.data ? (
        <ul class="plain">
          {keys.data.rows.map((k) => (
            <li>
              key {String(k.id)}, created {formatTime(k.created_at)}{' '}
              {k.resource_uri === me.key_uri ? <span class="badge">signed in with this key</span> : null}{' '}
              <button
                type="button"
                class="danger small"
                onClick={() => setConfirming(k)}
                aria-label={`Revoke key ${String(k.id)} of ${op.name}`}
              >
                Revoke
              </button>
              {confirming?.id === k.id ? (
                <ConfirmRevoke
                  op={op}
                  apiKey={k}
                  current={k.resource_uri === me.key_uri}
                  onRevoke={() => revoke(k)}
                  onCancel={() => setConfirming(undefined)}
                />
              ) : null}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

/** Revoking cannot be undone; revoking the key the console runs on also signs the operator out. */
function ConfirmRevoke({
  op,
  apiKey: k,
  current,
  onRevoke,
  onCancel,
}: {
  op: Operator;
  apiKey: ApiKey;
  current: boolean;
  onRevoke: () => void;
  onCancel: () => void;
}) {
  return (
    <Confirm
      id={`revoke-${op.id}-${String(k.id)}`}
      title={`Revoke key ${String(k.id)} of ${op.name}?`}
      action="Revoke key"
      onConfirm={onRevoke}
      onCancel={onCancel}
    >
      {current ? (
        <>
          <strong>This is the key you are signed in with.</strong> The console signs you out at once; sign in again with
          another key.{' '}
        </>
      ) : null}
      Whatever uses this key (a script, a collector, a console) is refused from then on. This cannot be undone.
    </Confirm>
  );
}
