import { errors, escapeHtml, generateApiKey, hashApiKey, type Operator } from '@cairn/domain';
import type { Db } from '../db/database';
import { clusterIdFromRef, operatorUri } from '../http/uris';
import { CLI_ACTOR, recordAudit, type AuditActor, type AuditTarget } from '../repositories/audit';
import { getCluster } from '../repositories/clusters';
import { addApiKey, createOperator } from '../repositories/operators';
import { apiKeyJson, operatorJson } from '../routes/representations';

export const operatorTarget = (o: Pick<Operator, 'id' | 'name'>): AuditTarget => ({ type: 'operators', id: o.id, name: o.name, uri: operatorUri(o.id) });

export async function resolveClusterRefs(db: Db, refs: Array<number | string>): Promise<number[]> {
  const ids: number[] = [];
  for (const ref of refs) {
    const id = clusterIdFromRef(ref);
    if (id === null || !(await getCluster(db, id))) {
      throw errors.invalidInput(`Could not find the provided clusters object via resource URI '${escapeHtml(String(ref))}'.`);
    }
    ids.push(id);
  }
  return ids;
}

/**
 * Create an operator with its first API key, inside the caller's transaction, and record it in the
 * audit trail as done by `actor` (the `cairn operator create` command when not given).
 */
export async function createOperatorWithKey(
  db: Db,
  input: { name: string; role: 'admin' | 'reader'; clusterIds: number[]; key?: string },
  actor: AuditActor = CLI_ACTOR,
) {
  const operator = await createOperator(db, input);
  const key = input.key ?? generateApiKey();
  const keyInfo = await addApiKey(db, operator.id, hashApiKey(key));
  await recordAudit(db, actor, {
    action: 'create',
    target: operatorTarget(operator),
    before: null,
    after: { ...operatorJson(operator), api_keys: [apiKeyJson(keyInfo)] },
  });
  return { operator, key, keyInfo };
}
