import { errors } from '@cairn/domain';
import { ReplyError } from 'ioredis';
import type { RedisClient } from '../redis';
import type { TokenRecord, TokenStore } from './store';

/**
 * Token records in Redis under `cairn:<cluster uuid>:…`, each with the token's remaining life as
 * its TTL, so an expired or revoked token is simply absent on every replica.
 *
 * Redis Cluster: every command here, and the one MULTI, touches a single key, so no two keys ever
 * need to share a hash slot and the keys carry no hash tag on purpose: a tag such as
 * `cairn:{<uuid>}:` would put all of a cluster's tokens (one gateway deployment's whole load) in
 * one slot, on one shard. Keep it that way: a new command over several keys (MGET, a Lua script, a
 * MULTI over two keys) needs those keys tagged into one slot, e.g. `…:{<user>}:…`.
 */
/**
 * A Redis command's result; any failure but Redis's own answer (a ReplyError: the command reached
 * Redis and was refused) means Redis could not be reached in time, and becomes UNAVAILABLE (503).
 */
function reachable<T>(command: Promise<T>): Promise<T> {
  return command.catch((err: unknown) => {
    if (err instanceof ReplyError) throw err;
    throw errors.unavailable('The token store (Redis) is unavailable.', { cause: (err as Error).message });
  });
}

export class RedisTokenStore implements TokenStore {
  readonly kind = 'redis' as const;

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {}

  private k(key: string): string {
    return `${this.prefix}${key}`;
  }

  async put(id: string, record: TokenRecord, ttlMs: number): Promise<void> {
    await reachable(this.redis.set(this.k(`tok:${id}`), JSON.stringify(record), 'PX', Math.max(1, Math.round(ttlMs))));
  }

  async get(id: string): Promise<TokenRecord | null> {
    const v = await reachable(this.redis.get(this.k(`tok:${id}`)));
    return v ? (JSON.parse(v) as TokenRecord) : null;
  }

  async delete(id: string): Promise<boolean> {
    return (await reachable(this.redis.del(this.k(`tok:${id}`)))) > 0;
  }

  async revokeUserBefore(userId: string, atMs: number, ttlMs: number): Promise<void> {
    await reachable(this.redis.set(this.k(`revoked-user:${userId}`), String(atMs), 'PX', Math.max(1, Math.round(ttlMs))));
  }

  async userRevokedBefore(userId: string): Promise<number> {
    return Number((await reachable(this.redis.get(this.k(`revoked-user:${userId}`)))) ?? 0);
  }

  async recordFailure(key: string, windowMs: number): Promise<{ count: number; resetInMs: number }> {
    const k = this.k(`fail:${key}`);
    // INCR and the first PEXPIRE in one round trip; NX keeps the window fixed from the first failure.
    const result = await reachable(this.redis.multi().incr(k).pexpire(k, windowMs, 'NX').pttl(k).exec());
    const count = Number(result?.[0]?.[1] ?? 1);
    const ttl = Number(result?.[2]?.[1] ?? windowMs);
    return { count, resetInMs: ttl > 0 ? ttl : windowMs };
  }

  async failures(key: string): Promise<{ count: number; resetInMs: number }> {
    const k = this.k(`fail:${key}`);
    const count = Number((await reachable(this.redis.get(k))) ?? 0);
    // The window's end only matters to a client told to retry later: asked for only when counting
    // (most logins have no failures, and this is on every login's path).
    if (count === 0) return { count, resetInMs: 0 };
    const ttl = await reachable(this.redis.pttl(k));
    return { count, resetInMs: ttl > 0 ? ttl : 0 };
  }

  async clearFailures(key: string): Promise<void> {
    await reachable(this.redis.del(this.k(`fail:${key}`)));
  }

  async setFlag(key: string, ttlMs: number): Promise<void> {
    await reachable(this.redis.set(this.k(`flag:${key}`), '1', 'PX', Math.max(1, Math.round(ttlMs))));
  }

  async hasFlag(key: string): Promise<boolean> {
    return (await reachable(this.redis.exists(this.k(`flag:${key}`)))) > 0;
  }

  async getOrSet(key: string, value: string): Promise<string> {
    const k = this.k(`kv:${key}`);
    await reachable(this.redis.set(k, value, 'NX'));
    return (await reachable(this.redis.get(k))) ?? value;
  }

  async ping(): Promise<void> {
    await reachable(this.redis.ping());
  }
}
