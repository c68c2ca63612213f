import type { RoundNode, ServerType } from './round';

/**
 * Readers of the recon documents a round carries, as Swift 2.30's recon middleware writes them
 * (swift/common/middleware/recon.py). Each returns undefined when the endpoint failed
 * ({"error": …}), was not read, or does not have the expected shape: a rule then says nothing
 * rather than something wrong.
 */

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

export interface DiskUsage {
  device: string;
  /** true, false, or the OSError text check_mount raised. */
  mounted: boolean | string;
  size: number | null;
  used: number | null;
  avail: number | null;
}

/** /recon/diskusage: [{device, mounted, size, used, avail}]; size etc. are '' when unmounted. */
export function diskUsageOf(node: RoundNode): DiskUsage[] | undefined {
  const v = node.recon.diskusage;
  if (!Array.isArray(v)) return undefined;
  return v.filter(isObject).flatMap((d) =>
    typeof d.device === 'string'
      ? [
          {
            device: d.device,
            mounted: typeof d.mounted === 'string' ? d.mounted : d.mounted === true,
            size: num(d.size),
            used: num(d.used),
            avail: num(d.avail),
          },
        ]
      : [],
  );
}

/** /recon/unmounted: [{device, mounted: false | "<OSError text>"}]. */
export function unmountedOf(node: RoundNode): Array<{ device: string; reason: string | null }> | undefined {
  const v = node.recon.unmounted;
  if (!Array.isArray(v)) return undefined;
  return v
    .filter(isObject)
    .flatMap((d) =>
      typeof d.device === 'string'
        ? [{ device: d.device, reason: typeof d.mounted === 'string' ? d.mounted : null }]
        : [],
    );
}

/** /recon/driveaudit: {"drive_audit_errors": n} (null before swift-drive-audit has run). */
export const driveAuditErrorsOf = (node: RoundNode): number | null =>
  isObject(node.recon.driveaudit) ? num(node.recon.driveaudit.drive_audit_errors) : null;

/** /recon/async: {"async_pending": n, "async_pending_last": t}. */
export const asyncPendingOf = (node: RoundNode): number | null =>
  isObject(node.recon.async) ? num(node.recon.async.async_pending) : null;

/** /recon/quarantined: objects + containers + accounts (the per-policy counts are in objects). */
export function quarantinedOf(node: RoundNode): number | null {
  const q = node.recon.quarantined;
  if (!isObject(q)) return null;
  const parts = [q.objects, q.containers, q.accounts].map(num);
  return parts.every((p) => p === null) ? null : parts.reduce<number>((s, p) => s + (p ?? 0), 0);
}

/**
 * /recon/replication/<type>: when its replicator last completed a pass (Unix seconds), as
 * swift-recon reads it: object_replication_last for objects, replication_last otherwise. Null:
 * the endpoint answered but no pass has completed; undefined: not known.
 */
export function replicationLastOf(node: RoundNode, type: ServerType): number | null | undefined {
  const r = node.recon[`replication/${type}`];
  if (!isObject(r) || 'error' in r) return undefined;
  return type === 'object' ? (num(r.object_replication_last) ?? num(r.replication_last)) : num(r.replication_last);
}

/** A replicator's last completed pass: when it ended, how long it took, how many partitions it went through. */
export interface ReplicationPass {
  /** Unix seconds. */
  last: number;
  /** Length of the pass in seconds; null when recon does not say. */
  seconds: number | null;
  /** Partitions the pass attempted (replication_stats.attempted); null when recon does not say. */
  partitions: number | null;
}

/**
 * /recon/replication/<type>'s last completed pass. The object replicator writes its pass length in
 * minutes (object_replication_time, and replication_time with the same value); the account and
 * container replicators write replication_time in seconds. Null: no pass completed; undefined: not
 * known.
 */
export function replicationPassOf(node: RoundNode, type: ServerType): ReplicationPass | null | undefined {
  const last = replicationLastOf(node, type);
  if (last === null || last === undefined) return last;
  const r = node.recon[`replication/${type}`] as Record<string, unknown>;
  const time =
    type === 'object' ? (num(r.object_replication_time) ?? num(r.replication_time)) : num(r.replication_time);
  const stats = isObject(r.replication_stats) ? r.replication_stats : {};
  const attempted = num(stats.attempted);
  return {
    last,
    seconds: time === null || time < 0 ? null : type === 'object' ? time * 60 : time,
    partitions: attempted !== null && Number.isInteger(attempted) && attempted >= 0 ? attempted : null,
  };
}

/** /recon/ringmd5: {"/etc/swift/object.ring.gz": md5 | null}, keyed here by file name. */
export function ringMd5Of(node: RoundNode): Map<string, string | null> | undefined {
  const r = node.recon.ringmd5;
  if (!isObject(r) || 'error' in r) return undefined;
  return new Map(
    Object.entries(r).map(([path, md5]) => [path.split('/').pop()!, typeof md5 === 'string' ? md5 : null]),
  );
}

/** /recon/time: the node's time.time(), Unix seconds. */
export const timeOf = (node: RoundNode): number | null => num(node.recon.time);
