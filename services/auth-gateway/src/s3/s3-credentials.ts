import { TABLES, type ApplicationCredentialRow, type S3CredentialRow } from '@cairn/contract';
import type { AccessRule } from '@cairn/domain';
import type { Knex } from 'knex';
import { FencedCache } from '../credentials/fenced-cache';
import { unreachable } from '../credentials/unreachable';
import { JOINED_USER_COLUMNS, joinedUser, type UserRecord } from '../credentials/users';

/** The application credential an EC2 credential was made with, as it read with the credential. */
export interface BoundApplicationCredential {
  id: string;
  /** False when the row is gone (or is another user's): the credential then signs nothing. */
  present: boolean;
  name: string;
  /** Epoch ms; null: never expires. */
  expiresAt: number | null;
  roles: string[];
  unrestricted: boolean;
  accessRules: AccessRule[] | null;
}

/** One S3 credential of a user of the served cluster, with that user's row as it read then. */
export interface S3CredentialRecord {
  /** The credential's row id: never reused, so a re-created credential is a different one. */
  id: string;
  accessKey: string;
  /** The secret as stored, sealed (packages/domain/src/s3-secret-crypto.ts); opened per check. */
  sealedSecret: string;
  /** Epoch ms; null: never expires. Compared with the clock at each check, never cached as a verdict. */
  expiresAt: number | null;
  /** Set when it was made with an application credential's token (OS-EC2). */
  applicationCredential: BoundApplicationCredential | null;
  user: UserRecord;
}

const APP_CRED_COLUMNS = (
  ['id', 'name', 'expires_at', 'roles', 'unrestricted', 'access_rules'] as const satisfies ReadonlyArray<
    keyof ApplicationCredentialRow
  >
).map((c) => `a.${c} as app_cred_${c}`);

type Row = Pick<S3CredentialRow, 'id' | 'access_key' | 'secret_sealed' | 'expires_at' | 'application_credential_id'> &
  Record<string, unknown>;

/** jsonb comes back parsed from pg, and as text from some drivers: either way a value. */
const json = <T>(v: unknown): T => (typeof v === 'string' ? (JSON.parse(v) as T) : (v as T));
const epochMs = (v: unknown): number | null =>
  v === null || v === undefined ? null : new Date(v as string | Date).getTime();

const boundOf = (row: Row): BoundApplicationCredential | null => {
  if (row.application_credential_id === null || row.application_credential_id === undefined) return null;
  const present = row.app_cred_id !== null && row.app_cred_id !== undefined;
  return {
    id: row.application_credential_id,
    present,
    name: present ? (row.app_cred_name as string) : '',
    expiresAt: present ? epochMs(row.app_cred_expires_at) : null,
    roles: present ? json<string[]>(row.app_cred_roles) : [],
    unrestricted: present ? (row.app_cred_unrestricted as boolean) : false,
    accessRules: present ? json<AccessRule[] | null>(row.app_cred_access_rules) : null,
  };
};

const toRecord = (row: Row): S3CredentialRecord => ({
  id: String(row.id),
  accessKey: row.access_key,
  sealedSecret: row.secret_sealed,
  expiresAt: epochMs(row.expires_at),
  applicationCredential: boundOf(row),
  user: joinedUser(row),
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
 *
 * The row carries the application credential it is bound to, if any, read in the same query.
 * Deleting that credential deletes the S3 row (the foreign key's cascade), which is announced like
 * any delete; and no remembered answer is older than `maxAgeMs` (CAIRN_USER_CACHE_MS, at most a
 * second) in any case. Expiry times are compared with the clock by the check, not here, so an
 * expired key is refused from its expiry on, remembered or not.
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
    // The bound application credential in the same read, only if it is the same user's: a row
    // naming another user's credential reads as one that is gone, and signs nothing.
    const row = (await this.db(`${TABLES.s3Credentials} as c`)
      .join(`${TABLES.storageUsers} as u`, 'u.id', 'c.storage_user_id')
      .leftJoin(`${TABLES.applicationCredentials} as a`, (on) => {
        on.on('a.id', '=', 'c.application_credential_id').andOn('a.storage_user_id', '=', 'c.storage_user_id');
      })
      .select([
        'c.id',
        'c.access_key',
        'c.secret_sealed',
        'c.expires_at',
        'c.application_credential_id',
        ...JOINED_USER_COLUMNS,
        ...APP_CRED_COLUMNS,
      ])
      .where({ 'c.access_key': accessKey, 'u.cluster_id': this.clusterId })
      .first()
      .catch(unreachable)) as Row | undefined;
    return row ? toRecord(row) : null;
  }
}
