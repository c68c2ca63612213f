import type { NextFunction, Request, Response } from 'express';
import { apiKeyMatches, errors, hashApiKey, type Operator } from '@cairn/domain';
import type { Db } from '../db/database';
import { findOperatorCredentials, type OperatorCredential } from '../repositories/operators';

/**
 * `Authorization: ApiKey <operator>:<key>` (scheme word case-insensitive, split on the first ':').
 * Unknown operators are compared against a dummy hash so a miss costs the same as a wrong key.
 */
const HEADER = /^apikey[ \t]+([^:\s]+):(\S+)\s*$/i;
const DUMMY_HASH = hashApiKey('cairn-dummy-key-for-constant-time-misses');

export interface AuthenticatedLocals {
  operator: Operator;
  /** Which of the operator's keys the request was made with (its id, never the key). */
  apiKeyId: string;
}

export const operatorOf = (res: Response): Operator => (res.locals as AuthenticatedLocals).operator;
export const apiKeyIdOf = (res: Response): string => (res.locals as AuthenticatedLocals).apiKeyId;

/**
 * Operators' key hashes, remembered for a few seconds so a request costs no extra round trip.
 * The key itself is still checked on every request; only which hashes an operator has may be
 * that old. Changes made through this process clear it at once; other replicas see them within
 * `ttlMs`. Unknown operators are never remembered, so a new operator works at once everywhere.
 */
export class CredentialCache {
  private readonly entries = new Map<string, { at: number; credential: OperatorCredential }>();

  constructor(
    private readonly db: Db,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  async find(name: string): Promise<OperatorCredential | null> {
    const hit = this.entries.get(name);
    if (hit && this.now() - hit.at < this.ttlMs) return hit.credential;
    const credential = await findOperatorCredentials(this.db, name);
    if (credential && this.ttlMs > 0) {
      if (this.entries.size >= 10_000) this.entries.clear();
      this.entries.set(name, { at: this.now(), credential });
    } else {
      this.entries.delete(name);
    }
    return credential;
  }

  clear(): void {
    this.entries.clear();
  }
}

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
    const credential = name.length <= 64 ? await credentials.find(name) : null;
    let matchedId: string | undefined;
    const hashes = credential?.keyHashes.length ? credential.keyHashes : [DUMMY_HASH];
    hashes.forEach((hash, i) => {
      // No early exit: the time spent does not depend on which key matched.
      if (apiKeyMatches(key, hash)) matchedId = credential?.keyIds[i];
    });
    if (!credential || matchedId === undefined) throw errors.unauthenticated('Invalid operator name or API key.');
    (res.locals as AuthenticatedLocals).operator = credential.operator;
    (res.locals as AuthenticatedLocals).apiKeyId = matchedId;
    next();
  };
}
