import { errors } from '@cairn/domain';
import { Cluster, ReplyError } from 'ioredis';
import type { RedisClient } from '../redis';
import type { TokenRecord, TokenStore } from './store';

/**
 * Token records in Redis under `cairn:<cluster uuid>:…`, each with the token's remaining life as
 * its TTL, so an expired or revoked token is simply absent on every replica.
 *
 * Each user's live tokens are also listed, under the user's row id, in a sorted set scored by
 * expiry (`user-tokens:<row id>`), which the per-user cap keeps short (LIST_TOKEN below).
 *
 * Redis Cluster: every command here but one, the one MULTI and the one Lua script touch a single
 * key, and token keys carry no hash tag on purpose: a tag such as `cairn:{<uuid>}:` would put all of
 * a cluster's tokens (one gateway deployment's whole load) in one slot, on one shard. The one is
 * `failures`, an MGET per group of keys: the keys of a group are tagged into one slot by a small
 * part of the load (a login's counters of one username, `fail:{<name hash>}:…`, credentials/logins.ts).
 * Keep it that way: a new command over several keys needs those keys tagged so.
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

/** A counter's value as MGET gives it: absent is 0. */
const count = (value: string | null): number => Number(value ?? 0);

/**
 * Lists token ARGV[1] (expiring at ARGV[2], ms) in its user's sorted set KEYS[1] and pushes out the
 * oldest beyond ARGV[4], as one atomic step: any number of logins at once leave at most ARGV[4]
 * listed. Expired entries leave first. A new token is scored above the newest listed (tokens issued
 * in the same millisecond tie, and ties are ordered by id), so it is never the one pushed out, also
 * when replicas' clocks differ. Returns the ids pushed out.
 */
const LIST_TOKEN = `
local key = KEYS[1]
local score = ARGV[2]
local now = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', key, '-inf', ARGV[3])
local newest = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
if newest[2] and tonumber(newest[2]) >= tonumber(score) then score = tostring(tonumber(newest[2]) + 1) end
redis.call('ZADD', key, score, ARGV[1])
local over = redis.call('ZCARD', key) - tonumber(ARGV[4])
local pushed = {}
if over > 0 then
  pushed = redis.call('ZRANGE', key, 0, over - 1)
  redis.call('ZREMRANGEBYRANK', key, 0, over - 1)
end
redis.call('PEXPIRE', key, tostring(math.max(1, math.floor(tonumber(score) - now))))
return pushed
`;

export class RedisTokenStore implements TokenStore {
  readonly kind = 'redis' as const;

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {}

  private k(key: string): string {
    return `${this.prefix}${key}`;
  }

  /** A user's list of tokens, under its row id (never reused), so it never passes to a later user of the same name. */
  private list(userId: string): string {
    return this.k(`user-tokens:${userId}`);
  }

  async add(id: string, record: TokenRecord, ttlMs: number, cap: number): Promise<string[]> {
    const ttl = Math.max(1, Math.round(ttlMs));
    // Scored by the record's expiry; "now" on the issuing gateway's clock, as the record's times are.
    const expiresAt = Date.parse(record.expiresAt);
    // The record first: a token is listed only once it can be read, so none is listed without one.
    await reachable(this.redis.set(this.k(`tok:${id}`), JSON.stringify(record), 'PX', ttl));
    const pushed = (await reachable(
      this.redis.eval(
        LIST_TOKEN,
        1,
        this.list(record.userId),
        id,
        String(expiresAt),
        String(expiresAt - ttl),
        String(cap),
      ),
    )) as string[];
    // Already void (no longer listed); their records go now rather than at their expiry.
    await Promise.all(pushed.map((old) => reachable(this.redis.del(this.k(`tok:${old}`)))));
    return pushed;
  }

  async get(id: string): Promise<TokenRecord | null> {
    const v = await reachable(this.redis.get(this.k(`tok:${id}`)));
    return v ? (JSON.parse(v) as TokenRecord) : null;
  }

  async isListed(userId: string, id: string): Promise<boolean> {
    return (await reachable(this.redis.zscore(this.list(userId), id))) !== null;
  }

  async delete(id: string): Promise<boolean> {
    const v = await reachable(this.redis.get(this.k(`tok:${id}`)));
    if (!v) return false;
    // Unlisted before its record goes (the two keys may be on two Redis Cluster nodes, so one after
    // the other): a V1 login handing the token out again asks only its listing (service.ts,
    // HandedOut), so it must never see it listed once it is revoked. Of deletes at once, only the
    // one that deleted the record says so.
    await reachable(this.redis.zrem(this.list((JSON.parse(v) as TokenRecord).userId), id));
    return (await reachable(this.redis.del(this.k(`tok:${id}`)))) > 0;
  }

  async revokeUserBefore(userId: string, atMs: number, ttlMs: number): Promise<void> {
    await reachable(
      this.redis.set(this.k(`revoked-user:${userId}`), String(atMs), 'PX', Math.max(1, Math.round(ttlMs))),
    );
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

  async failures(groups: string[][]): Promise<number[][]> {
    const read = (keys: string[]) =>
      reachable(this.redis.mget(keys.map((key) => this.k(`fail:${key}`)))).then((values) => values.map(count));
    // On every login's path: one MGET, one reply. A Redis Cluster takes an MGET only of keys in
    // one slot: there, one per group, all sent in this tick (one round trip per node).
    if (this.redis instanceof Cluster) return Promise.all(groups.map(read));
    const counts = await read(groups.flat());
    let at = 0;
    return groups.map((keys) => counts.slice(at, (at += keys.length)));
  }

  async failureWindowLeft(key: string): Promise<number> {
    return Math.max(0, await reachable(this.redis.pttl(this.k(`fail:${key}`))));
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

  async setValue(key: string, value: string, ttlMs: number): Promise<void> {
    await reachable(this.redis.set(this.k(`val:${key}`), value, 'PX', Math.max(1, Math.round(ttlMs))));
  }

  async getValue(key: string): Promise<string | null> {
    return reachable(this.redis.get(this.k(`val:${key}`)));
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
