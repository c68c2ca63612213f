import { REPLACE_FOREIGN_HASH_FUNCTION, STORAGE_USER_COLUMNS, TABLES, type StorageUserRow } from '@cairn/contract';
import type { Knex } from 'knex';
import { FencedCache } from './fenced-cache';
import { unreachable } from './unreachable';

const COLUMNS = [...STORAGE_USER_COLUMNS];

/**
 * What the gateway needs to know of a storage user (a `storage_users` row). Its one write to users
 * is replaceForeignHash().
 */
export interface UserRecord {
  /** Never reused, unlike a name: a re-created user is a different user to every old token. */
  id: string;
  username: string;
  passwordHash: string;
  enabled: boolean;
  isSuperuser: boolean;
  generation: string;
  /** Imported from tempauth: its tempauth user name, with which V1 logs in as `<username>:<tempauthUser>`. */
  tempauthUser?: string | null;
}

/**
 * For a query that joins `storage_users as u` to a credential: the user's columns, each selected
 * as `user_<column>`, and the UserRecord read back from them (one shape for every credential).
 */
export const JOINED_USER_COLUMNS = STORAGE_USER_COLUMNS.map((c) => `u.${c} as user_${c}`);

export function joinedUser(row: Record<string, unknown>): UserRecord {
  return {
    id: String(row.user_id),
    username: row.user_username as string,
    passwordHash: row.user_password_hash as string,
    enabled: row.user_enabled as boolean,
    isSuperuser: row.user_is_superuser as boolean,
    generation: String(row.user_generation),
    tempauthUser: (row.user_tempauth_user as string | null | undefined) ?? null,
  };
}

/**
 * Reads storage users of one cluster from Postgres and remembers each row for at most `maxAgeMs`
 * (a fraction of a second) counted from before its query (FencedCache).
 *
 * The change notices (see UserChangeFeed) drop a changed user's row as soon as they arrive. Token
 * validation may use a remembered row at any time: a disabled, deleted or changed user is refused
 * everywhere within `maxAgeMs` at the latest, without a query per validation. Logins may only
 * behind the feed's fence (findForLogin), and read the row afresh while there is no feed, so for
 * them a change takes effect at once either way.
 */
export class UserDirectory extends FencedCache<UserRecord | null> {
  constructor(
    private readonly db: Knex,
    private readonly clusterId: number,
    maxAgeMs: number,
    now: () => number = Date.now,
  ) {
    super(maxAgeMs, now);
  }

  /** The row as Postgres has it now. */
  find(username: string): Promise<UserRecord | null> {
    return this.readFresh(username, () => this.query(username));
  }

  /**
   * The row a login checks the password against. A remembered one only once the change feed's
   * fence has passed: then every change committed before this call has been heard and applied,
   * so the row is current (a notice's own delay cannot let a just-disabled user in). `fenced`: a
   * fence sent when the login arrived (startFence), else one is sent now.
   */
  findForLogin(username: string, fenced?: Promise<boolean>): Promise<UserRecord | null> {
    return this.readCurrent(username, () => this.query(username), fenced);
  }

  /** A user row no older than `maxAgeMs`. */
  findRecent(username: string): Promise<UserRecord | null> {
    return this.readRecent(username, () => this.query(username));
  }

  /**
   * Replaces an imported user's foreign hash with Cairn's hash of the same password, just verified
   * against it: through the migration's compare-and-set function, so a hash changed meanwhile (a
   * new password set by an operator) is left alone. Leaves `generation`, hence the user's tokens,
   * as they are. True when this call replaced it. `through`: the primary, where the gateway reads a
   * standby.
   */
  async replaceForeignHash(user: UserRecord, newHash: string, through: Knex = this.db): Promise<boolean> {
    const result = (await through
      .raw(`SELECT ${REPLACE_FOREIGN_HASH_FUNCTION}(?::bigint, ?, ?) AS replaced`, [
        user.id,
        user.passwordHash,
        newHash,
      ])
      .catch(unreachable)) as { rows: Array<{ replaced: boolean }> };
    // The row changed: the next read sees the new hash (the change notice says so too).
    this.forget(user.username);
    return result.rows[0]?.replaced === true;
  }

  private async query(username: string): Promise<UserRecord | null> {
    const where: Pick<StorageUserRow, 'cluster_id' | 'username'> = { cluster_id: this.clusterId, username };
    const row = (await this.db(TABLES.storageUsers).select(COLUMNS).where(where).first().catch(unreachable)) as
      Omit<StorageUserRow, 'cluster_id'> | undefined;
    return row
      ? {
          id: String(row.id),
          username: row.username,
          passwordHash: row.password_hash,
          enabled: row.enabled,
          isSuperuser: row.is_superuser,
          generation: String(row.generation),
          tempauthUser: row.tempauth_user ?? null,
        }
      : null;
  }
}
