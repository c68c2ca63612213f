import { Router, type Request, type RequestHandler } from 'express';
import { errors } from '@cairn/domain';
import type { Db } from '../db/database';
import { actingOf } from '../http/acting';
import { binaryBody } from '../http/body';
import { queryPairs } from '../http/filters';
import { EXACT_ONLY, NUMBER_LOOKUPS, STRING_LOOKUPS, type ResourceDef } from '../http/resource';
import { send } from '../http/respond';
import { resourceRoute } from '../http/routing';
import { API_ROOT, INT4_MAX } from '../resources/uris';
import * as rings from '../services/rings';
import { RING_UPLOAD_LIMIT, ringFileUri, type ListedRingVersion, type RingOrigin } from '../services/rings';
import { sendList } from './list';

export const ringsResource: ResourceDef = {
  name: 'rings',
  alias: 'r',
  listMethods: ['GET'],
  detailMethods: [],
  fields: {
    id: { type: 'string', help: 'Id of this version.', readonly: true },
    ring: {
      type: 'string',
      help: "Ring name: 'account', 'container', 'object' or 'object-<n>' (the file is <ring>.ring.gz).",
      readonly: true,
      column: 'ring',
      filtering: STRING_LOOKUPS,
      ordering: true,
    },
    version: {
      type: 'integer',
      help: 'Version number, from 1 per cluster and ring.',
      readonly: true,
      column: 'version',
      filtering: NUMBER_LOOKUPS,
      max: INT4_MAX,
      ordering: true,
    },
    current: {
      type: 'boolean',
      help: 'Whether this is the version nodes pull (one per ring).',
      readonly: true,
      column: 'current',
      filtering: EXACT_ONLY,
    },
    md5: {
      type: 'string',
      help: 'MD5 (hex) of the .ring.gz file; its ETag.',
      readonly: true,
      column: 'md5',
      filtering: EXACT_ONLY,
    },
    size_bytes: { type: 'integer', help: 'Size of the .ring.gz file.', readonly: true },
    part_power: { type: 'integer', help: 'The ring has 2^part_power partitions.', readonly: true },
    replicas: { type: 'float', help: 'Replica count; may be fractional (2.5).', readonly: true },
    device_count: { type: 'integer', help: 'Devices in the ring.', readonly: true },
    devices: {
      type: 'list',
      help: "The ring's devices as its header lists them ({id, region, zone, ip, port, device, weight}), for the current version; null for the others (reading them means reading the ring file).",
      readonly: true,
      nullable: true,
      itemFields: {
        id: 'integer',
        region: 'integer',
        zone: 'integer',
        ip: 'string',
        port: 'integer',
        device: 'string',
        weight: 'float',
      },
    },
    plan_id: {
      type: 'string',
      help: 'The plan the ring was applied from, when given.',
      readonly: true,
      nullable: true,
    },
    plan_step: { type: 'integer', help: "That plan's step, when given.", readonly: true, nullable: true },
    plan: { type: 'dict', help: 'The plan JSON, when given.', readonly: true, nullable: true },
    created_by: { type: 'string', help: 'The operator (or host command) who pushed it.', readonly: true },
    created_at: {
      type: 'datetime',
      help: 'When it was pushed.',
      readonly: true,
      column: 'created_at',
      filtering: NUMBER_LOOKUPS,
      ordering: true,
    },
    ring_file: { type: 'string', help: 'Where the current version of this ring is served.', readonly: true },
  },
};

export const ringVersionJson = (v: ListedRingVersion) => ({
  created_at: v.createdAt.toISOString(),
  created_by: v.createdBy,
  current: v.current,
  device_count: v.deviceCount,
  devices: v.devices,
  id: v.id,
  md5: v.md5,
  part_power: v.partPower,
  plan: v.plan,
  plan_id: v.planId,
  plan_step: v.planStep,
  replicas: v.replicas,
  ring: v.ring,
  ring_file: ringFileUri(v.clusterId, v.ring),
  size_bytes: v.sizeBytes,
  version: v.version,
});

/** Node's limit on all headers together is 16 KiB; a plan sent in a header must fit in it. */
const PLAN_HEADER_LIMIT = 12 * 1024;

