import { apiKeyMatches, errors, hashApiKey, type Operator } from '@cairn/domain';
import type { Db } from '../db/database';
import { findOperatorCredentials, type OperatorCredential } from '../repositories/operators';

/** Compared against when the operator is unknown, so a miss costs the same as a wrong key. */
const DUMMY_HASH = hashApiKey('cairn-dummy-key-for-constant-time-misses');

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

/**
 * The operator whose API key this is, and which of its keys it is (the key's id, never the key);
 * the same refusal, in the same time, for an unknown name and a wrong key.
 */
export async function operatorByApiKey(
  credentials: CredentialCache,
  name: string,
  key: string,
): Promise<{ operator: Operator; apiKeyId: string }> {
  const credential = name.length <= 64 ? await credentials.find(name) : null;
  let matchedId: string | undefined;
  const hashes = credential?.keyHashes.length ? credential.keyHashes : [DUMMY_HASH];
  hashes.forEach((hash, i) => {
    // No early exit: the time spent does not depend on which key matched.
    if (apiKeyMatches(key, hash)) matchedId = credential?.keyIds[i];
  });
  if (!credential || matchedId === undefined) throw errors.unauthenticated('Invalid operator name or API key.');
  return { operator: credential.operator, apiKeyId: matchedId };
}
