import { createHash, randomBytes } from 'node:crypto';
import {
  openS3Secret,
  parseS3SecretKeys,
  sealS3Secret,
  setBounded,
  S3SecretError,
  verifyS3Signature,
  type S3SecretKeyring,
} from '@cairn/domain';
import type { Logger } from 'pino';
import type { UserRecord } from '../credentials/users';
import type { S3TokensResult } from '../http/metrics';
import { rolesFor } from '../tokens/roles';
import type { TokenApplicationCredential, TokenStore } from '../tokens/store';
import type { S3CredentialDirectory, S3CredentialRecord } from './s3-credentials';

/** How a signature check ended. Every refusal but `malformed` is answered with the same 401. */
export type S3CheckOutcome =
  | {
      ok: true;
      user: UserRecord;
      credentialId: string;
      /**
       * Epoch ms after which the identity no longer holds (the credential's or its application credential's expiry);
       * null: none.
       */
      notAfterMs: number | null;
      /** Set when the key is bound to an application credential: the answer carries its roles and names it. */
      applicationCredential?: { credential: TokenApplicationCredential; roles: string[] };
    }
  | { ok: false; result: 'malformed'; message: string }
  | {
      ok: false;
      result: Exclude<S3TokensResult, 'valid' | 'malformed' | 'service_unauthorized' | 'service_forbidden'>;
    };

export interface S3FailureLimit {
  /** Failed checks per access key owner within `windowMs` past which they are reported (never refused: SECURITY.md). */
  limit: number;
  windowMs: number;
}

/** What a lookup hands the signature check: the opened secret and the credential it came from. */
interface Found {
  credential: S3CredentialRecord;
  /** False when the stored secret did not open: the check then runs against a dummy and fails. */
  usable: boolean;
}

const failureKey = (userId: string): string =>
  `s3owner:${createHash('sha256').update(userId, 'utf8').digest('base64url')}`;
/**
 * Where refusals that belong to no guessable owner are counted (unknown key, disabled user, a
 * secret that does not open): one fixed key, so every 401 costs the same Redis write and an
 * attacker's made-up keys add nothing to Redis. No user id hashes to it (it is no hash).
 */
const NO_OWNER_KEY = 's3owner:-';

/**
 * Checks an s3tokens body: the credential's row (S3CredentialDirectory), its secret opened with
 * the keyring, the AWS signature (V2 or V4, packages/domain), its user enabled, and that neither
 * it nor the application credential it is bound to has expired or gone.
 *
 * An unknown access key costs the same work as a known one with a wrong signature: the same
 * lookup, one AES-GCM opening (of a dummy sealed under a key of its own) and one HMAC computation
 * (verifyS3Signature signs with a dummy secret), so the answer's timing does not tell whether a
 * key exists. A disabled user's or an expired key's signature is checked all the same before it is refused.
 */
export class S3SignatureChecker {
  private readonly dummyKeyring: S3SecretKeyring;
  private readonly dummySealed: string;
  /** Owners whose over-the-limit warning was logged in this window (bounded), so a flood logs once. */
  private readonly warned = new Map<string, number>();

  constructor(
    private readonly credentials: S3CredentialDirectory,
    private readonly keyring: S3SecretKeyring | undefined,
    private readonly store: TokenStore,
    private readonly limit: S3FailureLimit,
    private readonly log: Logger,
    private readonly onOverLimit: () => void = () => {},
    private readonly now: () => number = Date.now,
  ) {
    const made = parseS3SecretKeys(`dummy:${randomBytes(32).toString('base64')}`);
    if (!made.ok) throw new Error(made.problems.join(' '));
    this.dummyKeyring = made.keyring;
    this.dummySealed = sealS3Secret(this.dummyKeyring, 'DUMMY', randomBytes(30).toString('base64'));
  }

