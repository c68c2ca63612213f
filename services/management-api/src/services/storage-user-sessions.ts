import { createSecretKey, hkdfSync } from 'node:crypto';
import {
  errors,
  generateApiKey,
  hashApiKey,
  isUsername,
  openS3Secret,
  S3SecretError,
  sealS3Secret,
  type S3SecretKeyring,
  type StorageUser,
  type StorageSignInInput,
} from '@cairn/domain';
import type { Db } from '../db/database';
import { findClusterByName, getCluster } from '../repositories/clusters';
import { getApplicationCredential } from '../repositories/application-credentials';
import { findStorageUserByName, getStorageUser } from '../repositories/storage-users';
import {
  deleteStorageUserSession,
  deleteStorageUserSessionById,
  findLiveStorageUserSession,
  insertStorageUserSession,
  storageSessionGatewayToken,
  touchStorageUserSession,
  type LiveStorageUserSession,
  type StorageUserSessionRecord,
} from '../repositories/storage-user-sessions';
import { touchIntervalOf, type ConsoleSessionSettings } from './console-sessions';
import { loginWithGateway, revokeGatewayToken, type GatewayLogin, type GatewayLoginResult } from './gateway-login';
import {
  auditSignIn,
  auditSignInFailure,
  auditSignOut,
  type SignInFailure,
  type SignInMethod,
  type SignInOrigin,
} from './storage-sign-in-audit';

export type { LiveStorageUserSession };

/** A session id is 256 random bits in base64url, like an API key; anything else is not looked up. */
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

/** One sentence for every wrong cluster, user or password: which one was wrong is not told. */
const INVALID = 'The cluster, user name or password is not right.';
/**
 * An access-ruled credential's token reaches only the object-store requests its rules name: not
 * the gateway's API (My keys), and Swift answers anything else with 401, as for a dead token, so a
 * session could not tell "outside the rules" from "signed out" (Sharing). Told only to whoever
 * gave the right secret.
 */
export const ACCESS_RULED_SIGN_IN =
  'This application credential has access rules, which limit it to some object-store requests; the console needs more. Sign in with your password, or with an application credential without access rules.';

/** Likewise for every wrong cluster, credential id, name, user or secret. */
const INVALID_CREDENTIAL =
  'The cluster or the application credential (its id, or its name and user, or its secret) is not right.';

export const STORAGE_SESSION_ENDED =
  'Your session has ended (signed out, idle too long, past its maximum length, your user was changed or disabled, or the application credential you signed in with was deleted or expired). Sign in again.';

/**
 * The gateway token a sign-in got is kept with its session, sealed as S3 secrets are (AES-256-GCM,
 * s3-secret-crypto.ts), but under a key derived from the session id, not a configured one: the id
 * is stored only as its SHA-256, so neither the database nor the API's configuration opens a token;
 * only a request bearing the session's cookie does, while the session lives. The associated data
 * names the user, so a sealed token moved onto another user's session does not open.
 */
const TOKEN_KEY_ID = 'session';
const sessionKeyring = (sessionId: string): S3SecretKeyring => ({
  currentKeyId: TOKEN_KEY_ID,
  keys: new Map([
    [
      TOKEN_KEY_ID,
      createSecretKey(Buffer.from(hkdfSync('sha256', sessionId, '', 'cairn storage session gateway token v1', 32))),
    ],
  ]),
});
const tokenLabel = (userId: string) => `gateway token of storage user ${userId}`;

