import type { Operator } from '@cairn/domain';
import type { AuditActor } from '../repositories/audit';

/** Who is acting, and the request id the audit trail records (null outside HTTP). */
export interface Acting {
  operator: Operator;
  requestId: string | null;
}

export const auditActorOf = (acting: Acting): AuditActor => ({
  operatorId: acting.operator.id,
  operatorName: acting.operator.name,
  requestId: acting.requestId,
});
