import { useEffect, useState } from 'preact/hooks';
import { query, type CapacityElement, type Cluster, type Device, type List } from '../api';
import { Copyable, ErrorText, Section } from '../components';
import { isGlobalAdmin, useSession } from '../context';
import { endpoints } from '../lib/connect';
import { formatPct, formatTb, formatTime } from '../lib/format';
import { useLoad } from '../hooks';
import { ClusterForm } from './cluster-form';
import { UsedBar } from './charts';
import { HealthBadge } from './health';

/** The cluster monitor: every cluster the operator may see, with its addresses and a health glance. */
export function ClustersPage() {
  const { me, clusters, reloadClusters } = useSession();
  const [creating, setCreating] = useState(false);
  const admin = isGlobalAdmin(me);
  // Each cluster's health changes with every collector round: read the list afresh on each visit.
  useEffect(reloadClusters, [reloadClusters]);
  return (
    <>
      <div class="page-head">
        <h1 tabIndex={-1}>Clusters</h1>
        {admin && !creating ? (
          <button type="button" onClick={() => setCreating(true)}>
            New cluster
          </button>
        ) : null}
      </div>
      {creating ? (
        <Section title="New cluster">
          <ClusterForm onDone={() => setCreating(false)} />
        </Section>
      ) : null}
      {clusters.length === 0 ? <p>No clusters yet.</p> : null}
      {clusters.map((c) => (
        <ClusterCard key={c.id} cluster={c} admin={admin} />
      ))}
    </>
  );
}

function ClusterCard({ cluster: c, admin }: { cluster: Cluster; admin: boolean }) {
  const [editing, setEditing] = useState(false);
  const e = endpoints(c.auth_url);
  return (
    <Section
      title={c.name}
      actions={
        <span class="row">
          <a class="button" href={`#/clusters/${c.id}/health`}>
            Health
          </a>
          <a class="button secondary" href={`#/clusters/${c.id}/capacity`}>
            Capacity planning
          </a>
          <a class="button secondary" href={`#/clusters/${c.id}/utilization`}>
            Utilization
          </a>
          <a class="button secondary" href={`#/users?cluster=${c.id}`}>
            Users
          </a>
          {admin && !editing ? (
            <button
              type="button"
              class="secondary"
              onClick={() => setEditing(true)}
              aria-label={`Edit cluster ${c.name}`}
            >
              Edit
            </button>
          ) : null}
        </span>
      }
    >
      {editing ? (
        <ClusterForm cluster={c} onDone={() => setEditing(false)} />
      ) : (
        <dl class="facts">
          <dt>Health</dt>
          <dd data-field="health">
            <HealthBadge status={c.health} />
          </dd>
          <dt>UUID</dt>
          <dd>
            <code>{c.uuid}</code>
          </dd>
          <dt>Region</dt>
          <dd>{c.region}</dd>
          <dt>Auth URL</dt>
          <dd>
            <Copyable value={c.auth_url} label={`${c.name} auth URL`} />
          </dd>
          <dt>Swift V1</dt>
          <dd>
            <Copyable value={e.v1} label={`${c.name} V1 endpoint`} />
          </dd>
          <dt>Keystone V2.0</dt>
          <dd>
            <Copyable value={e.v2} label={`${c.name} V2 endpoint`} />
          </dd>
          <dt>Keystone V3</dt>
          <dd>
            <Copyable value={e.v3} label={`${c.name} V3 endpoint`} />
          </dd>
          <dt>Storage URL</dt>
          <dd>
            <Copyable value={c.storage_url} label={`${c.name} storage URL`} />
          </dd>
          <ClusterGlance cluster={c} />
        </dl>
      )}
    </Section>
  );
}

/** User count, capacity used and the last device report: three small reads per cluster. */
function ClusterGlance({ cluster: c }: { cluster: Cluster }) {
  const { call } = useSession();
  const users = useLoad(() => call<List<unknown>>('GET', `users/${query({ cluster: c.id, limit: 1 })}`), [c.id]);
  const capacity = useLoad(
    () => call<{ capacity: CapacityElement[] }>('GET', `clusters/${c.id}/capacity/list/`),
    [c.id],
  );
  const devices = useLoad(() => call<List<Device>>('GET', `clusters/${c.id}/devices/${query({ limit: 1 })}`), [c.id]);
  const totals = capacity.data?.capacity.reduce(
    (a, r) => ({ raw: a.raw + r.total_raw_tb, used: a.used + r.total_used_tb }),
    { raw: 0, used: 0 },
  );
  const pct = totals && totals.raw > 0 ? (totals.used / totals.raw) * 100 : null;
  return (
    <>
      <dt>Users</dt>
      <dd aria-busy={users.loading}>
        {users.error ? <ErrorText error={users.error} /> : (users.data?.meta.total_count.toLocaleString() ?? '…')}
      </dd>
      <dt>Capacity used</dt>
      <dd aria-busy={capacity.loading}>
        {capacity.error ? (
          <ErrorText error={capacity.error} />
        ) : !totals ? (
          '…'
        ) : pct === null ? (
          'no devices reported'
        ) : (
          <span class="glance">
            <UsedBar pct={pct} label={`${c.name} capacity used`} />
            {formatTb(totals.used)} of {formatTb(totals.raw)} ({formatPct(pct)})
          </span>
        )}
      </dd>
      <dt>Devices last reported</dt>
      <dd aria-busy={devices.loading}>
        {devices.error ? (
          <ErrorText error={devices.error} />
        ) : devices.data ? (
          formatTime(devices.data.objects[0]?.reported_at)
        ) : (
          '…'
        )}
      </dd>
    </>
  );
}
