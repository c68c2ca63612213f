import type { NextFunction, Request, RequestHandler, Response, Router } from 'express';
import { errors } from '@cairn/domain';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
type Handler = (req: Request<Record<string, string>>, res: Response) => Promise<void>;

/** One path of the API and the methods it takes (OPTIONS and HEAD aside). */
export interface RouteEntry {
  path: string;
  methods: Method[];
}

/** Every path each router was given through resourceRoute, in order. */
const registered = new WeakMap<Router, RouteEntry[]>();

/** The paths `router` serves (relative to where it is mounted). */
export const routesOf = (router: Router): RouteEntry[] => registered.get(router) ?? [];

const record = (router: Router, entry: RouteEntry): void => {
  const entries = registered.get(router);
  if (entries) entries.push(entry);
  else registered.set(router, [entry]);
};

/**
 * Registers a path with its handlers. As tastypie does, the method is checked before
 * authentication (405 + Allow), and OPTIONS answers the allowed methods without a key.
 */
export function resourceRoute(
  router: Router,
  path: string,
  auth: RequestHandler,
  handlers: Partial<Record<Method, Handler>>,
): void {
  const allowed = Object.keys(handlers) as Method[];
  record(router, { path, methods: allowed });
  router.all(path, (req: Request, res: Response, next: NextFunction) => {
    if (req.method === 'OPTIONS') {
      res.set('Allow', allowed.join(',')).type('text/plain').status(200).send(allowed.join(','));
      return;
    }
    const method = (req.method === 'HEAD' ? 'GET' : req.method) as Method;
    const handler = handlers[method];
    if (!handler) throw errors.methodNotAllowed(allowed);
    // express 5 forwards rejected promises to the error handler.
    return auth(req, res, (err?: unknown) =>
      err ? next(err) : handler(req as Request<Record<string, string>>, res).catch(next),
    );
  });
}
