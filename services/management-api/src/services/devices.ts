import {
  computeCapacity,
  DAY_MS,
  errors,
  escapeHtml,
  HOUR_MS,
  parseUtc,
  type Cluster,
  type DeviceReport,
} from '@cairn/domain';
import type { Db } from '../db/database';
import { withDbErrors } from '../db/errors';
import { API_ROOT } from '../resources/uris';
import { recordAudit } from '../repositories/audit';
import { getCluster } from '../repositories/clusters';
import {
  capacityHistory,
  deviceReportSummary,
  getCapacity,
  listDevices,
  listPolicies,
  replaceDeviceReport,
  type CapacitySample,
  type StoredDevice,
  type StoredPolicy,
} from '../repositories/devices';
import { recordCollectorRun } from '../repositories/monitoring';
import type { ListQuery, Page } from '../repositories/list-types';
import { clusterTarget, findVisibleCluster } from './clusters';
import { auditActorOf, type Acting } from './context';
import { requireWriterOn } from './policy';
import { Slots } from './slots';

export type { StoredDevice };

/** The cluster a path names (if visible) and its storage policies, for listing its devices. */
export async function clusterWithPolicies(
  db: Db,
  acting: Acting,
  rawId: string | undefined,
): Promise<{ cluster: Cluster; policies: StoredPolicy[] }> {
  const cluster = await findVisibleCluster(db, acting.operator, rawId);
  return { cluster, policies: await listPolicies(db, cluster.id) };
}

/** One page of a visible cluster's devices (`clusterWithPolicies` checked the visibility). */
export const list = (db: Db, cluster: Cluster, query: ListQuery, policyIndex?: number): Promise<Page<StoredDevice>> =>
  listDevices(db, cluster.id, query, policyIndex);

export async function capacity(db: Db, acting: Acting, rawId: string | undefined) {
  const cluster = await findVisibleCluster(db, acting.operator, rawId);
  return getCapacity(db, cluster.id);
}

/** How far back a history may reach in one answer, and past which its samples are daily. */
export const HISTORY_MAX_DAYS = 1096;
const HOURLY_UP_TO_DAYS = 31;

export interface CapacityHistory {
  start: Date;
  end: Date;
  resolution: 'hour' | 'day';
  samples: CapacitySample[];
}

function historyDate(name: string, raw: string): Date {
  const parsed = parseUtc(raw);
  if (!parsed)
    throw errors.invalidInput(
      `'${escapeHtml(raw)}' is not a valid ${name}: give an ISO 8601 date or UTC date-time such as 2026-11-24 or 2026-11-24T22:00:00Z.`,
    );
  return parsed;
}

/**
 * A visible cluster's capacity samples over [start, end): by default the 90 days up to `now`;
 * hourly up to 31 days, each day's last sample beyond, at most HISTORY_MAX_DAYS at once.
 */
export async function history(
  db: Db,
  acting: Acting,
  rawId: string | undefined,
  startRaw: string | undefined,
  endRaw: string | undefined,
  now: Date,
): Promise<CapacityHistory> {
  const cluster = await findVisibleCluster(db, acting.operator, rawId);
  const end = endRaw ? historyDate('end', endRaw) : now;
  const start = startRaw ? historyDate('start', startRaw) : new Date(end.getTime() - 90 * DAY_MS);
  if (end.getTime() <= start.getTime()) throw errors.invalidInput("'end' must be after 'start'.");
  const days = (end.getTime() - start.getTime()) / DAY_MS;
  if (days > HISTORY_MAX_DAYS)
    throw errors.invalidInput(
      `The range is ${Math.ceil(days)} days long; at most ${HISTORY_MAX_DAYS} days may be asked for at once.`,
    );
  const daily = days > HOURLY_UP_TO_DAYS;
  // Samples are per hour: an hour that begins before `end` belongs to the range.
  const from = new Date(Math.floor(start.getTime() / HOUR_MS) * HOUR_MS);
  return {
    start: from,
    end,
    resolution: daily ? 'day' : 'hour',
    samples: await capacityHistory(db, cluster.id, from, end, daily),
  };
}

/**
 * A report of a million devices is some 150 MB of JSON, held as bytes, text and objects while it is
 * written: one at a time per process (see slots.ts).
 */
const reportSlots = new Slots(1);

/** Replaces a cluster's device report; `reportOf` reads the body only once the writer is allowed. */
export async function replaceReport(
  db: Db,
  acting: Acting,
  rawId: string | undefined,
  reportOf: () => Promise<DeviceReport>,
): Promise<void> {
  const cluster = await findVisibleCluster(db, acting.operator, rawId);
  requireWriterOn(acting.operator, cluster.id);
  await reportSlots.run(async () => writeReport(db, acting, cluster, await reportOf()));
}

async function writeReport(db: Db, acting: Acting, cluster: Cluster, report: DeviceReport): Promise<void> {
  // Each device's policies as indexes, once: the statistics and the stored rows both use them.
  const indexOf = new Map(report.policies.map((p) => [p.name, p.index]));
  const policyIndexes = report.devices.map((d) => d.policies.map((n) => indexOf.get(n)!));
  const stats = computeCapacity(
    report.policies,
    report.devices.map((d, i) => ({
      policyIndexes: policyIndexes[i]!,
      usedBytes: d.usedBytes,
      freeBytes: d.availBytes,
    })),
  );
  await withDbErrors(() =>
    db.transaction(async (trx) => {
      // Holding the cluster's row serialises reports for one cluster, so "before" is exact and two
      // reports never interleave their deletes and inserts.
      if (!(await getCluster(trx, cluster.id, true))) throw errors.notFound(`No cluster with id '${cluster.id}'.`);
      const before = await deviceReportSummary(trx, cluster.id);
      await replaceDeviceReport(trx, cluster.id, report, policyIndexes, stats);
      await recordCollectorRun(trx, cluster.id, 'capacity');
      // Counts only: a report may list a million devices.
      const after = { device_count: report.devices.length, policy_count: report.policies.length };
      const target = { ...clusterTarget(cluster), uri: `${API_ROOT}/clusters/${cluster.id}/devices/` };
      await recordAudit(trx, auditActorOf(acting), { action: 'replace_devices', target, before: { ...before }, after });
    }),
  );
}
