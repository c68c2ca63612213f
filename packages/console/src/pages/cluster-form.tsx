import { useState } from 'preact/hooks';
import { errorText, type Cluster } from '../api';
import { ErrorText } from '../components';
import { useSession } from '../context';

type Fields = Pick<Cluster, 'name' | 'auth_url' | 'storage_url' | 'region'>;

/** Create (no `cluster`) or edit a cluster; only the fields that changed are sent on edit. */
export function ClusterForm({ cluster, onDone }: { cluster?: Cluster; onDone: () => void }) {
  const { call, reloadClusters } = useSession();
  const [f, setF] = useState<Fields>({
    name: cluster?.name ?? '',
    auth_url: cluster?.auth_url ?? '',
    storage_url: cluster?.storage_url ?? '',
    region: cluster?.region ?? 'RegionOne',
  });
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const prefix = cluster ? `edit-${cluster.id}` : 'new-cluster';
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      if (cluster) {
        const changed = Object.fromEntries(Object.entries(f).filter(([k, v]) => cluster[k as keyof Fields] !== v));
        if (Object.keys(changed).length > 0) await call('PATCH', `clusters/${cluster.id}/`, changed);
      } else {
        await call('POST', 'clusters/', f);
      }
      reloadClusters();
      onDone();
    } catch (err) {
      setError(errorText(err));
      setBusy(false);
    }
  };
  const field = (k: keyof Fields, label: string, inputMode: 'text' | 'url' = 'text') => (
    <label>
      {label}
      <input
        id={`${prefix}-${k}`}
        name={k}
        type="text"
        inputMode={inputMode}
        required
        value={f[k]}
        onInput={(e) => setF({ ...f, [k]: e.currentTarget.value })}
      />
    </label>
  );
  return (
    <form class="stack" onSubmit={submit}>
      {field('name', 'Name')}
      {field('auth_url', 'Auth URL (the gateway, e.g. https://auth.example.com/auth)', 'url')}
      {field('storage_url', 'Storage URL (the Swift proxy, ending in /v1)', 'url')}
      {field('region', 'Region')}
      <ErrorText error={error} />
      <div class="row">
        <button type="submit" disabled={busy}>
          {cluster ? 'Save changes' : 'Create cluster'}
        </button>
        <button type="button" class="secondary" onClick={onDone}>
          Cancel
        </button>
      </div>
    </form>
  );
}
