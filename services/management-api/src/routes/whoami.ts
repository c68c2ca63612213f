import { Router, type RequestHandler } from 'express';
import { operatorOf } from '../http/auth';
import { send } from '../http/respond';
import { resourceRoute } from '../http/routing';
import { operatorJson } from '../resources/representations';

/**
 * `GET /api/v1/whoami/`: the operator the key belongs to (name, role, cluster limits), for any
 * role. A client such as the console shows only the controls the API would accept.
 */
export function whoamiRouter(auth: RequestHandler): Router {
  const router = Router();
  resourceRoute(router, '/whoami/', auth, {
    GET: async (req, res) => send(req, res, 200, operatorJson(operatorOf(res))),
  });
  return router;
}
