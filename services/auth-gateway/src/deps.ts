import { Redis } from 'ioredis';
import pino, { type DestinationStream, type Logger } from 'pino';
import type { GatewayConfig } from './config';

/** Everything the app needs from the outside world, built once from config and passed in. */
export interface Deps {
  log: Logger;
  /** The token store's Redis connection; absent when REDIS_URL is unset. */
  redis?: Redis;
  /** Public URL of the /auth root (no trailing slash); absent: derived from each request. */
  publicUrl?: string;
}

/** Secrets never reach a log line, whatever logs them: credentials, tokens and connection URLs. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-auth-key"]',
  'req.headers["x-auth-token"]',
  'req.headers["x-storage-pass"]',
  'req.headers["x-storage-token"]',
  'req.headers["x-subject-token"]',
  'req.headers["x-service-token"]',
  'res.headers["x-auth-token"]',
  'res.headers["x-storage-token"]',
  'res.headers["x-subject-token"]',
  'req.body.auth.passwordCredentials.password',
  'req.body.auth.identity.password.user.password',
  'body.auth.passwordCredentials.password',
  'body.auth.identity.password.user.password',
  'password',
  '*.password',
  'databaseUrl',
  '*.databaseUrl',
  'redisUrl',
  '*.redisUrl',
];

export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = { level, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, base: { service: 'auth-gateway' } };
  return destination ? pino(options, destination) : pino(options);
}

/**
 * A Redis client that connects on first use and keeps retrying with a capped backoff, so a Redis
 * restart delays requests briefly instead of failing them all; a command waits for at most
 * three reconnection attempts before it fails.
 */
export function createRedis(url: string, log: Logger): Redis {
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 5_000,
    maxRetriesPerRequest: 3,
    retryStrategy: (attempt) => Math.min(attempt * 200, 5_000),
  });
  redis.on('error', (err: Error) => log.warn({ err: { message: err.message } }, 'redis connection error'));
  return redis;
}

/**
 * Ends a Redis client: a connected one after its pending replies (QUIT), any other at once.
 * Resolves when the client has ended, or after `waitMs` at the latest. A client waiting to
 * reconnect has no socket left: disconnecting cancels the reconnection and there is nothing to wait for.
 */
export async function closeRedis(redis: Redis, waitMs = 2_000): Promise<void> {
  if (redis.status === 'end') return;
  const idle = redis.status === 'reconnecting';
  let timer: NodeJS.Timeout | undefined;
  const ended = new Promise<void>((resolve) => {
    redis.once('end', resolve);
    timer = setTimeout(resolve, waitMs);
  });
  if (redis.status === 'ready') await redis.quit().catch(() => redis.disconnect());
  else redis.disconnect();
  if (!idle) await ended;
  clearTimeout(timer);
}

export function createDeps(config: GatewayConfig): Deps {
  const log = createLogger(config.logLevel);
  return {
    log,
    ...(config.redisUrl ? { redis: createRedis(config.redisUrl, log) } : {}),
    ...(config.publicUrl ? { publicUrl: config.publicUrl } : {}),
  };
}
