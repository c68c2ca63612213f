import { DEFAULT_RETENTION } from '@cairn/domain';
import type { Deps } from '../deps';
import { DEFAULT_AUDIT_RETENTION, pruneAudit, type AuditPruneReport } from '../repositories/audit-retention';
import { maintainUtilization, type MaintenanceReport } from '../repositories/utilization-partitions';

export interface MaintenancePass {
  /** Absent when that task failed (its error was logged). */
  utilization?: MaintenanceReport;
  audit?: AuditPruneReport;
}

/**
 * One maintenance pass of a replica (every replica runs them; each task is safe to run at once
 * from several): utilization partitions, rollups and retention, then the audit trail's retention.
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
  return pass;
}
