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
  /**
   * Set on every token issued with a per-user cap: it is live only while it is in its user's list
   * of tokens (the cap pushes the oldest out). Records written without it are not checked there.
   */
  listed?: true;
  /**
   * Set on a token issued for an application credential login: the token lives only while the
   * credential does (checked at every validation) and never past its expiry.
   */
  applicationCredential?: TokenApplicationCredential;
}

/** What a token remembers of the application credential it was issued for (Keystone's token field). */
export interface TokenApplicationCredential {
  id: string;
  name: string;
  /** Keystone's `restricted`: not `unrestricted`, so it may not make credentials (application or EC2). */
  restricted: boolean;
  accessRules?: Array<{ id: string; service: string; method: string; path: string }>;
}

export interface TokenStore {
  readonly kind: 'redis' | 'memory';
  /**
   * Stores a token's record for `ttlMs` and lists it among its user's tokens (under the user's row
   * id), of which at most `cap` stay listed: listing it and pushing out the oldest beyond the cap
   * is one atomic step, so no number of logins at once can list more. The records of the tokens
   * pushed out are deleted before this returns; their ids are returned.
   */
  add(id: string, record: TokenRecord, ttlMs: number, cap: number): Promise<string[]>;
  get(id: string): Promise<TokenRecord | null>;
  /** Whether token `id` is still listed among the tokens of the user with row id `userId`. */
  isListed(userId: string, id: string): Promise<boolean>;
  /** True when a record was deleted; the token leaves its user's list too. */
  delete(id: string): Promise<boolean>;
  /**
   * Tokens of the user with row id `userId` issued at or before `atMs` are void (SwiftStack's
   * per-user token revocation). Keyed by the row id, not the name: a revocation belongs to one
   * user, not to whoever holds its name later.
   */
  revokeUserBefore(userId: string, atMs: number, ttlMs: number): Promise<void>;
  userRevokedBefore(userId: string): Promise<number>;
  /**
   * Counts one event (a failed login, an OS-EC2 credential change) in a fixed window opened by the first; returns the
   * count in the current window and the window's remaining ms.
   */
  recordFailure(key: string, windowMs: number): Promise<{ count: number; resetInMs: number }>;
  /**
   * The counts of several counters in one read (0 for one never counted), by group. Under Redis
   * Cluster the keys of a group must share a hash slot: a tag such as `{<name>}:…` in each (see
   * redis-store.ts); there each group is read on its own.
   */
  failures(groups: string[][]): Promise<number[][]>;
  /**
   * The ms left in a counter's window (0 when it has none): asked only of a counter that refuses,
   * for Retry-After, so that a login under its limits reads its counts and nothing more.
   */
  failureWindowLeft(key: string): Promise<number>;
  clearFailures(key: string): Promise<void>;
  /** Sets a flag that disappears after `ttlMs` (e.g. "this user has logged in from this address"). */
  setFlag(key: string, ttlMs: number): Promise<void>;
  hasFlag(key: string): Promise<boolean>;
  /** A value that disappears after `ttlMs` (e.g. which token a repeated V1 login is handed again). */
  setValue(key: string, value: string, ttlMs: number): Promise<void>;
  getValue(key: string): Promise<string | null>;
  /** Stores `value` under `key` unless one is there; returns the value that is there afterwards. */
  getOrSet(key: string, value: string): Promise<string>;
  ping(): Promise<void>;
}
