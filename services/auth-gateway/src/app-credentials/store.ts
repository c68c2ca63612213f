import { randomBytes } from 'node:crypto';
import type { AccessRule } from '@cairn/domain';
import {
  APPLICATION_CREDENTIAL_COLUMNS,
  STORAGE_USER_ACTOR_PREFIX,
  TABLES,
  type ApplicationCredentialRow,
} from '@cairn/contract';
import type { Knex } from 'knex';
import { FencedCache } from '../credentials/fenced-cache';
import { unreachable } from '../credentials/unreachable';
import { JOINED_USER_COLUMNS, joinedUser, type UserRecord } from '../credentials/users';
import { deleteS3CredentialsBoundTo } from '../s3/s3-credential-writes';

/** An application credential as the gateway uses it; the secret only as its hash. */
export interface ApplicationCredential {
  id: string;
  userId: string;
  /** The owner's name (= its Keystone user id and project). */
  username: string;
  name: string;
  description: string | null;
  secretHash: string;
  expiresAt: string | null;
  roles: string[];
  unrestricted: boolean;
  accessRules: AccessRule[] | null;
  createdAt: string;
}

export interface NewApplicationCredential {
  name: string;
  description: string | null;
  secretHash: string;
  expiresAt: string | null;
  roles: string[];
  unrestricted: boolean;
  accessRules: AccessRule[] | null;
}

/** Who made a write, for the audit record: the storage user whose token it was. */
export interface ApplicationCredentialActor {
  user: UserRecord;
  requestId: string | null;
}

export class DuplicateApplicationCredential extends Error {}
export class TooManyApplicationCredentials extends Error {}
export class ApplicationCredentialUserGone extends Error {}

/**
 * At most this many per user, as Keystone's `[application_credential] user_limit` bounds them:
 * a leaked token must not be able to fill the table.
 */
export const MAX_APPLICATION_CREDENTIALS_PER_USER = 100;

type Row = ApplicationCredentialRow & { username: string };
const TABLE = TABLES.applicationCredentials;
const COLUMNS = [...APPLICATION_CREDENTIAL_COLUMNS.map((c) => `${TABLE}.${c}`), `${TABLES.storageUsers}.username`];

/** jsonb comes back parsed from pg, and as text from some drivers: either way a value. */
const json = <T>(v: unknown): T => (typeof v === 'string' ? (JSON.parse(v) as T) : (v as T));
const iso = (v: Date | string | null): string | null => (v === null ? null : new Date(v).toISOString());

const toCredential = (r: Row): ApplicationCredential => ({
  id: r.id,
  userId: String(r.storage_user_id),
  username: r.username,
  name: r.name,
  description: r.description,
  secretHash: r.secret_hash,
  expiresAt: iso(r.expires_at),
  roles: json<string[]>(r.roles),
  unrestricted: r.unrestricted,
  accessRules: json<AccessRule[] | null>(r.access_rules),
  createdAt: iso(r.created_at)!,
});

/** Postgres's unique_violation and foreign_key_violation. */
const codeOf = (e: unknown): unknown => (e as { code?: unknown } | null)?.code;

/**
 * The application credentials of one cluster's users. `findRecent` (token validation) remembers
 * an answer for at most `maxAgeMs` (the user cache's age, at most a second), so a credential
 * deleted anywhere (here, through the management API, or by deleting its user) voids its tokens
 * on every replica within that time even without a notice. Logins (`findForLogin`) use a
 * remembered answer only behind the change feed's fence, as password logins use user rows, so they
 * see every change committed before they arrived without reading Postgres each time.
 */
export class ApplicationCredentialStore extends FencedCache<ApplicationCredential | null> {
  /**
   * What logins found (the credential and its owner's row, or nothing), by `id:<id>` or
   * `name:<user>\0<name>`: forgotten when the credential or its owner changes.
   */
  private readonly logins: LoginLookups;

  constructor(
    private readonly db: Knex,
    private readonly clusterId: number,
    maxAgeMs: number,
    /** Where creates and deletes go: the primary, when `db` is a standby. */
    private readonly writeDb: Knex = db,
  ) {
    super(maxAgeMs);
    this.logins = new LoginLookups(maxAgeMs);
  }

  override follow(fence?: () => Promise<boolean>): void {
    this.logins.follow(fence);
    super.follow(fence);
  }

  /** A credential changed (its notice, or a write here): also every login answer naming it, and every "none". */
  override forget(id: string): void {
    super.forget(id);
    this.logins.forget(`id:${id}`);
    this.logins.forgetWhere((found) => found === null || found.credential.id === id);
  }

