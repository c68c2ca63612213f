import { STORAGE_USER_COLUMNS, TABLES, type StorageUserRow } from '@cairn/contract';
import type { Knex } from 'knex';
import { unreachable } from './unreachable';

const COLUMNS = [...STORAGE_USER_COLUMNS];

/** What the gateway needs to know of a storage user (a `storage_users` row); it never writes users. */
export interface UserRecord {
  /** Never reused, unlike a name: a re-created user is a different user to every old token. */
  id: string;
  username: string;
  passwordHash: string;
  enabled: boolean;
  isSuperuser: boolean;
  generation: string;
}

/**
 * Reads storage users of one cluster from Postgres and remembers each row for at most `maxAgeMs`
 * (a fraction of a second) counted from before its query.
 *
 * The change notices (see UserChangeFeed) drop a changed user's row as soon as they arrive. Token
 * validation may use a remembered row at any time: a disabled, deleted or changed user is refused
 * everywhere within `maxAgeMs` at the latest, without a query per validation. Logins may only
 * behind the feed's fence (findForLogin), and read the row afresh while there is no feed, so for
 * them a change takes effect at once either way.
 */
export class UserDirectory {
  private readonly recent = new Map<string, { at: number; user: UserRecord | null }>();
  /** While change notices are heard: resolves true once every change committed before the call has been applied. */
  private fence?: () => Promise<boolean>;
  /** Counts forgets: a row read while one happened may predate the change, so it is not kept. */
  private forgets = 0;

  constructor(
    private readonly db: Knex,
    private readonly clusterId: number,
    private readonly maxAgeMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  async find(username: string): Promise<UserRecord | null> {
    // The row's age counts from before the query: a change committed while it ran may be missing
    // from it, so the `maxAgeMs` bound holds only when measured from here.
    const readAt = this.now();
    const forgetsBefore = this.forgets;
    const where: Pick<StorageUserRow, 'cluster_id' | 'username'> = { cluster_id: this.clusterId, username };
    const row = (await this.db(TABLES.storageUsers)
      .select(COLUMNS)
      .where(where)
      .first()
      .catch(unreachable)) as Omit<StorageUserRow, 'cluster_id'> | undefined;
    const user = row
      ? { id: String(row.id), username: row.username, passwordHash: row.password_hash, enabled: row.enabled, isSuperuser: row.is_superuser, generation: String(row.generation) }
      : null;
    if (this.forgets === forgetsBefore) this.remember(username, user, readAt);
    return user;
  }

  /**
   * The row a login checks the password against. A remembered one only once the change feed's
   * fence has passed: then every change committed before this call has been heard and applied,
   * so the row is current (a notice's own delay cannot let a just-disabled user in).
   */
  async findForLogin(username: string): Promise<UserRecord | null> {
    if (this.fence && (await this.fence())) return this.findRecent(username);
    return this.find(username);
  }

  get isFollowing(): boolean {
    return this.fence !== undefined;
  }

  /**
   * Called by the change feed when it starts hearing changes (with its fence) or stops (without);
   * either way what was remembered may have changed unheard, so it is forgotten.
   */
  follow(fence?: () => Promise<boolean>): void {
    this.fence = fence;
    this.forgetAll();
  }

  forget(username: string): void {
    this.forgets++;
    this.recent.delete(username);
  }

  forgetAll(): void {
    this.forgets++;
    this.recent.clear();
  }

  /** A user row no older than `maxAgeMs`. */
  async findRecent(username: string): Promise<UserRecord | null> {
    const hit = this.recent.get(username);
    if (hit && this.now() - hit.at <= this.maxAgeMs) return hit.user;
    return this.find(username);
  }

  private remember(username: string, user: UserRecord | null, at: number): void {
    if (this.maxAgeMs <= 0) return;
    // Bounded: the oldest entry goes first (Map keeps insertion order).
    this.recent.delete(username);
    if (this.recent.size >= 50_000) this.recent.delete(this.recent.keys().next().value as string);
    this.recent.set(username, { at, user });
  }
}