/**
 * Where a pushed ring came from: `X-Cairn-Plan-Id` and `X-Cairn-Plan-Step` (or `?plan_id=&plan_step=`),
 * and the plan JSON itself, base64-encoded, in `X-Cairn-Plan`.
 */
function originOf(req: Request): RingOrigin {
  const params = queryPairs(req.originalUrl);
  const last = (key: string) => params.filter(([k]) => k === key).pop()?.[1];
  const planId = req.get('x-cairn-plan-id') ?? last('plan_id') ?? null;
  if (planId !== null && !/^[\x21-\x7e]{1,255}$/.test(planId))
    throw errors.invalidInput('The plan id must be 1 to 255 printable characters without spaces.');
  const stepText = req.get('x-cairn-plan-step') ?? last('plan_step') ?? null;
  if (stepText !== null && !/^\d{1,9}$/.test(stepText))
    throw errors.invalidInput(`The plan step must be a whole number from 0, not '${stepText.slice(0, 40)}'.`);
  const planText = req.get('x-cairn-plan');
  let plan: unknown = null;
  if (planText !== undefined) {
    if (planText.length > PLAN_HEADER_LIMIT)
      throw errors.invalidInput(`X-Cairn-Plan holds more than ${PLAN_HEADER_LIMIT} characters.`);
    try {
      plan = JSON.parse(Buffer.from(planText, 'base64').toString('utf8')) as unknown;
    } catch {
      plan = undefined;
    }
    if (plan === null || typeof plan !== 'object' || Array.isArray(plan))
      throw errors.invalidInput('X-Cairn-Plan must be a JSON object, base64-encoded.');
  }
  return { planId, planStep: stepText === null ? null : Number(stepText), plan };
}

/** The entity tags of an If-None-Match header (`"a", W/"b"`), or '*'. */
function notModified(header: string | undefined, md5: string): boolean {
  if (!header) return false;
  return header
    .split(',')
    .map((t) => t.trim().replace(/^W\//, ''))
    .some((t) => t === '*' || t === `"${md5}"`);
}

export function ringsRouter(db: Db, auth: RequestHandler): Router {
  const router = Router();

  resourceRoute(router, '/clusters/:id/rings/', auth, {
    GET: async (req, res) => {
      const cluster = await rings.visibleCluster(db, actingOf(req, res), req.params.id);
      await sendList(
        req,
        res,
        ringsResource,
        `${API_ROOT}/clusters/${cluster.id}/rings/`,
        (q) => rings.list(db, cluster, q),
        ringVersionJson,
      );
    },
  });

  // Before /:ring/: a name ending in .ring.gz is the file.
  resourceRoute(router, '/clusters/:id/rings/:ring.ring.gz', auth, {
    GET: async (req, res) => {
      const file = await rings.currentFile(db, actingOf(req, res), req.params.id, req.params.ring);
      const etag = `"${file.md5}"`;
      res.setHeader('ETag', etag);
      // Nodes ask every few minutes: they must revalidate each time, never use a kept copy unasked.
      res.setHeader('Cache-Control', 'no-cache');
      res.setHeader('X-Cairn-Ring-Version', String(file.version));
      if (notModified(req.get('if-none-match'), file.md5)) {
        res.status(304).end();
        return;
      }
      res.statusCode = 200;
      res.setHeader('Content-Type', 'application/octet-stream');
      res.setHeader('Content-Length', file.ringGz.length);
      res.end(file.ringGz);
    },
  });

  resourceRoute(router, '/clusters/:id/rings/:ring/', auth, {
    POST: async (req, res) => {
      const outcome = await rings.push(db, actingOf(req, res), req.params.id, req.params.ring, async () => ({
        origin: originOf(req),
        bytes: await binaryBody(req, RING_UPLOAD_LIMIT),
      }));
      if (outcome.created) res.setHeader('Location', ringFileUri(outcome.version.clusterId, outcome.version.ring));
      send(req, res, outcome.created ? 201 : 200, ringVersionJson(outcome.version));
    },
  });

  resourceRoute(router, '/clusters/:id/rings/:ring/rollback/', auth, {
    POST: async (req, res) => {
      const version = await rings.rollback(db, actingOf(req, res), req.params.id, req.params.ring);
      send(req, res, 200, ringVersionJson(version));
    },
  });

  return router;
}
