import { Router, type RequestHandler } from 'express';
import { errors } from '@cairn/domain';
import { CAIRN_VERSION } from '@cairn/runtime';
import { schemaDocument, type ResourceDef } from '../http/resource';
import { send } from '../http/respond';
import { resourceRoute } from '../http/routing';
import { API_ROOT } from '../resources/uris';

/**
 * Tastypie discovery: `/api/v1/` lists resources and the running `version` (no key needed); `/<resource>/schema/`
 * describes
 * one. `/api/v1/openapi.json` serves the document `openapi` builds without a key, like
 * `/api/v1/`: it describes only the API's shape, which is public anyway, and tools that read it
 * (Swagger UI, client generators) fetch it without credentials. It is built at its first request
 * and kept: building it describes every joi schema, a large share of the CPU of a start, and
 * nothing else needs it.
 */
export function discoveryRouter(resources: ResourceDef[], auth: RequestHandler, openapi: () => object): Router {
  const router = Router();
  const noAuth: RequestHandler = (_req, _res, next) => next();
  let openapiText: string | undefined;

  resourceRoute(router, '/', noAuth, {
    GET: async (req, res) => {
      // `version` beside the resources: what a client (and `cairn`) is talking to.
      const index: Record<string, unknown> = { version: CAIRN_VERSION };
      for (const r of resources) {
        index[r.name] = { list_endpoint: `${API_ROOT}/${r.name}/`, schema: `${API_ROOT}/${r.name}/schema/` };
      }
      send(req, res, 200, index);
    },
  });

  // Always JSON: OpenAPI has no XML form.
  resourceRoute(router, '/openapi.json', noAuth, {
    GET: async (_req, res) => {
      openapiText ??= JSON.stringify(openapi());
      res.status(200).type('application/json').send(openapiText);
    },
  });

  resourceRoute(router, '/:resource/schema/', auth, {
    GET: async (req, res) => {
      const resource = resources.find((r) => r.name === req.params.resource);
      if (!resource) throw errors.notFound(`No resource named '${String(req.params.resource).replace(/[<>&]/g, '')}'.`);
      send(req, res, 200, schemaDocument(resource));
    },
  });

  return router;
}
