import type { RequestHandler } from 'express';
import type { ChangeLogFeed, StalePolicy } from '../credentials/change-log';
import { sendKeystoneError } from './errors';
import { sendText } from './respond';

const seconds = (ms: number) => (Number.isFinite(ms) ? `${(ms / 1000).toFixed(1)} s` : 'an unknown time');

/** Why a gateway on a stale standby answers 503, as a person reads it. */
export function staleStandbyMessage(standby: ChangeLogFeed): string {
  return `This gateway's copy of the user database is ${seconds(standby.lagMs)} behind the primary (the limit is ${seconds(standby.maxLagMs)}), so it cannot tell whether a user was disabled or changed meanwhile and authenticates no one until it has caught up. Retry shortly, or use a gateway in another region.`;
}

/**
 * With CAIRN_STANDBY_STALE=refuse, answers 503 on every auth route while the standby's copy is
 * older than CAIRN_STANDBY_MAX_LAG (fail closed: no revocation made meanwhile is missed), in
 * Swift's plain text on V1 paths, in Keystone's error body elsewhere. Serves again by itself once
 * the copy has caught up. Mounted under the /auth root.
 */
export function standbyGate(standby: ChangeLogFeed | undefined, policy: StalePolicy): RequestHandler {
  return (req, res, next) => {
    if (!standby || policy === 'serve' || !standby.stale) return next();
    const message = staleStandbyMessage(standby);
    res.setHeader('Retry-After', '1');
    if (/^\/v1(\.0)?(\/|$)/.test(req.path)) sendText(res, 503, 'text/plain; charset=utf-8', message);
    else sendKeystoneError(res, 503, message);
  };
}

/**
 * /readyz's `standby` entry: `primary` when DATABASE_URL is the primary; on a standby the lag,
 * and not ready while it is past the limit with `refuse` (a balancer then sends clients to a
 * gateway that can answer). With `serve` it stays ready and says it is serving a stale copy.
 */
export function standbyReadiness(
  standby: ChangeLogFeed | undefined,
  policy: StalePolicy,
): { status: string; ready: boolean } {
  if (!standby) return { status: 'primary', ready: true };
  const lag = `lag ${seconds(standby.lagMs)}`;
  if (!standby.stale) return { status: `ok, ${lag}`, ready: true };
  if (policy === 'serve')
    return {
      status: `stale, ${lag} over the ${seconds(standby.maxLagMs)} limit: serving the copy as it is (CAIRN_STANDBY_STALE=serve)`,
      ready: true,
    };
  return {
    status: `stale, ${lag} over the ${seconds(standby.maxLagMs)} limit: refusing logins (CAIRN_STANDBY_STALE=refuse)`,
    ready: false,
  };
}
