import { Router, type RequestHandler } from 'express';
import type { Db } from '../db/database';
import { actingOf } from '../http/acting';
import { NUMBER_LOOKUPS, STRING_LOOKUPS, type Lookup, type ResourceDef } from '../http/resource';
import { API_ROOT, INT4_MAX, INT8_MAX } from '../resources/uris';
import { send } from '../http/respond';
import { resourceRoute } from '../http/routing';
import type { AuditRecord } from '../services/audit';
import * as audit from '../services/audit';
import { asResource } from '../resources/marks';
import { sendList } from './list';

const KEYWORD: readonly Lookup[] = ['exact', 'in'];
const TIME_LOOKUPS: readonly Lookup[] = ['exact', 'gt', 'gte', 'lt', 'lte'];

/** Read-only: the trail is written only as a side effect of the writes it records. */
export const auditResource: ResourceDef = {
  name: 'audit',
  alias: 'a',
  listMethods: ['GET'],
  detailMethods: ['GET'],
  fields: {
    id: {
      type: 'string',
      help: 'Unicode string data. Ex: "12" (a bigint id, always a string)',
      readonly: true,
      unique: true,
      column: 'id',
      filtering: NUMBER_LOOKUPS,
      max: INT8_MAX,
      ordering: true,
    },
    time: {
      type: 'datetime',
      help: 'When the change was committed (its transaction), ISO 8601 UTC. Filters take ISO 8601 dates or date-times.',
      readonly: true,
      column: 'occurred_at',
      filtering: TIME_LOOKUPS,
      ordering: true,
    },
    operator: {
      type: 'string',
      help: "Name of the operator who made the change; 'cli' or 'bootstrap' for changes made by a command on the host.",
      readonly: true,
      column: 'operator_name',
      filtering: STRING_LOOKUPS,
      ordering: true,
    },
    operator_id: {
      type: 'integer',
      help: 'Id of that operator; null for cli and bootstrap. Kept after the operator is deleted.',
      readonly: true,
      nullable: true,
      column: 'operator_id',
      filtering: NUMBER_LOOKUPS,
      max: INT4_MAX,
      ordering: true,
    },
    action: {
      type: 'string',
      help: 'create, update, delete, add_key, delete_key, replace_devices, record_utilization, sign_in, sign_in_failed, sign_out or step_up (console sessions, of operators and of storage users, whose entries name `storage user <name>`; step_up: the operator re-entered an API key), backup, repair_quota_drift (the quota reconciler put back quotas changed in Swift: before is what Swift had), push_ring (a new ring version became current) or rollback_ring (the version before the current one became current again).',
      readonly: true,
      column: 'action',
      filtering: KEYWORD,
      ordering: true,
    },
    target_type: {
      type: 'string',
      help: 'Type of the changed resource: users, clusters, operators, s3_credentials, sessions or rings (versions of a cluster ring); backup for a backup of the embedded database.',
      readonly: true,
      column: 'target_type',
      filtering: KEYWORD,
      ordering: true,
    },
    target_id: {
      type: 'string',
      help: 'Id of the changed resource.',
      readonly: true,
      column: 'target_id',
      filtering: KEYWORD,
    },
    target_name: {
      type: 'string',
      help: 'Its name when changed: user name, cluster name or operator name.',
      readonly: true,
      column: 'target_name',
      filtering: STRING_LOOKUPS,
      ordering: true,
    },
    target_uri: {
      type: 'string',
      help: 'Its resource URI (for device reports, the devices list of the cluster; for keys, the key).',
      readonly: true,
      column: 'target_uri',
      filtering: ['exact', 'in', 'startswith'],
    },
    before: {
      type: 'dict',
      help: 'The resource before the change (null for a create), without secrets; device reports give counts.',
      readonly: true,
      nullable: true,
    },
    after: {
      type: 'dict',
      help: 'The resource after the change (null for a delete), without secrets; device reports give counts.',
      readonly: true,
      nullable: true,
    },
    request_id: {
      type: 'string',
      help: 'X-Request-Id of the request that made the change; null outside HTTP.',
      readonly: true,
      nullable: true,
      column: 'request_id',
      filtering: KEYWORD,
    },
    resource_uri: { type: 'string', help: 'URI of this entry.', readonly: true },
  },
};

const LIST = `${API_ROOT}/audit/`;
export const auditUri = (id: string): string => `${API_ROOT}/audit/${id}/`;

export const auditJson = (a: AuditRecord) =>
  asResource({
    action: a.action,
    after: a.after,
    before: a.before,
    id: a.id,
    operator: a.operatorName,
    operator_id: a.operatorId,
    request_id: a.requestId,
    resource_uri: auditUri(a.id),
    target_id: a.targetId,
    target_name: a.targetName,
    target_type: a.targetType,
    target_uri: a.targetUri,
    time: a.time.toISOString(),
  });

/** Admins with access to every cluster only: the trail shows every cluster and every operator. */
export function auditRouter(db: Db, auth: RequestHandler): Router {
  const router = Router();

  resourceRoute(router, '/audit/', auth, {
    GET: async (req, res) => {
      const acting = actingOf(req, res);
      audit.authorize(acting); // before the query string is parsed: a reader gets 403 whatever it sends
      await sendList(req, res, auditResource, LIST, (q) => audit.list(db, acting, q), auditJson);
    },
  });

  resourceRoute(router, '/audit/:id/', auth, {
    GET: async (req, res) => send(req, res, 200, auditJson(await audit.show(db, actingOf(req, res), req.params.id))),
  });

  return router;
}
