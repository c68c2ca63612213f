import { STORAGE_USER_COLUMNS, TABLES, type S3CredentialRow } from '@cairn/contract';
import type { Knex } from 'knex';
import { FencedCache } from '../credentials/fenced-cache';
import { unreachable } from '../credentials/unreachable';
import type { UserRecord } from '../credentials/users';

/** One S3 credential of a user of the served cluster, with that user's row as it read then. */
export interface S3CredentialRecord {
  /** The credential's row id: never reused, so a re-created credential is a different one. */
  id: string;
  accessKey: string;
  /** The secret as stored, sealed (packages/domain/src/s3-secret-crypto.ts); opened per check. */
  sealedSecret: string;
  user: UserRecord;
}

const USER_COLUMNS = STORAGE_USER_COLUMNS.map((c) => `u.${c} as user_${c}`);

type Row = Pick<S3CredentialRow, 'id' | 'access_key' | 'secret_sealed'> & Record<string, unknown>;

const toRecord = (row: Row): S3CredentialRecord => ({
  id: String(row.id),
  accessKey: row.access_key,
  sealedSecret: row.secret_sealed,
  user: {
    id: String(row.user_id),
    username: row.user_username as string,
    passwordHash: row.user_password_hash as string,
    enabled: row.user_enabled as boolean,
    isSuperuser: row.user_is_superuser as boolean,
    generation: String(row.user_generation),
  },
});

/**
 * Reads S3 credentials by access key, joined with their user's row and restricted to the served
 * cluster (a key of another cluster's user is unknown here), and remembers each answer (also
 * "no such key") for at most `maxAgeMs`.
 *
 * Like the users' logins (UserDirectory.findForLogin), a signature check uses a remembered answer
 * only behind the change feed's fence: the feed hears `cairn_s3_credentials` (a credential
 * created, changed or deleted, by access key) and `cairn_storage_users` (its user disabled,
 * changed or deleted) on one connection, so once the fence has passed every change committed
 * before the request is reflected here. Without a feed every check reads its row: a deleted
 * credential or a disabled user fails the very next check either way.
 */
export class S3CredentialDirectory extends FencedCache<S3CredentialRecord | null> {
  /**
   * Access keys this gateway deleted on the primary (OS-EC2) while it reads a standby, with when:
   * gone here too until the standby has replayed past that moment, so a key its owner was told is
   * deleted never signs a request through this gateway again, replication lag or not.
   */
  private readonly deletedHere = new Map<string, number>();
  /** Set on a standby (ChangeLogFeed.replayedUpTo): the primary's time up to which every commit is visible here. */
  private replayedUpTo?: () => number;

  constructor(
    private readonly db: Knex,
    private readonly clusterId: number,
    maxAgeMs: number,
    now: () => number = Date.now,
  ) {
    super(maxAgeMs, now);
  }

  /** The credential as Postgres has it now. */
  async read(accessKey: string): Promise<S3CredentialRecord | null> {
    if (this.deletedButNotReplayed(accessKey)) return null;
    return this.readFresh(accessKey, () => this.query(accessKey));
  }

  /** The credential a signature check uses: remembered only behind the fence (see the class comment). */
  async find(accessKey: string): Promise<S3CredentialRecord | null> {
    if (this.deletedButNotReplayed(accessKey)) return null;
    return this.readCurrent(accessKey, () => this.query(accessKey));
  }

  /** Told by a change-log feed how far the standby read here has replayed. */
  watchReplay(replayedUpTo: () => number): void {
    this.replayedUpTo = replayedUpTo;
  }

  /** This gateway deleted `accessKey` on the primary, just now (its commit has returned). */
  deletedOnPrimary(accessKey: string): void {
    this.forget(accessKey);
    if (!this.replayedUpTo) return;
    const replayed = this.replayedUpTo();
    for (const [key, at] of this.deletedHere) if (replayed > at) this.deletedHere.delete(key);
    this.deletedHere.set(accessKey, Date.now());
  }

  private deletedButNotReplayed(accessKey: string): boolean {
    const at = this.deletedHere.get(accessKey);
    if (at === undefined) return false;
    if ((this.replayedUpTo?.() ?? Number.POSITIVE_INFINITY) <= at) return true;
    this.deletedHere.delete(accessKey);
    return false;
  }

  /** A notice named this user (by name): its credentials' remembered rows carry its old state. */
  forgetUser(username: string): void {
    this.forgetWhere((credential) => credential?.user.username === username);
  }

  private async query(accessKey: string): Promise<S3CredentialRecord | null> {
    const row = (await this.db(`${TABLES.s3Credentials} as c`)
      .join(`${TABLES.storageUsers} as u`, 'u.id', 'c.storage_user_id')
      .select(['c.id', 'c.access_key', 'c.secret_sealed', ...USER_COLUMNS])
      .where({ 'c.access_key': accessKey, 'u.cluster_id': this.clusterId })
      .first()
      .catch(unreachable)) as Row | undefined;
    return row ? toRecord(row) : null;
  }
}
