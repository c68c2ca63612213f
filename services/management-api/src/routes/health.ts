import { Router, type RequestHandler } from 'express';
import { errors, validateHealthRound, validateHealthThresholds } from '@cairn/domain';
import type { Db } from '../db/database';
import { actingOf } from '../http/acting';
import { parseBody } from '../http/body';
import { queryPairs } from '../http/filters';
import { send } from '../http/respond';
import { resourceRoute } from '../http/routing';
import { clusterHealthJson, findingJson } from '../resources/health';
import { healthFindingsResource, healthThresholdsResource } from './health-resources';
import { API_ROOT } from '../resources/uris';
import * as health from '../services/health';
import { sendList } from './list';

/** A round of 10,000 nodes with a few KB of recon each; the route alone takes this much. */
export const HEALTH_ROUND_LIMIT = '100mb';

function openParam(raw: string | undefined): boolean | undefined {
  if (raw === undefined) return undefined;
  if (['true', 'True', '1'].includes(raw)) return true;
  if (['false', 'False', '0'].includes(raw)) return false;
  throw errors.invalidInput(`'open' must be true or false, not '${raw.slice(0, 20).replace(/[<>&"']/g, '')}'.`);
}

export function healthRouter(db: Db, auth: RequestHandler, now: () => Date = () => new Date()): Router {
  const router = Router();

  resourceRoute(router, '/clusters/:id/health/rounds/', auth, {
    POST: async (req, res) => {
      const result = await health.recordRound(
        db,
        actingOf(req, res),
        req.params.id,
        async () => validateHealthRound(await parseBody(req, undefined, HEALTH_ROUND_LIMIT), now()),
        now,
      );
      send(req, res, 201, { id: Number(result.id), open_findings: result.openFindings });
    },
  });

  resourceRoute(router, '/clusters/:id/health/', auth, {
    GET: async (req, res) =>
      send(req, res, 200, clusterHealthJson(await health.current(db, actingOf(req, res), req.params.id))),
  });

  resourceRoute(router, '/clusters/:id/health/history/', auth, {
    GET: async (req, res) => {
      const open = openParam(
        queryPairs(req.originalUrl)
          .filter(([k]) => k === 'open')
          .pop()?.[1],
      );
      await sendList(
        req,
        res,
        healthFindingsResource,
        `${API_ROOT}/clusters/${req.params.id}/health/history/`,
        (q) => health.history(db, actingOf(req, res), req.params.id, q, open),
        findingJson,
        undefined,
        ['open'],
      );
    },
  });

  resourceRoute(router, '/clusters/:id/health/thresholds/', auth, {
    GET: async (req, res) =>
      send(req, res, 200, { ...(await health.thresholds(db, actingOf(req, res), req.params.id)) }),
    PUT: async (req, res) => {
      const after = await health.replaceThresholds(db, actingOf(req, res), req.params.id, async () =>
        validateHealthThresholds(await parseBody(req, healthThresholdsResource)),
      );
      send(req, res, 200, { ...after });
    },
  });

  return router;
}
