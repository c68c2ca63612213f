import type { NextFunction, Request, Response } from 'express';
import { errors, type Operator } from '@cairn/domain';
import { operatorByApiKey, type CredentialCache } from '../services/authentication';

/**
 * `Authorization: ApiKey <operator>:<key>` (scheme word case-insensitive, split on the first ':');
 * the key is checked by services/authentication.ts.
 */
const HEADER = /^apikey[ \t]+([^:\s]+):(\S+)\s*$/i;

export interface AuthenticatedLocals {
  operator: Operator;
  /** Which of the operator's keys the request was made with (its id, never the key). */
  apiKeyId: string;
}

export const operatorOf = (res: Response): Operator => (res.locals as AuthenticatedLocals).operator;
export const apiKeyIdOf = (res: Response): string => (res.locals as AuthenticatedLocals).apiKeyId;

export function authenticate(credentials: CredentialCache) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const header = req.get('authorization');
    if (!header) {
      // Tastypie read `?username=&api_key=`; Cairn does not (a key in a URL ends up in logs), so say so.
      if (req.query.api_key !== undefined) {
        throw errors.unauthenticated('API keys are not accepted in the query string; send "Authorization: ApiKey <operator>:<key>" instead.');
      }
      throw errors.unauthenticated();
    }
    const m = HEADER.exec(header);
    if (!m) throw errors.unauthenticated('Malformed Authorization header: expected "ApiKey <operator>:<key>".');
    const [, name, key] = m as unknown as [string, string, string];
    const { operator, apiKeyId } = await operatorByApiKey(credentials, name, key);
    (res.locals as AuthenticatedLocals).operator = operator;
    (res.locals as AuthenticatedLocals).apiKeyId = apiKeyId;
    next();
  };
}
