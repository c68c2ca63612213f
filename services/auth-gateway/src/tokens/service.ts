import { createSecretKey, type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { setBounded } from '@cairn/domain';
import type { UserDirectory, UserRecord } from '../credentials/users';
import { randomText } from './random';
import { rolesFor } from './roles';
import type { TokenApplicationCredential, TokenRecord, TokenStore } from './store';

export interface IssuedToken {
  id: string;
  record: TokenRecord;
}

export interface IssueRequest {
  user: UserRecord;
  project?: string;
  methods: string[];
  userDomain: string;
  projectDomain?: string;
  /**
   * Hand back the user's live token for the same scope when there is one (tempauth's V1 login
   * does), rather than a new one: see `reusable`.
   */
  reuse?: boolean;
  /**
   * An application credential login: the token carries its roles instead of the user's, and ends no later than
   * `notAfterMs`.
   */
  applicationCredential?: { credential: TokenApplicationCredential; roles: string[]; notAfterMs: number | null };
}

/**
 * Whether an application credential's token may still live: the credential exists, is its user's, and has not expired.
 */
export type ApplicationCredentialCheck = (credentialId: string, userId: string) => Promise<boolean>;

export interface TokenSettings {
  lifetimeSeconds: number;
  /** At most this many live tokens per user: a new one pushes out the oldest beyond it. */
  perUser: number;
  /** Whether V1 logins are handed the live token of an earlier V1 login (`IssueRequest.reuse`). */
  reuseV1: boolean;
}

/**
 * Where a V1 login finds the token an earlier one was handed: per user row id (never reused, so
 * never shared with a later user of the same name), generation and scope. The value is a
 * HandedOut.
 */
function reuseKey(req: IssueRequest): string {
  return `v1-login:${req.user.id}:${req.user.generation}:${req.userDomain}:${req.projectDomain ?? ''}:${req.project ?? ''}`;
}

/**
 * The token a V1 login was handed: its id and a copy of its record (records never change), so that
 * handing it out again reads one key rather than two. Whether it still lives is its listing's
 * question (revoking or pushing out a token unlists it; `reusable` requires a listed record).
 */
interface HandedOut {
  jti: string;
  record: TokenRecord;
}

/** What this process last read or wrote under a reuse key: its text, what it says, the token signed. */
interface KnownHandedOut {
  text: string;
  handedOut: HandedOut;
  token: string;
}

/**
 * Tokens are JWTs (HS256, the cluster's key) carrying 128 random bits as `jti`; the record they
 * point to lives in the token store with the token's life as TTL. A token is valid only while its
 * signature checks, its record exists, and its user still exists, is enabled, has the same
 * generation, and was not revoked wholesale after the token was issued; a token issued with the
 * per-user cap must also still be among its user's listed tokens (the newest `perUser`).
 */
export class TokenService {
  /**
   * A KeyObject made once: given a string, jsonwebtoken first tries (and fails) to parse it as a
   * PEM key on every call, which cost 0.3 ms per sign or verify (measured in bench/).
   */
  private readonly key: KeyObject;
  /** V1 logins being answered, by reuse key: those that arrive together share one issue. */
  private readonly reusing = new Map<string, Promise<IssuedToken>>();
  /**
   * What this process last read or wrote under each reuse key (bounded; the oldest go first). A
   * login that finds the same text there again asks whether the token is still listed in the same
   * round trip as the text itself, and neither parses the text nor signs the token again (signing
   * cost about 6 µs of a warm login's CPU: jsonwebtoken's checks of its options and claims). The
   * key holds the user's row id, so no later user of the name ever finds an entry.
   */
  private readonly handedOut = new Map<string, KnownHandedOut>();

  constructor(
    private readonly store: TokenStore,
    private readonly users: UserDirectory,
    signingKey: string,
    private readonly clusterUuid: string,
    private readonly settings: TokenSettings,
    private readonly now: () => number = Date.now,
    private readonly applicationCredentialLive: ApplicationCredentialCheck = async () => false,
  ) {
    this.key = createSecretKey(Buffer.from(signingKey, 'utf8'));
  }

  get lifetime(): number {
    return this.settings.lifetimeSeconds;
  }

  private get lifetimeSeconds(): number {
    return this.settings.lifetimeSeconds;
  }

  /** Reuses (see IssueRequest.reuse) or issues; logins of one user and scope at once share one. */
  async issue(req: IssueRequest): Promise<IssuedToken> {
    if (!req.reuse || !this.settings.reuseV1) {
      const { id, record } = await this.issueNew(req);
      return { id, record };
    }
    const key = reuseKey(req);
    const pending = this.reusing.get(key);
    if (pending) return pending;
    const issued = this.reuseOrIssue(req, key).finally(() => this.reusing.delete(key));
    this.reusing.set(key, issued);
    return issued;
  }

  private async reuseOrIssue(req: IssueRequest, key: string): Promise<IssuedToken> {
    const userId = req.user.id;
    const known = this.handedOut.get(key);
    // One round trip: the key, the user's revocation, and the listing of the token this process
    // knows to be there (asked again below only if another replica has put another one there).
    const [text, revokedBefore, knownListed] = await Promise.all([
      this.store.getValue(key),
      this.store.userRevokedBefore(userId),
      known ? this.store.isListed(userId, known.handedOut.jti) : undefined,
    ]);
    if (text) {
      const same = known?.text === text;
      const { jti, record } = same ? known.handedOut : (JSON.parse(text) as HandedOut);
      if (
        this.reusable(record, req) &&
        !(revokedBefore && Date.parse(record.issuedAt) <= revokedBefore) &&
        (same ? knownListed : await this.store.isListed(userId, jti))
      ) {
        const token = same ? known.token : this.remember(key, text, { jti, record }, this.sign(jti, record));
        return { id: token, record };
      }
    }
    const issued = await this.issueNew(req);
    // Handed out again only in the first half of its life, so none is handed out about to expire.
    const handedOut: HandedOut = { jti: issued.jti, record: issued.record };
    const written = JSON.stringify(handedOut);
    await this.store.setValue(key, written, (this.lifetimeSeconds * 1000) / 2);
    this.remember(key, written, handedOut, issued.id);
    return { id: issued.id, record: issued.record };
  }

  /** Keeps what a reuse key holds (handedOut); returns the token. */
  private remember(key: string, text: string, handedOut: HandedOut, token: string): string {
    setBounded(this.handedOut, key, { text, handedOut, token }, 10_000);
    return token;
  }

  /**
   * Whether an earlier token may be handed out for this login, as tempauth hands out a user's
   * token while it lives: the same user row and generation (so the password, enabled and
   * superuser flag are as they were), exactly the same scope, roles and methods, and at least half
   * its life left. Its being listed (not revoked, not pushed out) and its user not revoked since is
   * checked by the caller.
   */
  private reusable(record: TokenRecord, req: IssueRequest): boolean {
    return (
      record.userId === req.user.id &&
      record.user === req.user.username &&
      record.generation === req.user.generation &&
      record.project === req.project &&
      record.projectDomain === (req.project !== undefined ? (req.projectDomain ?? 'default') : undefined) &&
      record.userDomain === req.userDomain &&
      record.methods.join(' ') === req.methods.join(' ') &&
      record.roles.join(' ') === rolesFor(req.user, req.project).join(' ') &&
      record.listed === true &&
      record.applicationCredential === undefined &&
      req.applicationCredential === undefined &&
      Date.parse(record.expiresAt) - this.now() >= (this.lifetimeSeconds * 1000) / 2
    );
  }

  /**
   * The token for a record: its iat and exp are the record's, so the same record always signs to
   * the same token (a reused token is the one handed out before).
   */
  private sign(jti: string, record: TokenRecord): string {
    const iat = Math.floor(Date.parse(record.issuedAt) / 1000);
    const exp = Math.floor(Date.parse(record.expiresAt) / 1000);
    return jwt.sign({ jti, aud: this.clusterUuid, iat, exp }, this.key, { algorithm: 'HS256' });
  }

  private async issueNew(req: IssueRequest): Promise<IssuedToken & { jti: string }> {
    const jti = randomText(16, 'base64url');
    const issuedAtMs = this.now();
    const appCred = req.applicationCredential;
    // A credential's token never outlives the credential.
    const expiresAtMs = Math.min(issuedAtMs + this.lifetimeSeconds * 1000, appCred?.notAfterMs ?? Infinity);
    const record: TokenRecord = {
      user: req.user.username,
      userId: req.user.id,
      ...(req.project !== undefined ? { project: req.project, projectDomain: req.projectDomain ?? 'default' } : {}),
      roles: appCred ? appCred.roles : rolesFor(req.user, req.project),
      methods: req.methods,
      userDomain: req.userDomain,
      issuedAt: new Date(issuedAtMs).toISOString(),
      expiresAt: new Date(expiresAtMs).toISOString(),
      generation: req.user.generation,
      auditId: randomText(16, 'base64url'),
      listed: true,
      ...(appCred ? { applicationCredential: appCred.credential } : {}),
    };
    await this.store.add(jti, record, expiresAtMs - issuedAtMs, this.settings.perUser);
    return { id: this.sign(jti, record), record, jti };
  }

  /** The token's `jti` when its signature, audience and expiry check out; null otherwise. */
  private idOf(token: string): string | null {
    if (token.length > 4096) return null;
    try {
      const payload = jwt.verify(token, this.key, {
        algorithms: ['HS256'],
        audience: this.clusterUuid,
      }) as jwt.JwtPayload;
      return typeof payload.jti === 'string' ? payload.jti : null;
    } catch {
      return null;
    }
  }

  /** The live record of a token, or null for anything unknown, forged, expired or revoked. */
  async validate(token: string | undefined): Promise<TokenRecord | null> {
    if (!token) return null;
    const jti = this.idOf(token);
    if (!jti) return null;
    const record = await this.store.get(jti);
    if (!record || Date.parse(record.expiresAt) <= this.now()) return null;
    const [user, revokedBefore, listed, credentialLive] = await Promise.all([
      this.users.findRecent(record.user),
      this.store.userRevokedBefore(record.userId),
      record.listed ? this.store.isListed(record.userId, jti) : true,
      record.applicationCredential
        ? this.applicationCredentialLive(record.applicationCredential.id, record.userId)
        : true,
    ]);
    if (!credentialLive) return null;
    if (!user || !user.enabled || user.id !== record.userId || user.generation !== record.generation) return null;
    if (revokedBefore && Date.parse(record.issuedAt) <= revokedBefore) return null;
    if (!listed) return null;
    return record;
  }

  /** Revokes one token; false when it was not a live token. */
  async revoke(token: string): Promise<boolean> {
    const jti = this.idOf(token);
    return jti ? this.store.delete(jti) : false;
  }

  /** Voids every token of `user` issued until now. */
  async revokeUser(user: UserRecord): Promise<void> {
    await this.store.revokeUserBefore(user.id, this.now(), this.lifetimeSeconds * 1000);
  }
}
