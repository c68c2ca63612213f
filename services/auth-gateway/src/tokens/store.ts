/**
 * Where token records, login-failure counters and login flags live. Redis is the source of truth in
 * production (every replica sees the same records, and a record's TTL is the token's life); the
 * in-memory store serves the single-process embedded start.
 */
export interface TokenRecord {
  user: string;
  /** The storage user's row id when the token was issued. */
  userId: string;
  /** The account's owner name (project id = name); absent for an unscoped token. */
  project?: string;
  roles: string[];
  methods: string[];
  userDomain: string;
  projectDomain?: string;
  issuedAt: string;
  expiresAt: string;
  /** The user's generation when the token was issued: any change of password/state voids it. */
  generation: string;
  auditId: string;
}

export interface TokenStore {
  readonly kind: 'redis' | 'memory';
  put(id: string, record: TokenRecord, ttlMs: number): Promise<void>;
  get(id: string): Promise<TokenRecord | null>;
  /** True when a record was deleted. */
  delete(id: string): Promise<boolean>;
  /**
   * Tokens of the user with row id `userId` issued at or before `atMs` are void (SwiftStack's
   * per-user token revocation). Keyed by the row id, not the name: a revocation belongs to one
   * user, not to whoever holds its name later.
   */
  revokeUserBefore(userId: string, atMs: number, ttlMs: number): Promise<void>;
  userRevokedBefore(userId: string): Promise<number>;
  /** Counts one event (a failed login, an OS-EC2 credential change) in a fixed window opened by the first; returns the count in the current window and the window's remaining ms. */
  recordFailure(key: string, windowMs: number): Promise<{ count: number; resetInMs: number }>;
  failures(key: string): Promise<{ count: number; resetInMs: number }>;
  clearFailures(key: string): Promise<void>;
  /** Sets a flag that disappears after `ttlMs` (e.g. "this user has logged in from this address"). */
  setFlag(key: string, ttlMs: number): Promise<void>;
  hasFlag(key: string): Promise<boolean>;
  /** Stores `value` under `key` unless one is there; returns the value that is there afterwards. */
  getOrSet(key: string, value: string): Promise<string>;
  ping(): Promise<void>;
}

interface Entry {
  value: string;
  expiresAt: number;
}

export class MemoryTokenStore implements TokenStore {
  readonly kind = 'memory' as const;
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly now: () => number = Date.now) {}

  private read(key: string): string | null {
    const e = this.entries.get(key);
    if (!e) return null;
    if (e.expiresAt <= this.now()) {
      this.entries.delete(key);
      return null;
    }
    return e.value;
  }

  private write(key: string, value: string, ttlMs: number): void {
    this.entries.set(key, { value, expiresAt: this.now() + ttlMs });
    if (this.entries.size > 200_000) this.sweep();
  }

  private sweep(): void {
    const now = this.now();
    for (const [k, e] of this.entries) if (e.expiresAt <= now) this.entries.delete(k);
  }

  async put(id: string, record: TokenRecord, ttlMs: number): Promise<void> {
    this.write(`tok:${id}`, JSON.stringify(record), ttlMs);
  }

  async get(id: string): Promise<TokenRecord | null> {
    const v = this.read(`tok:${id}`);
    return v ? (JSON.parse(v) as TokenRecord) : null;
  }

  async delete(id: string): Promise<boolean> {
    const had = this.read(`tok:${id}`) !== null;
    this.entries.delete(`tok:${id}`);
    return had;
  }

  async revokeUserBefore(userId: string, atMs: number, ttlMs: number): Promise<void> {
    this.write(`revoked-user:${userId}`, String(atMs), ttlMs);
  }

  async userRevokedBefore(userId: string): Promise<number> {
    return Number(this.read(`revoked-user:${userId}`) ?? 0);
  }

  async recordFailure(key: string, windowMs: number): Promise<{ count: number; resetInMs: number }> {
    const e = this.entries.get(`fail:${key}`);
    const now = this.now();
    if (!e || e.expiresAt <= now) {
      this.write(`fail:${key}`, '1', windowMs);
      return { count: 1, resetInMs: windowMs };
    }
    e.value = String(Number(e.value) + 1);
    return { count: Number(e.value), resetInMs: e.expiresAt - now };
  }

  async failures(key: string): Promise<{ count: number; resetInMs: number }> {
    const e = this.entries.get(`fail:${key}`);
    const now = this.now();
    return !e || e.expiresAt <= now ? { count: 0, resetInMs: 0 } : { count: Number(e.value), resetInMs: e.expiresAt - now };
  }

  async clearFailures(key: string): Promise<void> {
    this.entries.delete(`fail:${key}`);
  }

  async setFlag(key: string, ttlMs: number): Promise<void> {
    this.write(`flag:${key}`, '1', ttlMs);
  }

  async hasFlag(key: string): Promise<boolean> {
    return this.read(`flag:${key}`) !== null;
  }

  async getOrSet(key: string, value: string): Promise<string> {
    const existing = this.read(`kv:${key}`);
    if (existing !== null) return existing;
    this.write(`kv:${key}`, value, Number.MAX_SAFE_INTEGER / 2);
    return value;
  }

  async ping(): Promise<void> {}
}
