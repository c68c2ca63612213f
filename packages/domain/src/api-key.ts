import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Operator API keys: 256 random bits, shown once, stored as SHA-256. A fast hash is enough here
 * because the key itself is high-entropy (unlike a password, it cannot be guessed from a list).
 */
export function generateApiKey(): string {
  return randomBytes(32).toString('base64url');
}

export function hashApiKey(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

/** Compares a presented key with a stored hash in time independent of where they differ. */
export function apiKeyMatches(presented: string, storedHash: Buffer): boolean {
  const candidate = hashApiKey(presented);
  return storedHash.length === candidate.length && timingSafeEqual(candidate, storedHash);
}