  override forgetAll(): void {
    super.forgetAll();
    this.logins.forgetAll();
  }

  /** A user changed (its notice): login answers with its row, and every "none" (it may own credentials now). */
  forgetUser(username: string): void {
    this.logins.forgetWhere((found) => found === null || found.user.username === username);
  }

  private query() {
    return this.db(TABLE)
      .join(TABLES.storageUsers, `${TABLES.storageUsers}.id`, `${TABLE}.storage_user_id`)
      .where(`${TABLES.storageUsers}.cluster_id`, this.clusterId)
      .select(COLUMNS);
  }

  private async one(where: Record<string, unknown>): Promise<ApplicationCredential | null> {
    const row = (await this.query().where(where).first().catch(unreachable)) as Row | undefined;
    return row ? toCredential(row) : null;
  }

  /**
   * As Postgres has it now: remembered only behind the change feed's fence, which has
   * applied every change committed before the call (the notices of migration
   * 20261127180000_application_credential_notices); without a feed, read afresh. Only an id of
   * Keystone's shape can exist, so nothing else is asked.
   */
  findById(id: string): Promise<ApplicationCredential | null> {
    if (!/^[0-9a-f]{32}$/.test(id)) return Promise.resolve(null);
    return this.readCurrent(id, () => this.one({ [`${TABLE}.id`]: id }));
  }

  /** No older than `maxAgeMs` (token validation). */
  findRecent(id: string): Promise<ApplicationCredential | null> {
    if (!/^[0-9a-f]{32}$/.test(id)) return Promise.resolve(null);
    return this.readRecent(id, () => this.one({ [`${TABLE}.id`]: id }));
  }

  /**
   * A login's lookup: the credential (by id, or by its user's name and its own name) with its
   * owner's row, as Postgres had it when the login arrived: a remembered answer (found or not)
   * behind the fence, else one query, so that it costs the same whether either exists; a name
   * that cannot be a user's still runs it. The owner is in the served cluster.
   */
  findForLogin(by: { id: string } | { username: string; name: string }): Promise<FoundForLogin | null> {
    const key = 'id' in by ? `id:${by.id}` : `name:${by.username}\0${by.name}`;
    return this.logins.read(key, () => this.queryForLogin(by));
  }

  private async queryForLogin(by: { id: string } | { username: string; name: string }): Promise<FoundForLogin | null> {
    const q = this.db(TABLE)
      .join(`${TABLES.storageUsers} as u`, 'u.id', `${TABLE}.storage_user_id`)
      .where('u.cluster_id', this.clusterId)
      .select([...APPLICATION_CREDENTIAL_COLUMNS.map((c) => `${TABLE}.${c}`), ...JOINED_USER_COLUMNS]);
    // An id not of Keystone's shape matches no row, but is asked all the same (the same cost).
    if ('id' in by) void q.where(`${TABLE}.id`, by.id);
    else void q.where({ 'u.username': by.username, [`${TABLE}.name`]: by.name });
    const row = (await q.first().catch(unreachable)) as
      (ApplicationCredentialRow & Record<string, unknown>) | undefined;
    if (!row) return null;
    const user = joinedUser(row);
    return { credential: toCredential({ ...row, username: user.username }), user };
  }

  findByName(userId: string, name: string): Promise<ApplicationCredential | null> {
    return this.one({ [`${TABLE}.storage_user_id`]: userId, [`${TABLE}.name`]: name });
  }

  async list(userId: string, name?: string): Promise<ApplicationCredential[]> {
    const q = this.query()
      .where(`${TABLE}.storage_user_id`, userId)
      .orderBy(`${TABLE}.created_at`)
      .orderBy(`${TABLE}.id`);
    if (name !== undefined) void q.where(`${TABLE}.name`, name);
    const rows = (await q.catch(unreachable)) as Row[];
    return rows.map(toCredential);
  }

