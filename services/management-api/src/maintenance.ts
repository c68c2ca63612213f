import { DAY_MS, DEFAULT_RETENTION, type UtilizationRetention } from '@cairn/domain';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Deps } from './deps';
import type { RollupMetrics } from './http/metrics';
import { DEFAULT_AUDIT_RETENTION, pruneAudit, type AuditPruneReport } from './repositories/audit-retention';
import { deleteEndedConsoleSessions } from './repositories/console-sessions';
import { deleteEndedStorageUserSessions } from './repositories/storage-user-sessions';
import { DEFAULT_CONSOLE_SESSIONS } from './services/console-sessions';
import { maintainUtilization, type MaintenanceReport } from './repositories/utilization-partitions';
import { beatHeartbeat, pruneChangeLog } from './repositories/replication';

export interface MaintenancePass {
  /** Absent when that task failed (its error was logged). */
  utilization?: MaintenanceReport;
  audit?: AuditPruneReport;
  /** Console sessions deleted because they had ended. */
  consoleSessions?: number;
  /** Change-log rows past their retention, deleted. */
  changeLog?: number;
}

/**
 * One maintenance pass of a replica (every replica runs them; each task is safe to run at once
 * from several): utilization partitions, rollups and retention, the audit trail's retention,
 * ended console sessions, and the change log's retention.
 * Each task stands alone: a failure of one is logged and the others still run, and the next pass
 * tries again. Never rejects.
 */
export async function runMaintenance(
  deps: Pick<Deps, 'db' | 'log' | 'utilization' | 'auditRetention' | 'consoleSessions' | 'metrics'>,
  now: Date,
): Promise<MaintenancePass> {
  const { db, log } = deps;
  const pass: MaintenancePass = {};
  pass.utilization =
    (await runUtilizationMaintenance(db, deps.utilization ?? DEFAULT_RETENTION, now, log, deps.metrics?.rollups)) ??
    undefined;
  try {
    pass.audit = await pruneAudit(db, deps.auditRetention ?? DEFAULT_AUDIT_RETENTION, now);
    if (pass.audit.operatorEntries || pass.audit.storageUserEntries)
      log.info(pass.audit, 'audit entries past their retention deleted');
  } catch (err) {
    log.warn({ err }, 'audit retention failed; retried at the next run');
  }
  try {
    // Ended sessions are refused anyway; deleting them only keeps the table small.
    const { idleSeconds } = deps.consoleSessions ?? DEFAULT_CONSOLE_SESSIONS;
    pass.consoleSessions =
      (await deleteEndedConsoleSessions(db, idleSeconds)) + (await deleteEndedStorageUserSessions(db, idleSeconds));
  } catch (err) {
    log.warn({ err }, 'deleting ended console sessions failed; retried at the next run');
  }
  try {
    pass.changeLog = await pruneChangeLog(db, now);
  } catch (err) {
    log.warn({ err }, 'change log retention failed; retried at the next run');
  }
  return pass;
}

/**
 * One heartbeat (every CAIRN_HEARTBEAT_MS): gateways on standbys measure how old their copy is by
 * it. Never rejects; a failure is logged once until a beat succeeds again, not every second.
 */
export function heartbeat(deps: Pick<Deps, 'db' | 'log'>): () => Promise<void> {
  let failing = false;
  return async () => {
    try {
      await beatHeartbeat(deps.db);
      if (failing) deps.log.info('heartbeat written again');
      failing = false;
    } catch (err) {
      if (!failing)
        deps.log.warn({ err }, 'could not write the heartbeat; gateways on standbys will see their copy age');
      failing = true;
    }
  };
}

/**
 * The utilization part of a pass: failures are logged and counted, never thrown (the next pass
 * retries them). Each failed rollup names its cluster and day; the backlog gauge says, per
 * cluster, how far behind its rollups are.
 */
export async function runUtilizationMaintenance(
  db: Knex,
  retention: UtilizationRetention,
  now: Date,
  log: Logger,
  metrics?: RollupMetrics,
): Promise<MaintenanceReport | null> {
  let report: MaintenanceReport;
  try {
    report = await maintainUtilization(db, retention, now);
  } catch (err) {
    metrics?.passFailures.inc();
    log.warn({ err }, 'utilization maintenance failed; retried at the next run');
    return null;
  }
  const today = Math.floor(now.getTime() / DAY_MS) * DAY_MS;
  for (const f of report.failed) {
    metrics?.failures.inc({ cluster: String(f.clusterId) });
    log.warn({ err: f.error, cluster: f.clusterId, day: f.day }, 'utilization rollup failed; retried at the next run');
  }
  for (const [cluster, oldest] of report.backlog)
    metrics?.backlogDays.set({ cluster: String(cluster) }, oldest === null ? 0 : Math.round((today - oldest) / DAY_MS));
  if (report.kept.length)
    log.warn(
      { kept: report.kept },
      'utilization partitions past the retention kept: a day of theirs is not rolled up yet',
    );
  if (report.dropped.length || report.created)
    log.info({ created: report.created, dropped: report.dropped }, 'utilization maintenance');
  return report;
}
