import type { Operator } from '@cairn/domain';
import { BOOTSTRAP_ACTOR, CLI_ACTOR, MIGRATE_ACTOR, type AuditActor } from '../repositories/audit';

/** Who is acting, and the request id the audit trail records (null outside HTTP). */
export interface Acting {
  operator: Operator;
  requestId: string | null;
  /** Set for a command run on the host instead of an operator over HTTP: what the audit trail records. */
  system?: AuditActor;
  /**
   * Set when the request was authenticated by a console session's cookie rather than an API key:
   * whether the operator re-entered an API key recently (step-up), which minting lasting
   * credentials needs (policy.ts requireStepUp).
   */
  consoleSession?: { steppedUp: boolean };
}

/**
 * A command run on the host with the database's own credentials: whoever runs it could change any
 * row directly, so it acts as an admin of every cluster. Its operator is not a row (id 0 is never
 * assigned); its audit records name the command with no operator id, like any other write's.
 */
function systemActing(actor: AuditActor): Acting {
  const operator: Operator = {
    id: 0,
    name: actor.operatorName,
    role: 'admin',
    clusterIds: [],
    createdAt: new Date(0),
    updatedAt: new Date(0),
  };
  return Object.freeze({ operator: Object.freeze(operator), requestId: null, system: actor });
}

/** First-start setup (bootstrap.ts), the migrate job (migrate.ts) and the `cairn` commands. */
export const SYSTEM_ACTING = Object.freeze({
  bootstrap: systemActing(BOOTSTRAP_ACTOR),
  migrate: systemActing(MIGRATE_ACTOR),
  cli: systemActing(CLI_ACTOR),
});

export const auditActorOf = (acting: Acting): AuditActor =>
  acting.system ?? {
    operatorId: acting.operator.id,
    operatorName: acting.operator.name,
    requestId: acting.requestId,
  };
