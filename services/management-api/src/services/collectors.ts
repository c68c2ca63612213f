import type { Knex } from 'knex';
import Joi from 'joi';
import {
  apiKeyMatches,
  apiKeySchema,
  errors,
  NO_QUOTAS,
  escapeHtml,
  hashApiKey,
  newUsernameSchema,
  operatorNameSchema,
  passwordSchema,
  validate,
  verifyPassword,
} from '@cairn/domain';
import { recordAudit } from '../repositories/audit';
import { findClusterByName } from '../repositories/clusters';
import { addApiKey, findOperatorCredentials, updateOperator } from '../repositories/operators';
import { createStorageUser, findStorageUserByName, updateStorageUser } from '../repositories/storage-users';
import { apiKeyUri } from '../resources/uris';
import { apiKeyJson, operatorJson, userJson } from '../resources/representations';
import { SYSTEM_ACTING, auditActorOf, type Acting } from './context';
import { authorize, createOperatorWithKey, operatorTarget } from './operators';
import { userTarget } from './users';

/**
 * What a deployment's storage collector (`cairn utilization collect`) runs with, declared by the
 * migrate job (`--collector`) from secrets the deployment generated: an **admin operator limited
 * to the cluster**, holding the collector's API key, and a **superuser storage user** of the
 * cluster, whose token HEADs every account. The same strings are what the collector is given
 * (CAIRN_API_KEY, CAIRN_UTILIZATION_PASSWORD), so nobody has to create them by hand or copy a key.
 */
export interface CollectorSpec {
  cluster: string;
  /** `<operator>:<key>`, exactly as the collector's CAIRN_API_KEY. */
  apiKey: string;
  user: string;
  password: string;
}

const specSchema = Joi.object({
  cluster: Joi.string().required(),
  apiKey: Joi.string()
    .required()
    .custom((value: string) => {
      const colon = value.indexOf(':');
      if (colon <= 0) throw new Error('must be "<operator>:<key>"');
      validate(operatorNameSchema, value.slice(0, colon));
      validate(apiKeySchema, value.slice(colon + 1));
      return value;
    })
    .messages({
      'any.custom':
        'The collector\'s API key must be "<operator>:<key>" with a valid operator name and a key of at least 32 printable characters.',
    }),
  user: newUsernameSchema.required(),
  password: passwordSchema.required(),
});

export type CollectorOutcome = {
  operator: 'created' | 'updated' | 'unchanged';
  user: 'created' | 'updated' | 'unchanged';
};

/**
 * Creates what is missing and brings what exists to the declaration: the operator to admin of
 * this cluster only, with the key added when it lacks it (other keys stay: an operator may be
 * rotating); the user to an enabled superuser with this password. Each change is one audit record
 * by `acting` (the migrate job); secrets are never recorded. Serialised per operator and user by row locks, so two
 * migrate jobs at once end with one operator and one user.
 */
export async function ensureCollector(
  db: Knex,
  rawSpec: CollectorSpec,
  hashPassword: (password: string) => Promise<string>,
  acting: Acting = SYSTEM_ACTING.migrate,
): Promise<CollectorOutcome> {
  authorize(acting);
  const actor = auditActorOf(acting);
  const spec = validate<CollectorSpec>(specSchema, rawSpec);
  const colon = spec.apiKey.indexOf(':');
  const operatorName = spec.apiKey.slice(0, colon);
  const key = spec.apiKey.slice(colon + 1);
  const cluster = await findClusterByName(db, spec.cluster);
  if (!cluster)
    throw errors.invalidInput(
      `--collector: no cluster named '${escapeHtml(spec.cluster)}' (declare it with --cluster).`,
    );
  // Hashed outside the transaction: scrypt takes a while and needs no lock.
  const existingUser = await findStorageUserByName(db, cluster.id, spec.user);
  const passwordMatches = existingUser !== null && (await verifyPassword(spec.password, existingUser.passwordHash));
  const passwordHash = passwordMatches ? undefined : await hashPassword(spec.password);

  return db.transaction(async (trx) => {
    const outcome: CollectorOutcome = { operator: 'unchanged', user: 'unchanged' };
    const found = await findOperatorCredentials(trx, operatorName);
    if (!found) {
      await createOperatorWithKey(trx, { name: operatorName, role: 'admin', clusterIds: [cluster.id], key }, acting);
      outcome.operator = 'created';
    } else {
      const { operator } = found;
      if (operator.role !== 'admin' || operator.clusterIds.length !== 1 || operator.clusterIds[0] !== cluster.id) {
        const after = await updateOperator(trx, operator.id, { role: 'admin', clusterIds: [cluster.id] });
        await recordAudit(trx, actor, {
          action: 'update',
          target: operatorTarget(operator),
          before: operatorJson(operator),
          after: after && operatorJson(after),
        });
        outcome.operator = 'updated';
      }
      if (!found.keyHashes.some((h) => apiKeyMatches(key, h))) {
        const added = await addApiKey(trx, operator.id, hashApiKey(key));
        await recordAudit(trx, actor, {
          action: 'add_key',
          target: { ...operatorTarget(operator), uri: apiKeyUri(operator.id, added.id) },
          before: null,
          after: apiKeyJson(added),
        });
        outcome.operator = 'updated';
      }
    }

    const user = await findStorageUserByName(trx, cluster.id, spec.user, true);
    if (!user) {
      const created = await createStorageUser(
        trx,
        {
          clusterId: cluster.id,
          username: spec.user,
          passwordHash: passwordHash ?? (await hashPassword(spec.password)),
          isSuperuser: true,
          enabled: true,
          quotas: NO_QUOTAS,
        },
        cluster.name,
      );
      await recordAudit(trx, actor, {
        action: 'create',
        target: userTarget(created),
        before: null,
        after: userJson(created),
      });
      outcome.user = 'created';
    } else {
      // The password read before the lock may have changed since: check again against the locked row.
      const samePassword =
        user.passwordHash === existingUser?.passwordHash
          ? passwordMatches
          : await verifyPassword(spec.password, user.passwordHash);
      const newHash = samePassword ? undefined : (passwordHash ?? (await hashPassword(spec.password)));
      if (newHash !== undefined || !user.isSuperuser || !user.enabled) {
        const after = await updateStorageUser(trx, user.id, {
          passwordHash: newHash,
          isSuperuser: true,
          enabled: true,
        });
        const changed = newHash === undefined ? {} : { password_changed: true };
        await recordAudit(trx, actor, {
          action: 'update',
          target: userTarget(user),
          before: userJson(user),
          after: after && { ...userJson(after), ...changed },
        });
        outcome.user = 'updated';
      }
    }
    return outcome;
  });
}
