import { DEFAULT_RETENTION } from '@cairn/domain';
import type { Deps } from '../deps';
import { DEFAULT_AUDIT_RETENTION, pruneAudit, type AuditPruneReport } from '../repositories/audit-retention';
import { maintainUtilization, type MaintenanceReport } from '../repositories/utilization-partitions';
import { deleteEndedConsoleSessions } from '../repositories/console-sessions';
import { DEFAULT_CONSOLE_SESSIONS } from './console-sessions';

export interface MaintenancePass {
  /** Absent when that task failed (its error was logged). */
  utilization?: MaintenanceReport;
  audit?: AuditPruneReport;
  /** Console sessions deleted because they had ended. */
  consoleSessions?: number;
}

/**
 * One maintenance pass of a replica (every replica runs them; each task is safe to run at once
 * from several): utilization partitions, rollups and retention, then the audit trail's retention, then ended console sessions.
 * Each task stands alone: a failure of one is logged and the other still runs, and the next pass
 * tries again. Never rejects.
 */
export async function runMaintenance(deps: Pick<Deps, 'db' | 'log' | 'utilization' | 'auditRetention' | 'consoleSessions'>, now: Date): Promise<MaintenancePass> {
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
    // Ended sessions are refused anyway; deleting them only keeps the table small.
    pass.consoleSessions = await deleteEndedConsoleSessions(db, (deps.consoleSessions ?? DEFAULT_CONSOLE_SESSIONS).idleSeconds);
  } catch (err) {
    log.warn({ err }, 'deleting ended console sessions failed; retried at the next run');
  }
  return pass;
}
