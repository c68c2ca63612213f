import { createHash } from 'node:crypto';
import { apiKeyMatches, errors, generateApiKey, hashApiKey, isCairnError, type Operator } from '@cairn/domain';
import type { Db } from '../db/database';
import { recordAudit } from '../repositories/audit';
import {
  deleteConsoleSession,
  findLiveConsoleSession,
  insertConsoleSession,
  stepUpConsoleSession,
  touchConsoleSession,
  type ConsoleSessionRecord,
  type LiveConsoleSession,
} from '../repositories/console-sessions';
import { apiKeyUri } from '../resources/uris';
import { operatorByApiKey, type CredentialCache } from './authentication';
import { auditActorOf, type Acting } from './context';

export type { LiveConsoleSession };

/**
 * How long a console session lives: ended after `idleSeconds` without a request, and `maxSeconds` after sign-in at the
 * latest. `stepUpSeconds` (default 300): how long re-entering the API key lets it mint lasting credentials.
 */
export interface ConsoleSessionSettings {
  idleSeconds: number;
  maxSeconds: number;
  stepUpSeconds?: number;
}

export const DEFAULT_STEP_UP_SECONDS = 300;

export const DEFAULT_CONSOLE_SESSIONS: ConsoleSessionSettings = Object.freeze({
  idleSeconds: 1800,
  maxSeconds: 43200,
  stepUpSeconds: DEFAULT_STEP_UP_SECONDS,
});

/** A session id is 256 random bits in base64url, like an API key; anything else is not looked up. */
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

/**
 * The token a cookie-authenticated write must echo in X-Cairn-CSRF: derived from the session id
 * (so nothing more is stored), readable only by the console's own origin through GET session/.
 */
export const csrfTokenOf = (sessionId: string): string =>
  createHash('sha256').update('cairn console csrf\0').update(sessionId).digest('base64url');

export const csrfTokenMatches = (sessionId: string, presented: string): boolean =>
  apiKeyMatches(presented, hashApiKey(csrfTokenOf(sessionId)));

/**
 * How often a session's last_seen_at is written: at most once a minute (a busy console must not
 * write on every request), and often enough that a short idle timeout still means "idle".
 * The cost: a session can end up to that long before `idleSeconds` after its last request.
 */
export const touchIntervalOf = (settings: ConsoleSessionSettings): number => Math.min(60, settings.idleSeconds / 4);

const target = (acting: Acting, session: ConsoleSessionRecord) => ({
  type: 'sessions',
  id: session.id,
  name: acting.operator.name,
  uri: apiKeyUri(acting.operator.id, session.apiKeyId),
});

/** What the audit trail keeps of a session: which key, when; never its id, hash or token. */
const snapshot = (acting: Acting, session: ConsoleSessionRecord) => ({
  key_uri: apiKeyUri(acting.operator.id, session.apiKeyId),
  created_at: session.createdAt,
  expires_at: session.expiresAt,
});

export class ConsoleSessions {
  constructor(
    private readonly db: Db,
    readonly settings: ConsoleSessionSettings,
    private readonly credentials: CredentialCache,
  ) {}

  get stepUpSeconds(): number {
    return this.settings.stepUpSeconds ?? DEFAULT_STEP_UP_SECONDS;
  }

  /** Opens a session on the API key the request was made with; the id goes only into the cookie. */
  async open(acting: Acting, apiKeyId: string): Promise<{ sessionId: string; session: ConsoleSessionRecord }> {
    const sessionId = generateApiKey();
    const session = await this.db.transaction(async (trx) => {
      const created = await insertConsoleSession(trx, hashApiKey(sessionId), apiKeyId, this.settings.maxSeconds);
      await recordAudit(trx, auditActorOf(acting), {
        action: 'sign_in',
        target: target(acting, created),
        before: null,
        after: snapshot(acting, created),
      });
      return created;
    });
    return { sessionId, session };
  }

  /** The live session with this id, or null (unknown, ended, or its key revoked); marks it as used. */
  async find(sessionId: string | undefined): Promise<LiveConsoleSession | null> {
    if (sessionId === undefined || !SESSION_ID.test(sessionId)) return null;
    const session = await findLiveConsoleSession(this.db, hashApiKey(sessionId), this.settings.idleSeconds);
    const every = touchIntervalOf(this.settings);
    if (session && session.idleSeconds >= every) await touchConsoleSession(this.db, session.id, every);
    return session;
  }

  /** Like find, but a request that has no live session is refused with a sentence that says why. */
  async authenticate(sessionId: string): Promise<LiveConsoleSession> {
    const session = await this.find(sessionId);
    if (!session) {
      throw errors.unauthenticated(
        'Your console session has ended (signed out, idle too long, past its maximum length, or its API key was revoked). Sign in again.',
      );
    }
    return session;
  }

  /**
   * Step-up: the session's operator re-enters an API key, checked as at sign-in (the same lookup,
   * the same time for any wrong key); the session may then mint lasting credentials (API keys,
   * operators, a backup) for `stepUpSeconds`. A key of another operator, or a wrong one, is refused
   * with 403, not 401: the session itself is still good. Audited with the key's URI, never the key.
   */
  async stepUp(acting: Acting, session: LiveConsoleSession, key: string): Promise<ConsoleSessionRecord> {
    const operator: Operator = session.operator;
    let apiKeyId: string;
    try {
      const found = await operatorByApiKey(this.credentials, operator.name, key);
      if (found.operator.id !== operator.id) throw errors.unauthenticated();
      apiKeyId = found.apiKeyId;
    } catch (e) {
      if (isCairnError(e) && e.code === 'UNAUTHENTICATED')
        throw errors.forbidden(`That is not an API key of operator '${operator.name}'; nothing was confirmed.`);
      throw e;
    }
    return this.db.transaction(async (trx) => {
      const stepped = await stepUpConsoleSession(trx, session.id, this.stepUpSeconds, this.settings.idleSeconds);
      if (!stepped) {
        throw errors.unauthenticated(
          'Your console session has ended (signed out, idle too long, past its maximum length, or its API key was revoked). Sign in again.',
        );
      }
      await recordAudit(trx, auditActorOf(acting), {
        action: 'step_up',
        target: target(acting, stepped),
        before: null,
        after: {
          key_uri: apiKeyUri(operator.id, apiKeyId),
          stepped_up_until: stepped.steppedUpUntil,
        },
      });
      return stepped;
    });
  }

  /** Signs out: the session row goes, and the audit trail says so. */
  async close(acting: Acting, sessionId: string): Promise<void> {
    await this.db.transaction(async (trx) => {
      const deleted = await deleteConsoleSession(trx, hashApiKey(sessionId));
      if (deleted)
        await recordAudit(trx, auditActorOf(acting), {
          action: 'sign_out',
          target: target(acting, deleted),
          before: snapshot(acting, deleted),
          after: null,
        });
    });
  }
}
