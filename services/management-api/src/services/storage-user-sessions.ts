import { errors, generateApiKey, hashApiKey, usernameSchema, type StorageSignInInput } from '@cairn/domain';
import type { Db } from '../db/database';
import { findClusterByName } from '../repositories/clusters';
import { findStorageUserByName } from '../repositories/storage-users';
import {
  deleteStorageUserSession,
  findLiveStorageUserSession,
  insertStorageUserSession,
  touchStorageUserSession,
  type LiveStorageUserSession,
  type StorageUserSessionRecord,
} from '../repositories/storage-user-sessions';
import { touchIntervalOf, type ConsoleSessionSettings } from './console-sessions';
import { checkPasswordWithGateway, type GatewayLoginResult } from './gateway-login';

export type { LiveStorageUserSession };

/** A session id is 256 random bits in base64url, like an API key; anything else is not looked up. */
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

/** One sentence for every wrong cluster, user or password: which one was wrong is not told. */
const INVALID = 'The cluster, user name or password is not right.';

export const STORAGE_SESSION_ENDED =
  'Your session has ended (signed out, idle too long, past its maximum length, or your user was changed or disabled). Sign in again.';

/**
 * Storage users' console sessions: opened once the cluster's gateway has accepted the user's
 * password, kept by the SHA-256 of their id, and honoured only while the user is enabled and
 * unchanged (repositories/storage-user-sessions.ts). The same lifetimes as operators' sessions.
 */
export class StorageUserSessions {
  constructor(
    private readonly db: Db,
    readonly settings: ConsoleSessionSettings,
  ) {}

  /**
   * Signs in: the cluster by name, the password checked by that cluster's gateway (its limits
   * apply; past one, 429 with its sentence); the session belongs to the user's row as it was before
   * the check (its generation). A cluster that
   * does not exist is refused as a wrong password is, after no check: cluster names are not secret
   * (they are in every storage URL), and asking a gateway that is not the cluster's cannot be right.
   */
  async open(
    input: StorageSignInInput,
    clientAddress: string | undefined,
  ): Promise<{ sessionId: string; session: LiveStorageUserSession }> {
    const cluster = await findClusterByName(this.db, input.cluster);
    if (!cluster) throw errors.unauthenticated(INVALID);
    // The row as it is before the check: were the password changed while the gateway checks the old
    // one, the session would belong to the old generation and be refused at its first request.
    // A name no user can have (a NUL, say) is looked up nowhere; the gateway refuses it too.
    const before = usernameSchema.validate(input.user).error
      ? null
      : await findStorageUserByName(this.db, cluster.id, input.user);
    const verdict: GatewayLoginResult = await checkPasswordWithGateway(
      cluster,
      input.user,
      input.password,
      clientAddress,
    );
    if (!verdict.ok) {
      if (verdict.reason === 'limited') throw errors.tooManyRequests(verdict.message, verdict.retryAfterSeconds);
      throw errors.unauthenticated(INVALID);
    }
    // The gateway names the user it signed in; it must be the row read above, still enabled.
    const user = before;
    if (!user || !user.enabled || verdict.username !== user.username) throw errors.unauthenticated(INVALID);
    const sessionId = generateApiKey();
    const created: StorageUserSessionRecord = await insertStorageUserSession(
      this.db,
      hashApiKey(sessionId),
      user.id,
      user.generation,
      this.settings.maxSeconds,
    );
    const session: LiveStorageUserSession = {
      ...created,
      username: user.username,
      clusterId: cluster.id,
      clusterName: cluster.name,
      idleSeconds: 0,
    };
    return { sessionId, session };
  }

  /** The live session with this id, or null (unknown, ended, or its user gone, disabled or changed); marks it used. */
  async find(sessionId: string | undefined): Promise<LiveStorageUserSession | null> {
    if (sessionId === undefined || !SESSION_ID.test(sessionId)) return null;
    const session = await findLiveStorageUserSession(this.db, hashApiKey(sessionId), this.settings.idleSeconds);
    const every = touchIntervalOf(this.settings);
    if (session && session.idleSeconds >= every) await touchStorageUserSession(this.db, session.id, every);
    return session;
  }

  /** Like find, but a request without a live session is refused with a sentence that says why. */
  async authenticate(sessionId: string): Promise<LiveStorageUserSession> {
    const session = await this.find(sessionId);
    if (!session) throw errors.unauthenticated(STORAGE_SESSION_ENDED);
    return session;
  }

  /** Signs out: the session row goes. */
  async close(sessionId: string): Promise<void> {
    await deleteStorageUserSession(this.db, hashApiKey(sessionId));
  }
}