  async check(body: unknown): Promise<S3CheckOutcome> {
    const verdict = await verifyS3Signature<Found>(body, async (accessKey) => {
      const credential = await this.credentials.find(accessKey);
      if (!credential) {
        openS3Secret(this.dummyKeyring, 'DUMMY', this.dummySealed);
        return null;
      }
      const secret = this.open(credential);
      // A secret that does not open is checked against the dummy's (and so fails), at the same cost.
      return {
        secret: secret ?? openS3Secret(this.dummyKeyring, 'DUMMY', this.dummySealed),
        owner: { credential, usable: secret !== null },
      };
    });
    // Every refusal below makes one failure count write, so that none is quicker than another.
    if (verdict.ok) {
      const { credential, usable } = verdict.owner;
      const refusal = !usable
        ? 'secret_unusable'
        : !credential.user.enabled
          ? 'user_disabled'
          : this.lifetimeRefusal(credential);
      if (refusal === null) return this.accepted(credential);
      await this.store.recordFailure(NO_OWNER_KEY, this.limit.windowMs);
      return { ok: false, result: refusal };
    }
    if (verdict.reason === 'malformed') return { ok: false, result: 'malformed', message: verdict.message };
    if (verdict.reason === 'unknown-access-key' || !verdict.owner.usable) {
      await this.store.recordFailure(NO_OWNER_KEY, this.limit.windowMs);
      return { ok: false, result: verdict.reason === 'unknown-access-key' ? 'unknown_access_key' : 'secret_unusable' };
    }
    await this.countFailure(verdict.owner.credential);
    return { ok: false, result: 'signature_mismatch' };
  }

  /**
   * Why a credential whose signature is right no longer signs, or null. Expiry is compared with
   * the clock now, whenever the row was read, so a key stops at its expiry, cached or not. A key
   * bound to an application credential ends with it (gone or expired), as Keystone's EC2 tokens
   * do. It also fails when that credential has access rules: an S3 request's path is not in what
   * s3token sends (a V4 string to sign holds only a hash of it), so the rules could not hold, and
   * such a credential cannot make EC2 keys (app-credentials/restricted.ts) in the first place.
   */
  private lifetimeRefusal(credential: S3CredentialRecord): 'credential_expired' | 'application_credential_void' | null {
    const now = this.now();
    if (credential.expiresAt !== null && credential.expiresAt <= now) return 'credential_expired';
    const bound = credential.applicationCredential;
    if (!bound) return null;
    if (!bound.present || (bound.expiresAt !== null && bound.expiresAt <= now) || (bound.accessRules?.length ?? 0) > 0)
      return 'application_credential_void';
    // The roles it still carries: its own, less any its user no longer holds (as a login computes them).
    const held = rolesFor(credential.user, credential.user.username);
    if (!bound.roles.some((r) => held.includes(r))) return 'application_credential_void';
    return null;
  }

  private accepted(credential: S3CredentialRecord): S3CheckOutcome {
    const bound = credential.applicationCredential;
    const ends = [credential.expiresAt, bound?.expiresAt ?? null].filter((t): t is number => t !== null);
    const notAfterMs = ends.length > 0 ? Math.min(...ends) : null;
    if (!bound) return { ok: true, user: credential.user, credentialId: credential.id, notAfterMs };
    const held = rolesFor(credential.user, credential.user.username);
    return {
      ok: true,
      user: credential.user,
      credentialId: credential.id,
      notAfterMs,
      applicationCredential: {
        credential: { id: bound.id, name: bound.name, restricted: !bound.unrestricted },
        roles: bound.roles.filter((r) => held.includes(r)),
      },
    };
  }

  /**
   * The secret, or null (logged) when it does not open: a missing key id or an altered row is the operator's to fix.
   */
  private open(credential: S3CredentialRecord): string | null {
    if (!this.keyring) {
      this.log.error(
        { accessKey: credential.accessKey },
        'S3 credential cannot be checked: CAIRN_S3_SECRET_KEYS is not set on this gateway',
      );
      return null;
    }
    try {
      return openS3Secret(this.keyring, credential.accessKey, credential.sealedSecret);
    } catch (e) {
      if (!(e instanceof S3SecretError)) throw e;
      this.log.error({ accessKey: credential.accessKey, code: e.code }, e.message);
      return null;
    }
  }

  /**
   * A wrong signature counts against the access key's owner (by row id), whoever sent it: the
   * caller is a Swift proxy, whose address stands for every S3 client. Past the limit it is
   * reported, never refused: see SECURITY.md ("S3 signatures").
   */
  private async countFailure(credential: S3CredentialRecord): Promise<void> {
    const { count, resetInMs } = await this.store.recordFailure(failureKey(credential.user.id), this.limit.windowMs);
    if (count <= this.limit.limit) return;
    this.onOverLimit();
    const now = this.now();
    const until = this.warned.get(credential.user.id);
    if (until !== undefined && until > now) return;
    setBounded(this.warned, credential.user.id, now + resetInMs, 10_000);
    this.log.warn(
      {
        user: credential.user.username,
        accessKey: credential.accessKey,
        failures: count,
        windowSeconds: Math.round(this.limit.windowMs / 1000),
      },
      "many wrong S3 signatures for this user's access keys: someone may be guessing (signatures with the right secret still pass)",
    );
  }
}
