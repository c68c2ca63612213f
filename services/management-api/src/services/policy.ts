import { CairnError, errors, type Operator } from '@cairn/domain';
import type { Acting } from './context';

/**
 * Who may do what. Services call these before they touch the database; the HTTP layer only
 * authenticates. An operator with an empty `clusterIds` may see every cluster.
 */
const isRestricted = (op: Operator): boolean => op.clusterIds.length > 0;

/** Cluster ids the operator may see, or undefined for all. */
export const visibleClusters = (op: Operator): number[] | undefined => (isRestricted(op) ? op.clusterIds : undefined);

export const canSeeCluster = (op: Operator, clusterId: number): boolean =>
  !isRestricted(op) || op.clusterIds.includes(clusterId);

export function requireWriter(op: Operator): void {
  if (op.role !== 'admin') throw errors.forbidden(`Operator '${op.name}' has the reader role and may only read.`);
}

export function requireWriterOn(op: Operator, clusterId: number): void {
  requireWriter(op);
  if (!canSeeCluster(op, clusterId))
    throw errors.forbidden(`Operator '${op.name}' may not change cluster ${clusterId}.`);
}

/** Managing clusters and operators needs an admin who is not limited to some clusters. */
export function requireGlobalAdmin(op: Operator): void {
  requireWriter(op);
  if (isRestricted(op))
    throw errors.forbidden(
      `Operator '${op.name}' is limited to some clusters and may not manage clusters or operators.`,
    );
}

/**
 * Reading operators or the audit trail shows every cluster and every operator, so it is for admins
 * with access to every cluster only; the refusal says so, rather than that a reader may only read.
 */
export function requireGlobalAdminToRead(op: Operator, what: string): void {
  if (op.role === 'admin' && !isRestricted(op)) return;
  const who = op.role === 'admin' ? 'is limited to some clusters' : 'is a reader';
  throw errors.forbidden(`Operator '${op.name}' ${who}; only an admin with access to every cluster may read ${what}.`);
}

/** The `code` of the refusal below, in the error body: the console asks for the key and retries. */
export const STEP_UP_REQUIRED = 'step_up_required';

export const STEP_UP_MESSAGE =
  'Re-enter your API key to confirm this action (POST /api/v1/session/step_up/ with {"api_key": "…"}); the confirmation lasts a few minutes.';

/**
 * Minting lasting credentials (an API key, an operator, more power for one, a backup of every
 * secret) from a console session needs a fresh step-up: a script that got into the page holds the
 * cookie's power but not the key. Requests made with an API key are not concerned.
 */
export function requireStepUp(acting: Acting): void {
  if (acting.consoleSession && !acting.consoleSession.steppedUp)
    throw new CairnError('FORBIDDEN', STEP_UP_MESSAGE, { code: STEP_UP_REQUIRED });
}
