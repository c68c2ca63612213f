/**
 * Cluster health as the management API shows it (`/api/v1/clusters/<id>/health/` and the clusters'
 * `health` field): the API's representation is declared with these types and the console reads the
 * answer with them, so a field added, renamed or retyped is one change both sides see.
 */

/** How bad a finding is. */
export type HealthSeverity = 'warning' | 'critical';

/** A cluster's worst open severity: `ok` when nothing is open, `unknown` before its first health round. */
export type ClusterHealthStatus = 'ok' | HealthSeverity | 'unknown';

/** One finding, open or closed (docs/health.md lists every code). */
export interface HealthFindingResource {
  id: number;
  code: string;
  severity: HealthSeverity;
  /** The storage node (ip:port), or null for a ring set. */
  node: string | null;
  /** The device, or null for a node or a ring set. */
  device: string | null;
  /** The ring set of a ring_set_filling finding, else null. */
  ring_set: string | null;
  /** ISO 8601 UTC: since when the condition holds, as far as recon tells. */
  since: string;
  /** What is wrong and what to do about it. */
  sentence: string;
  open: boolean;
  opened_at: string;
  last_seen_at: string;
  /** null while open. */
  closed_at: string | null;
}

/** A device as the node's latest /recon/diskusage reported it. */
export interface HealthDeviceResource {
  device: string;
  /** Percent used, one decimal; null when unmounted or without sizes. */
  fill_pct: number | null;
  mounted: boolean;
  size_bytes: number | null;
  used_bytes: number | null;
}

/** A replicator's last completed pass, as /recon/replication/<type> reports it. */
export interface HealthReplicationPassResource {
  /** When it ended (ISO 8601 UTC). */
  ended_at: string;
  /** How long it took; null when recon does not say. */
  seconds: number | null;
  /** Partitions it attempted (replication_stats.attempted); null when recon does not say. */
  partitions: number | null;
}

/** A storage node's latest word. */
export interface HealthNodeResource {
  node: string;
  server_types: string[];
  answered: boolean;
  /** Why it did not answer, when it did not. */
  error: string | null;
  /** The collection time of the node's latest round. */
  collected_at: string;
  /** When it last answered; null when it never has. */
  last_seen: string | null;
  devices: HealthDeviceResource[];
  /** The last completed replication pass per server type it serves (ISO 8601 UTC), null: none. */
  replication: Record<string, string | null>;
  /** The last completed replication pass per server type it serves, with its length and partitions; null: none. */
  replication_passes: Record<string, HealthReplicationPassResource | null>;
  async_pending: number | null;
  quarantined: number | null;
}

/** GET clusters/<id>/health/. */
export interface ClusterHealthResource {
  status: ClusterHealthStatus;
  /** The latest round's collection time; null before the first round. */
  collected_at: string | null;
  findings: HealthFindingResource[];
  nodes: HealthNodeResource[];
  /** Every threshold in force, by name. */
  thresholds: Record<string, number>;
}