/** The session's gateway token could not be used: the sign-in that made it is over for "My keys". */
export const GATEWAY_TOKEN_ENDED =
  "Your sign-in at the cluster's authentication service has ended (expired, or revoked there); sign in again.";

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
   * Sign-ins and refusals are audited (services/storage-sign-in-audit.ts says which, and what not).
   */
  async open(
    input: StorageSignInInput,
    origin: SignInOrigin,
  ): Promise<{ sessionId: string; session: LiveStorageUserSession }> {
    const invalid = () => errors.unauthenticated('password' in input ? INVALID : INVALID_CREDENTIAL);
    const cluster = await findClusterByName(this.db, input.cluster);
    if (!cluster) throw invalid();
    // The row as it is before the check: were the password changed while the gateway checks the old
    // one, the session would belong to the old generation and be refused at its first request.
    const login: GatewayLogin =
      'password' in input
        ? { method: 'password', username: input.user, password: input.password }
        : {
            method: 'application_credential',
            ...(input.application_credential_id !== undefined
              ? { id: input.application_credential_id }
              : { name: input.application_credential_name, username: input.user }),
            secret: input.application_credential_secret,
          };
    const { user: before, credentialId } = await this.ownerBefore(cluster.id, login);
    const how: SignInMethod =
      login.method === 'password' ? { method: 'password' } : { method: 'application_credential', id: credentialId };
    const refuse = async (reason: SignInFailure, error: Error) => {
      await auditSignInFailure(this.db, before, cluster, how, reason, origin);
      return error;
    };
    // Asked even when no such user or credential is known here: the gateway counts the failure.
    const verdict: GatewayLoginResult = await loginWithGateway(cluster, login, origin.clientAddress);
    if (!verdict.ok) {
      if (verdict.reason === 'limited') throw errors.tooManyRequests(verdict.message, verdict.retryAfterSeconds);
      throw await refuse('wrong_credentials', invalid());
    }
    // The gateway names the user it signed in; it must be the row read above, still enabled.
    const user = before;
    if (!user || !user.enabled || verdict.username !== user.username) {
      await revokeGatewayToken(cluster, verdict.token);
      throw await refuse('user_disabled_or_changed', invalid());
    }
    const signedInWith: SignInMethod = verdict.applicationCredential
      ? { method: 'application_credential', id: verdict.applicationCredential.id }
      : { method: 'password' };
    if (verdict.applicationCredential?.accessRuled) {
      await revokeGatewayToken(cluster, verdict.token);
      await auditSignInFailure(this.db, user, cluster, signedInWith, 'access_rules', origin);
      throw errors.forbidden(ACCESS_RULED_SIGN_IN);
    }
    const sessionId = generateApiKey();
    let created: StorageUserSessionRecord;
    try {
      created = await this.db.transaction(async (trx) => {
        const inserted = await insertStorageUserSession(
          trx,
          hashApiKey(sessionId),
          user.id,
          user.generation,
          this.settings.maxSeconds,
          sealS3Secret(sessionKeyring(sessionId), tokenLabel(user.id), verdict.token),
          verdict.applicationCredential?.id ?? null,
        );
        await auditSignIn(trx, user, cluster, signedInWith, inserted, origin);
        return inserted;
      });
    } catch (e) {
      await revokeGatewayToken(cluster, verdict.token);
      throw e;
    }
    const session: LiveStorageUserSession = {
      ...created,
      username: user.username,
      clusterId: cluster.id,
      clusterName: cluster.name,
      idleSeconds: 0,
    };
    return { sessionId, session };
  }

  /**
   * The user a sign-in names, as its row is before the gateway's check: by name, or by the owner of
   * the application credential it names by id (the gateway binds an id to its owner), with that
   * credential's id. Null when there is none on this cluster; the gateway is asked all the same,
   * and its yes is then refused.
   */
  private async ownerBefore(
    clusterId: number,
    login: GatewayLogin,
  ): Promise<{ user: StorageUser | null; credentialId: string | null }> {
    if (login.method === 'application_credential' && login.id !== undefined) {
      const credential = await getApplicationCredential(this.db, login.id);
      if (!credential || credential.clusterId !== clusterId) return { user: null, credentialId: null };
      return { user: await getStorageUser(this.db, credential.userId), credentialId: credential.id };
    }
    // A name no user can have (a NUL, say) is looked up nowhere; the gateway refuses it too.
    const name = login.username ?? '';
    const user = !isUsername(name) ? null : await findStorageUserByName(this.db, clusterId, name);
    return { user, credentialId: null };
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

  /** Signs out: the session row goes (audited), and its gateway token is revoked. */
  async close(sessionId: string, session: LiveStorageUserSession, origin: SignInOrigin): Promise<void> {
    const cluster = await getCluster(this.db, session.clusterId);
    const gone = await this.db.transaction(async (trx) => {
      const deleted = await deleteStorageUserSession(trx, hashApiKey(sessionId));
      if (deleted && cluster)
        await auditSignOut(trx, { id: session.userId, username: session.username }, cluster, deleted, origin);
      return deleted;
    });
    if (!gone?.gatewayTokenSealed) return;
    const token = this.unseal(sessionId, gone.userId, gone.gatewayTokenSealed);
    if (token !== null && cluster) await revokeGatewayToken(cluster, token);
  }

  /**
   * The gateway token the session's sign-in got, for calls to the cluster's gateway as its user.
   * A session without one (opened before tokens were kept) or whose token does not open is ended:
   * 401 with a sentence, and the user signs in again.
   */
  async gatewayToken(sessionId: string, session: LiveStorageUserSession): Promise<string> {
    const sealed = await storageSessionGatewayToken(this.db, session.id);
    const token = sealed === null ? null : this.unseal(sessionId, session.userId, sealed);
    if (token === null) {
      await this.end(session);
      throw errors.unauthenticated(GATEWAY_TOKEN_ENDED);
    }
    return token;
  }

  /** Ends the session (its gateway token was refused): the next request signs in again. */
  async end(session: LiveStorageUserSession): Promise<void> {
    await deleteStorageUserSessionById(this.db, session.id);
  }

  private unseal(sessionId: string, userId: string, sealed: string): string | null {
    try {
      return openS3Secret(sessionKeyring(sessionId), tokenLabel(userId), sealed);
    } catch (e) {
      if (e instanceof S3SecretError) return null;
      throw e;
    }
  }
}
