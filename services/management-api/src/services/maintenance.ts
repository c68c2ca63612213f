import { DEFAULT_RETENTION } from '@cairn/domain';
import type { Deps } from '../deps';
import { DEFAULT_AUDIT_RETENTION, pruneAudit, type AuditPruneReport } from '../repositories/audit-retention';
import { maintainUtilization, type MaintenanceReport } from '../repositories/utilization-partitions';
import { beatHeartbeat, pruneChangeLog } from '../repositories/replication';

export interface MaintenancePass {
  /** Absent when that task failed (its error was logged). */
  utilization?: MaintenanceReport;
  audit?: AuditPruneReport;
  /** Change-log rows past their retention, deleted. */
  changeLog?: number;
}

/**
 * One maintenance pass of a replica (every replica runs them; each task is safe to run at once
 * from several): utilization partitions, rollups and retention, the audit trail's retention, then
 * the change log's.
 * Each task stands alone: a failure of one is logged and the other still runs, and the next pass
 * tries again. Never rejects.
 */
export async function runMaintenance(deps: Pick<Deps, 'db' | 'log' | 'utilization' | 'auditRetention'>, now: Date): Promise<MaintenancePass> {
  const { db, log } = deps;
  const pass: MaintenancePass = {};
  try {
    pass.utilization = await maintainUtilization(db, deps.utilization ?? DEFAULT_RETENTION, now);
    if (pass.utilization.dropped.length || pass.utilization.created) log.info(pass.utilization, 'utilization maintenance');
  } catch (err) {
    log.warn({ err }, 'utilization maintenance failed; retried at the next run');
  }
  try {
    pass.audit = await pruneAudit(db, deps.auditRetention ?? DEFAULT_AUDIT_RETENTION, now);
    if (pass.audit.operatorEntries || pass.audit.storageUserEntries) log.info(pass.audit, 'audit entries past their retention deleted');
  } catch (err) {
    log.warn({ err }, 'audit retention failed; retried at the next run');
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
      if (!failing) deps.log.warn({ err }, 'could not write the heartbeat; gateways on standbys will see their copy age');
      failing = true;
    }
  };
}
