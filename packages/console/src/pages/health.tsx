import type { ClusterHealthResource, ClusterHealthStatus, HealthNodeResource } from '@cairn/contract';
import { ErrorText, Loading, ScrollBox, Section } from '../components';
import { useSession } from '../context';
import { useLoad } from '../hooks';
import { bytesTitle, formatBytes, formatPct, formatTime } from '../lib/format';
import { HEALTH_CLASS, HEALTH_LABEL, countFindings, orderFindings } from '../lib/health';

/** A cluster's worst open severity in words (colour only repeats it). */
export function HealthBadge({ status }: { status: ClusterHealthStatus | undefined }) {
  const s = status ?? 'unknown';
  return <span class={HEALTH_CLASS[s]}>{HEALTH_LABEL[s]}</span>;
}

/** The cluster's health: status, open findings (critical first), and each node's latest word. */
export function HealthPage({ clusterId }: { clusterId: number }) {
  const { call, clusters } = useSession();
  const cluster = clusters.find((c) => c.id === clusterId);
  const health = useLoad(() => call<ClusterHealthResource>('GET', `clusters/${clusterId}/health/`), [clusterId]);
  if (!cluster) {
    return (
      <>
        <h1 tabIndex={-1}>Health</h1>
        <ErrorText error={`No cluster with id ${clusterId} (or you may not see it).`} />
      </>
    );
  }
  const h = health.data;
  return (
    <>
      <div class="page-head">
        <h1 tabIndex={-1}>Health — {cluster.name}</h1>
        <a href="#/clusters">All clusters</a>
      </div>
      {health.loading && !h ? <Loading what="health" /> : null}
      <ErrorText error={health.error} />
      {h ? <HealthSummary health={h} /> : null}
      {h && h.status !== 'unknown' ? (
        <>
          <Section title="Open findings">
            {h.findings.length === 0 ? (
              <p>Nothing is wrong as far as the latest round tells.</p>
            ) : (
              <ul class="findings">
                {orderFindings(h.findings).map((f) => (
                  <li data-finding={f.id}>
                    <HealthBadge status={f.severity} /> <code>{f.code}</code>{' '}
                    <span class="where">{[f.node, f.device, f.ring_set].filter(Boolean).join(' ')}</span>
                    <p class="sentence">{f.sentence}</p>
                    <p class="hint">Since {formatTime(f.since)}</p>
                  </li>
                ))}
              </ul>
            )}
          </Section>
          <Section title="Nodes">
            <NodeTable nodes={h.nodes} />
          </Section>
        </>
      ) : null}
    </>
  );
}

function HealthSummary({ health: h }: { health: ClusterHealthResource }) {
  if (h.status === 'unknown') {
    return (
      <p class="health-status" role="status">
        <HealthBadge status="unknown" /> No health round has been posted for this cluster. Start the collector,{' '}
        <code>cairn health collect</code>, where it reaches the storage nodes’ recon (as{' '}
        <code>cairn capacity collect</code> does): each round reads every node and brings the findings up to date.
      </p>
    );
  }
  return (
    <p class="health-status" role="status">
      <HealthBadge status={h.status} /> {countFindings(h.findings)}; latest round {formatTime(h.collected_at)}.
    </p>
  );
}

const SERVER_TYPES = ['account', 'container', 'object'] as const;

/** One row per node; the node stays the first column, so a phone reads it before scrolling. */
function NodeTable({ nodes }: { nodes: HealthNodeResource[] }) {
  if (nodes.length === 0) return <p>The latest round listed no nodes.</p>;
  return (
    <ScrollBox label="Nodes">
      <table class="health-nodes">
        <caption class="sr-only">Each storage node's latest recon: answer, devices, last replication passes</caption>
        <thead>
          <tr>
            <th scope="col">Node</th>
            <th scope="col">Answered</th>
            <th scope="col">Devices (fill, mounted)</th>
            <th scope="col">Last replication pass</th>
            <th scope="col" class="num">
              Async pending
            </th>
            <th scope="col" class="num">
              Quarantined
            </th>
          </tr>
        </thead>
        <tbody>
          {nodes.map((n) => (
            <tr data-node={n.node} class={n.answered ? undefined : 'warn'}>
              <th scope="row">{n.node}</th>
              <td data-field="answered">
                {n.answered ? 'yes' : 'no'}
                {n.answered ? null : <span class="hint"> — last seen {formatTime(n.last_seen)}</span>}
                {n.error ? <span class="hint"> ({n.error})</span> : null}
              </td>
              <td data-field="devices">
                {n.devices.length === 0 ? (
                  '—'
                ) : (
                  <ul class="plain">
                    {n.devices.map((d) => (
                      <li>
                        {d.device}:{' '}
                        {d.mounted ? (
                          <span title={`${formatBytes(d.used_bytes)} used of ${bytesTitle(d.size_bytes) ?? '—'}`}>
                            {formatPct(d.fill_pct)} of {formatBytes(d.size_bytes)}
                          </span>
                        ) : (
                          <span class="badge warn">unmounted</span>
                        )}
                      </li>
                    ))}
                  </ul>
                )}
              </td>
              <td data-field="replication">
                {!n.answered && Object.values(n.replication).every((t) => t === null) ? (
                  // A node that never answered has told nothing of its replicators: not "never".
                  '—'
                ) : (
                  <ul class="plain">
                    {SERVER_TYPES.filter((t) => t in n.replication).map((t) => (
                      <li>
                        {t}: {formatTime(n.replication[t])}
                      </li>
                    ))}
                  </ul>
                )}
              </td>
              <td class="num">{n.async_pending?.toLocaleString() ?? '—'}</td>
              <td class="num">{n.quarantined?.toLocaleString() ?? '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollBox>
  );
}
