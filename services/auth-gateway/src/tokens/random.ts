import { randomFillSync } from 'node:crypto';

const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let used = POOL_BYTES;

/**
 * `bytes` fresh bytes of the CSPRNG, encoded. A synchronous `randomBytes` call per token id cost
 * a few percent of a login's CPU (measured in bench/); drawing slices from a pool refilled in one
 * call when used up is what Node's own randomUUID does. Every byte is handed out once.
 */
export function randomText(bytes: number, encoding: 'hex' | 'base64url'): string {
  if (bytes > POOL_BYTES) throw new RangeError(`at most ${POOL_BYTES} bytes at a time`);
  if (used + bytes > POOL_BYTES) {
    randomFillSync(pool);
    used = 0;
  }
  const text = pool.toString(encoding, used, used + bytes);
  used += bytes;
  return text;
}
