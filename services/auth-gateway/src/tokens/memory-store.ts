import { ExpiryHeap, type Expiring } from './expiry-heap';
import type { TokenRecord, TokenStore } from './store';

interface Entry extends Expiring {
  key: string;
  value: string;
  /** For a token's record: the token and the user whose list it is in. */
  token?: { id: string; userId: string };
}

/**
 * Expired entries taken out per write, at most: the work of one write stays bounded even when
 * many entries expire at once, and the backlog still drains faster than writes can add to it.
 * Until taken out, an expired entry is already treated as absent.
 */
const EXPIRED_PER_WRITE = 16;

/**
 * The token store of the single-process embedded start. Entries expire through an ExpiryHeap, so
 * a write costs O(log n) however many entries there are; each user's listed tokens are kept in
 * issue order (one process issues them in time order), so the oldest are pushed out first.
 */
export class MemoryTokenStore implements TokenStore {
  readonly kind = 'memory' as const;
  private readonly entries = new Map<string, Entry>();
  private readonly expiry = new ExpiryHeap<Entry>();
  /** Each user's listed token ids (by user row id), oldest first. */
  private readonly lists = new Map<string, Set<string>>();

  constructor(private readonly now: () => number = Date.now) {}

  /** How many entries are held, expired or not (for tests and benchmarks). */
  get size(): number {
    return this.entries.size;
  }

  private live(key: string): Entry | null {
    const e = this.entries.get(key);
    if (!e) return null;
    if (e.expiresAt <= this.now()) {
      this.remove(e);
      return null;
    }
    return e;
  }

  private read(key: string): string | null {
    return this.live(key)?.value ?? null;
  }

  private write(key: string, value: string, ttlMs: number): Entry {
    const now = this.now();
    this.expireSome(now);
    const expiresAt = now + ttlMs;
    let e = this.entries.get(key);
    if (e) {
      e.value = value;
      e.expiresAt = expiresAt;
      this.expiry.moved(e);
    } else {
      e = { key, value, expiresAt, slot: -1 };
      this.entries.set(key, e);
      this.expiry.push(e);
    }
    return e;
  }

  private expireSome(now: number): void {
    for (let i = 0; i < EXPIRED_PER_WRITE; i++) {
      const first = this.expiry.peek();
      if (!first || first.expiresAt > now) return;
      this.remove(first);
    }
  }

  private remove(e: Entry): void {
    this.entries.delete(e.key);
    this.expiry.remove(e);
    if (!e.token) return;
    const list = this.lists.get(e.token.userId);
    list?.delete(e.token.id);
    if (list?.size === 0) this.lists.delete(e.token.userId);
  }

  async add(id: string, record: TokenRecord, ttlMs: number, cap: number): Promise<string[]> {
    const entry = this.write(`tok:${id}`, JSON.stringify(record), ttlMs);
    entry.token = { id, userId: record.userId };
    let list = this.lists.get(record.userId);
    if (!list) this.lists.set(record.userId, (list = new Set()));
    list.add(id);
    const now = this.now();
    const pushedOut: string[] = [];
    // Oldest first: expired ones leave (not counted as pushed out), then the oldest beyond the cap.
    for (const old of list) {
      if (old === id) continue;
      const e = this.entries.get(`tok:${old}`);
      const expired = !e || e.expiresAt <= now;
      if (!expired && list.size <= cap) break;
      if (e) this.remove(e);
      else list.delete(old);
      if (!expired) pushedOut.push(old);
    }
    return pushedOut;
  }

  async get(id: string): Promise<TokenRecord | null> {
    const v = this.read(`tok:${id}`);
    return v ? (JSON.parse(v) as TokenRecord) : null;
  }

  async isListed(userId: string, id: string): Promise<boolean> {
    return this.live(`tok:${id}`) !== null && (this.lists.get(userId)?.has(id) ?? false);
  }

  async delete(id: string): Promise<boolean> {
    const e = this.live(`tok:${id}`);
    if (e) this.remove(e);
    return e !== null;
  }

  async revokeUserBefore(userId: string, atMs: number, ttlMs: number): Promise<void> {
    this.write(`revoked-user:${userId}`, String(atMs), ttlMs);
  }

  async userRevokedBefore(userId: string): Promise<number> {
    return Number(this.read(`revoked-user:${userId}`) ?? 0);
  }

  async recordFailure(key: string, windowMs: number): Promise<{ count: number; resetInMs: number }> {
    const e = this.live(`fail:${key}`);
    if (!e) {
      this.write(`fail:${key}`, '1', windowMs);
      return { count: 1, resetInMs: windowMs };
    }
    e.value = String(Number(e.value) + 1);
    return { count: Number(e.value), resetInMs: e.expiresAt - this.now() };
  }

  async failures(groups: string[][]): Promise<number[][]> {
    return groups.map((keys) => keys.map((key) => Number(this.live(`fail:${key}`)?.value ?? 0)));
  }

  async failureWindowLeft(key: string): Promise<number> {
    const e = this.live(`fail:${key}`);
    return e ? Math.max(0, e.expiresAt - this.now()) : 0;
  }

  async clearFailures(key: string): Promise<void> {
    const e = this.entries.get(`fail:${key}`);
    if (e) this.remove(e);
  }

  async setFlag(key: string, ttlMs: number): Promise<void> {
    this.write(`flag:${key}`, '1', ttlMs);
  }

  async hasFlag(key: string): Promise<boolean> {
    return this.read(`flag:${key}`) !== null;
  }

  async setValue(key: string, value: string, ttlMs: number): Promise<void> {
    this.write(`val:${key}`, value, ttlMs);
  }

  async getValue(key: string): Promise<string | null> {
    return this.read(`val:${key}`);
  }

  async getOrSet(key: string, value: string): Promise<string> {
    const existing = this.read(`kv:${key}`);
    if (existing !== null) return existing;
    this.write(`kv:${key}`, value, Number.MAX_SAFE_INTEGER / 2);
    return value;
  }

  async ping(): Promise<void> {}
}