  /** Stores a new credential with its audit record, under a per-user lock so that the cap holds. */
  async create(actor: ApplicationCredentialActor, input: NewApplicationCredential): Promise<ApplicationCredential> {
    const userId = actor.user.id;
    const id = randomBytes(16).toString('hex');
    return this.writeDb
      .transaction(async (trx) => {
        await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [
          `cairn application credentials of user ${userId}`,
        ]);
        const [{ count }] = (await trx(TABLE).where('storage_user_id', userId).count({ count: '*' })) as [
          { count: string | number },
        ];
        if (Number(count) >= MAX_APPLICATION_CREDENTIALS_PER_USER) throw new TooManyApplicationCredentials();
        const [row] = (await trx(TABLE)
          .insert({
            id,
            storage_user_id: userId,
            name: input.name,
            description: input.description,
            secret_hash: input.secretHash,
            expires_at: input.expiresAt,
            roles: JSON.stringify(input.roles),
            unrestricted: input.unrestricted,
            access_rules: input.accessRules === null ? null : JSON.stringify(input.accessRules),
          })
          .returning([...APPLICATION_CREDENTIAL_COLUMNS])) as ApplicationCredentialRow[];
        const created = toCredential({ ...row!, username: actor.user.username });
        await auditApplicationCredential(
          trx,
          actorName(actor.user.username),
          actor.requestId,
          this.clusterId,
          'create',
          created,
        );
        return created;
      })
      .catch((e: unknown) => {
        if (codeOf(e) === '23505') throw new DuplicateApplicationCredential();
        if (codeOf(e) === '23503') throw new ApplicationCredentialUserGone();
        return unreachable(e);
      });
  }

  /**
   * Whether the user's credential existed and is gone (with its audit record), and the access keys
   * of the S3 credentials made with its tokens, deleted with it (each audited too).
   */
  async delete(
    actor: ApplicationCredentialActor,
    id: string,
  ): Promise<{ deleted: boolean; boundAccessKeys: string[] }> {
    if (!/^[0-9a-f]{32}$/.test(id)) return { deleted: false, boundAccessKeys: [] };
    const outcome = await this.writeDb
      .transaction(async (trx) => {
        // Its bound S3 keys first, each audited (the cascade would take them unrecorded); under the
        // user's S3 lock, which every S3 credential creation takes, so none is bound meanwhile.
        await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [
          `cairn s3 credentials of user ${actor.user.id}`,
        ]);
        const owned = await trx(TABLE).where({ id, storage_user_id: actor.user.id }).first('id');
        if (!owned) return { deleted: false, boundAccessKeys: [] };
        const boundAccessKeys = await deleteS3CredentialsBoundTo(trx, actor, this.clusterId, id);
        const [row] = (await trx(TABLE)
          .where({ id, storage_user_id: actor.user.id })
          .delete()
          .returning([...APPLICATION_CREDENTIAL_COLUMNS])) as ApplicationCredentialRow[];
        // Deleted meanwhile by another writer (the management API): nothing of it is left to audit here.
        if (!row) return { deleted: false, boundAccessKeys };
        await auditApplicationCredential(
          trx,
          actorName(actor.user.username),
          actor.requestId,
          this.clusterId,
          'delete',
          toCredential({ ...row, username: actor.user.username }),
        );
        return { deleted: true, boundAccessKeys };
      })
      .catch(unreachable);
    this.forget(id);
    return outcome;
  }
}

const actorName = (username: string): string => `${STORAGE_USER_ACTOR_PREFIX}${username}`.slice(0, 64);

/**
 * The audit record of a write, in the management API's trail (its `application_credentials`
 * resource, whose URIs these are): everything but the secret and its hash.
 */
async function auditApplicationCredential(
  trx: Knex.Transaction,
  operatorName: string,
  requestId: string | null,
  clusterId: number,
  action: 'create' | 'delete',
  c: ApplicationCredential,
): Promise<void> {
  const uri = `/api/v1/application_credentials/${c.id}/`;
  const snapshot = JSON.stringify({
    access_rules: c.accessRules,
    cluster: `/api/v1/clusters/${clusterId}/`,
    created_at: c.createdAt,
    description: c.description,
    expires_at: c.expiresAt,
    id: c.id,
    name: c.name,
    resource_uri: uri,
    roles: c.roles,
    unrestricted: c.unrestricted,
    user: `/api/v1/users/${c.userId}/`,
  });
  await trx(TABLES.audit).insert({
    operator_id: null,
    operator_name: operatorName,
    action,
    target_type: 'application_credentials',
    target_id: c.id,
    target_name: c.name.slice(0, 255),
    target_uri: uri,
    before: action === 'delete' ? snapshot : null,
    after: action === 'create' ? snapshot : null,
    request_id: requestId,
  });
}

/** A credential with its owner's row, as a login needs them. */
export interface FoundForLogin {
  credential: ApplicationCredential;
  user: UserRecord;
}

/** The cache of login lookups (FencedCache's rules; the store tells it what changed). */
class LoginLookups extends FencedCache<FoundForLogin | null> {
  read(key: string, query: () => Promise<FoundForLogin | null>): Promise<FoundForLogin | null> {
    return this.readCurrent(key, query);
  }
}
