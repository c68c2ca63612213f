import type { Knex } from 'knex';
import { DAY_MS, type UtilizationRetention } from '@cairn/domain';
import type { Logger } from 'pino';
import type { RollupMetrics } from './http/metrics';
import { maintainUtilization, type MaintenanceReport } from './repositories/utilization-partitions';

/**
 * One utilization maintenance pass as a replica runs it: failures are logged and counted, never
 * thrown (the next pass retries them). Each failed rollup names its cluster and day; the backlog
 * gauge says, per cluster, how far behind its rollups are.
 */
export async function runUtilizationMaintenance(db: Knex, retention: UtilizationRetention, now: Date, log: Logger, metrics: RollupMetrics): Promise<MaintenanceReport | null> {
  let report: MaintenanceReport;
  try {
    report = await maintainUtilization(db, retention, now);
  } catch (err) {
    metrics.passFailures.inc();
    log.warn({ err }, 'utilization maintenance failed; retried at the next run');
    return null;
  }
  const today = Math.floor(now.getTime() / DAY_MS) * DAY_MS;
  for (const f of report.failed) {
    metrics.failures.inc({ cluster: String(f.clusterId) });
    log.warn({ err: f.error, cluster: f.clusterId, day: f.day }, 'utilization rollup failed; retried at the next run');
  }
  for (const [cluster, oldest] of report.backlog) metrics.backlogDays.set({ cluster: String(cluster) }, oldest === null ? 0 : Math.round((today - oldest) / DAY_MS));
  if (report.kept.length) log.warn({ kept: report.kept }, 'utilization partitions past the retention kept: a day of theirs is not rolled up yet');
  if (report.dropped.length || report.created) log.info({ created: report.created, dropped: report.dropped }, 'utilization maintenance');
  return report;
}
