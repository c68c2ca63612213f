import { ReconError } from './errors';
import { fetchRecon, type ReconOptions } from './recon';

/**
 * Readers for the recon answers a ring step is judged by (Swift 2.30's recon middleware,
 * swift/common/middleware/recon.py). Each checks the shape it relies on and names the node when
 * the answer is unusable, like fetchDiskUsage.
 */

const hostOf = (baseUrl: string): string => {
  try {
    return new URL(baseUrl).host;
  } catch {
    return baseUrl;
  }
};

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * `GET /recon/ringmd5`: `{ "<swift_dir>/<ring>.ring.gz": "<md5 hex>" | null, … }` for the account and
 * container rings and the object ring of every policy in the node's swift.conf, only those that exist.
 * Returned by file name (`object.ring.gz`), because the keys are paths in the node's own swift_dir.
 * A null md5 is a ring file the node could not read.
 */
export async function fetchRingMd5s(baseUrl: string, options: ReconOptions): Promise<Map<string, string | null>> {
  const node = hostOf(baseUrl);
  const body = await fetchRecon(baseUrl, 'ringmd5', options);
  if (!isObject(body)) throw new ReconError(node, 'expected a JSON object from /recon/ringmd5');
  const sums = new Map<string, string | null>();
  for (const [path, md5] of Object.entries(body)) {
    if (md5 !== null && typeof md5 !== 'string')
      throw new ReconError(node, `/recon/ringmd5 gives ${path} a ${typeof md5}, not an md5`);
    sums.set(path.slice(path.lastIndexOf('/') + 1), md5);
  }
  return sums;
}

export type ReplicationType = 'object' | 'container' | 'account';

/** The last completed replication pass a node reports; null fields until a replicator has reported one. */
export interface ReplicationReport {
  /** When the last pass ended, in ms since the epoch (node's clock). */
  lastMs: number | null;
  /** How long it took, in ms. */
  durationMs: number | null;
}

/**
 * `GET /recon/replication/<type>`. The object replicator writes `object_replication_last` (epoch
 * seconds) and `object_replication_time` (minutes), and the same values as `replication_last` /
 * `replication_time` (Swift's admin guide calls the `object_` keys transitional: read first, the
 * plain ones when they are gone). The account and container replicators (Swift's db_replicator)
 * write `replication_last` (epoch seconds) and `replication_time` (seconds). Both are written when
 * a pass ends, including a pass the object replicator aborted on a ring change.
 */
export async function fetchReplication(
  baseUrl: string,
  type: ReplicationType,
  options: ReconOptions,
): Promise<ReplicationReport> {
  const node = hostOf(baseUrl);
  const body = await fetchRecon(baseUrl, `replication/${type}`, options);
  if (!isObject(body)) throw new ReconError(node, `expected a JSON object from /recon/replication/${type}`);
  const number = (key: string): number | null => {
    const v = body[key];
    if (v === null || v === undefined) return null;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0)
      throw new ReconError(node, `/recon/replication/${type}: '${key}' must be a number (got ${JSON.stringify(v)})`);
    return v;
  };
  const last =
    type === 'object' ? (number('object_replication_last') ?? number('replication_last')) : number('replication_last');
  const took =
    type === 'object' ? (number('object_replication_time') ?? number('replication_time')) : number('replication_time');
  const unitMs = type === 'object' ? 60_000 : 1_000;
  return { lastMs: last === null ? null : last * 1000, durationMs: took === null ? null : took * unitMs };
}

export interface UnmountedDevice {
  device: string;
  /** recon's `mounted`: false, or the error text of the mount check (e.g. an I/O error). */
  reason: string | false;
}

/** `GET /recon/unmounted`: `[{ "device": "sdb1", "mounted": false | "<error>" }, …]`, empty when all are mounted. */
export async function fetchUnmounted(baseUrl: string, options: ReconOptions): Promise<UnmountedDevice[]> {
  const node = hostOf(baseUrl);
  const body = await fetchRecon(baseUrl, 'unmounted', options);
  if (!Array.isArray(body)) throw new ReconError(node, 'expected a JSON list from /recon/unmounted');
  return body.map((entry: unknown, i) => {
    if (!isObject(entry) || typeof entry['device'] !== 'string')
      throw new ReconError(node, `/recon/unmounted entry ${i} has no device name`);
    const mounted = entry['mounted'];
    return { device: entry['device'], reason: typeof mounted === 'string' ? mounted : false };
  });
}
