import { Router, type RequestHandler } from 'express';
import { apiKeyIdOf, operatorOf } from '../http/auth';
import { send } from '../http/respond';
import { resourceRoute } from '../http/routing';
import { asResource } from '../resources/marks';
import { operatorJson } from '../resources/representations';
import { apiKeyUri } from '../resources/uris';

/**
 * `GET /api/v1/whoami/`: the operator the key belongs to (name, role, cluster limits), for any
 * role, and `key_uri`, the resource of the key used (never the key). A client such as the console
 * shows only the controls the API would accept, and can warn before revoking the key it runs on.
 */
export function whoamiRouter(auth: RequestHandler): Router {
  const router = Router();
  resourceRoute(router, '/whoami/', auth, {
    GET: async (req, res) => {
      const operator = operatorOf(res);
      send(req, res, 200, asResource({ ...operatorJson(operator), key_uri: apiKeyUri(operator.id, apiKeyIdOf(res)) }));
    },
  });
  return router;
}
