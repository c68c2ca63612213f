import { requestIdOf } from '@cairn/runtime';
import type { Request, Response } from 'express';
import type { Acting } from '../services/context';
import { liveSessionOf, operatorOf } from './auth';

/**
 * Who a request acts as, for the services: the authenticated operator and the request id the request-logging middleware
 * assigned.
 */
export function actingOf(req: Request, res: Response): Acting {
  const session = liveSessionOf(res);
  return {
    operator: operatorOf(res),
    requestId: requestIdOf(req) ?? null,
    ...(session ? { consoleSession: { steppedUp: session.steppedUp } } : {}),
  };
}
