import type { IncomingMessage } from 'node:http';
import type { TokenService } from './service';
import type { TokenRecord } from './store';

const validated = new WeakMap<IncomingMessage, Map<string, Promise<TokenRecord | null>>>();

/**
 * A token's validation, made at most once per request: the access-rules guard (http/identity-guard.ts)
 * looks at the caller's token before the route does, and the route then reuses that answer rather
 * than ask Redis again.
 */
export function validateOnce(
  tokens: Pick<TokenService, 'validate'>,
  req: IncomingMessage,
  token: string | undefined,
): Promise<TokenRecord | null> {
  if (!token) return Promise.resolve(null);
  let byToken = validated.get(req);
  if (!byToken) {
    byToken = new Map();
    validated.set(req, byToken);
  }
  let pending = byToken.get(token);
  if (!pending) {
    pending = tokens.validate(token);
    byToken.set(token, pending);
  }
  return pending;
}
