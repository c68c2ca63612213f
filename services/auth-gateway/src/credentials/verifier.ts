import { createHmac, randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import {
  DEFAULT_SCRYPT_PARAMS,
  hashPassword,
  passwordHashCostProblem,
  passwordScheme,
  setBounded,
  verifyPassword,
  type BcryptCompare,
  type ScryptParams,
} from '@cairn/domain';
import type { UserRecord } from './users';

/**
 * Runs the checks of imported (foreign) hashes `concurrency` at a time, with at most `maxWaiting`
 * more waiting: each costs up to 4 times Cairn's own check (HASH_COST_FACTOR) and two threads
 * (its KDF, and Cairn's scrypt run alongside), so a flood of them (one name is enough, and no key)
 * waits here, not in libuv's pool of four threads ahead of every other user's login. A check that
 * finds the queue full fails, as a wrong password does.
 */
export class ForeignCheckQueue {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    private readonly concurrency = 1,
    private readonly maxWaiting = 32,
  ) {}

  async run<T>(check: () => Promise<T>): Promise<T> {
    if (this.running >= this.concurrency) {
      if (this.waiting.length >= this.maxWaiting)
        throw new Error(`${this.maxWaiting} checks of imported password hashes are already waiting`);
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running++;
    }
    try {
      return await check();
    } finally {
      // The slot passes to the next waiting check, if any.
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}

/** By parameters: a process has one (the default's, or the deployment's own). */
const dummyHashes = new Map<string, Promise<string>>();

/**
 * The hash an unknown user's password is checked against: of a random password nobody knows, with
 * the parameters of the users' own hashes, one per process. Making it is one scrypt run on libuv's
 * pool.
 */
function unknownUserHash(params: ScryptParams = DEFAULT_SCRYPT_PARAMS): Promise<string> {
  const key = `${params.logN},${params.r},${params.p}`;
  let hash = dummyHashes.get(key);
  if (!hash) dummyHashes.set(key, (hash = hashPassword(randomBytes(24).toString('base64'), params)));
  return hash;
}

/**
 * Starts making that hash now, off the main thread. A gateway's start waits for it
 * (PasswordVerifier.warmUp), so that from its first request an unknown user costs one scrypt run
 * like any other failed login; the all-in-one launcher starts it first, beside opening its
 * database, instead of after.
 */
export function warmUpPasswordChecks(params?: ScryptParams): void {
  void unknownUserHash(params);
}

/** Fields of a warning and its message (pino's argument order). */
export type Warn = (fields: Record<string, unknown>, message: string) => void;

/**
 * Password checks. scrypt on every request is too slow for Swift clients that re-authenticate
 * constantly, so a successful check is remembered in memory for a short time under an HMAC, keyed
 * by a per-process secret, of the credential itself and the password: the user's row id (never
 * reused), its generation and its stored hash (which carries a random salt), so the password itself
 * is never kept, and no entry can match a credential other than the one it was checked against: a
 * changed password or state (new generation) misses, and so does a user deleted and re-created
 * under the same name (a new row and a new salt, though its generation starts again at 1).
 *
 * Unknown users, disabled users and wrong passwords all cost one full scrypt run, so they cannot
 * be told apart by timing.
 *
 * An imported user's foreign hash (bcrypt, passlib pbkdf2-sha512 or scrypt) is checked alongside
 * one scrypt run of Cairn's own, which hashes the given password: on success that hash replaces the
 * foreign one (`replaceForeignHash`, a compare-and-set), on failure it is dropped. Either way the
 * check costs the longer of the two runs and never less than an unknown user's (the scrypt run
 * alone); see SECURITY.md for what a foreign hash slower than scrypt still tells. Foreign checks
 * run one at a time through a ForeignCheckQueue, bcrypt on a thread of its own (BcryptWorker).
 *
 * A stored hash whose check would cost more than the bound (HASH_COST_FACTOR; stored by an older
 * version, or written to the database directly) is never computed: the login fails after the unknown
 * user's scrypt run, with a warning naming the limit. A check that throws (crypto refusing its
 * parameters, the bcrypt thread failing, a full queue) is a failed login too, counted by the
 * failed-login limits, with a one-line warning and no stack.
 */
export class PasswordVerifier {
  private readonly secret = randomBytes(32);
  private readonly remembered = new Map<string, number>();
  /** Checks under way, by key: concurrent logins of one user share one scrypt run. */
  private readonly inFlight = new Map<string, Promise<boolean>>();

  constructor(
    private readonly ttlSeconds: number,
    private readonly now: () => number = Date.now,
    /** Told the seconds of every real KDF run (not cache hits, not shared runs): a metrics histogram. */
    private readonly observeKdf: (seconds: number) => void = () => {},
    /** Stores Cairn's hash of a password just verified against an imported user's foreign hash. */
    private readonly replaceForeignHash: (user: UserRecord, hash: string) => Promise<void> = async () => {},
    private readonly warn: Warn = () => {},
    /** How bcryptjs's compare runs (the gateway: a BcryptWorker's). */
    private readonly bcryptCompare?: BcryptCompare,
    private readonly foreignChecks = new ForeignCheckQueue(),
    /**
     * The scrypt parameters of the users' own hashes (the management API's; default Cairn's): an
     * unknown user is checked against a hash made with them, and an imported hash is replaced by
     * one, so an unknown name costs what a known one does.
     */
    private readonly hashParams: ScryptParams = DEFAULT_SCRYPT_PARAMS,
  ) {}

  /**
   * Where a check of this password for this user is remembered and shared (an HMAC, see the class);
   * also for an unknown user (by name): identical checks in flight share a run whoever the user. A
   * login asks remembers() and then check() of the same presented password: it computes this once
   * and passes it to both (see PasswordCredential).
   */
  key(username: string, user: UserRecord | null, password: string): string {
    const credential = user ? `${user.id}\0${user.generation}\0${user.passwordHash}` : '\0\0';
    return createHmac('sha256', this.secret).update(`${username}\0${credential}\0${password}`, 'utf8').digest('base64');
  }

  /** A hash of a random password with the users' parameters, verified against for unknown users. */
  private dummy(): Promise<string> {
    return unknownUserHash(this.hashParams);
  }

  async warmUp(): Promise<void> {
    await this.dummy();
  }

  /** True when check() would answer true at once from memory: the password was verified moments ago. */
  remembers(
    username: string,
    user: UserRecord | null,
    password: string,
    key = this.key(username, user, password),
  ): boolean {
    if (user === null || !user.enabled || this.ttlSeconds <= 0) return false;
    const until = this.remembered.get(key);
    return until !== undefined && until > this.now();
  }

  /**
   * True only for an enabled user with the right password. Identical checks in flight share one
   * scrypt run — for unknown and disabled users too, so that sharing reveals nothing: when a hot
   * user's entry expires, its requests in flight would otherwise each queue a run (a multi-second
   * stall, measured).
   */
  async check(
    username: string,
    user: UserRecord | null,
    password: string,
    key = this.key(username, user, password),
  ): Promise<boolean> {
    const usable = user !== null && user.enabled;
    if (usable && this.ttlSeconds > 0) {
      const until = this.remembered.get(key);
      if (until !== undefined && until > this.now()) return true;
    }
    let pending = this.inFlight.get(key);
    if (!pending) {
      pending = this.verify(user, password).then((ok) => {
        if (ok && usable && this.ttlSeconds > 0) {
          setBounded(this.remembered, key, this.now() + this.ttlSeconds * 1000, 100_000);
        }
        return ok && usable;
      });
      this.inFlight.set(key, pending);
      const done = () => this.inFlight.delete(key);
      pending.then(done, done);
    }
    return pending;
  }

  /**
   * One scrypt run: against the user's hash, or a dummy one for an unknown user or a hash refused
   * for its cost. A foreign hash is verified while the scrypt run hashes the password (both in the
   * foreign queue), and replaced when it matched.
   */
  private async verify(user: UserRecord | null, password: string): Promise<boolean> {
    let hash = user?.passwordHash ?? (await this.dummy());
    const scheme = passwordScheme(hash);
    if (scheme === null && user !== null) {
      this.warn(
        { user: user.username, reason: passwordHashCostProblem(hash) ?? 'it is in no accepted format' },
        'stored password hash refused without being checked; the login fails',
      );
      hash = await this.dummy();
    }
    const started = performance.now();
    let replacement: string | undefined;
    let ok: boolean;
    try {
      if (scheme === 'scrypt' || scheme === null) {
        ok = (await verifyPassword(password, hash)) && scheme !== null;
      } else {
        [ok, replacement] = await this.foreignChecks.run(() =>
          Promise.all([verifyPassword(password, hash, this.bcryptCompare), hashPassword(password, this.hashParams)]),
        );
      }
    } catch (e) {
      // One line, no stack: the error's code and message say enough (and hold no password).
      const { code, message } = (e ?? {}) as { code?: unknown; message?: unknown };
      this.warn(
        {
          user: user?.username,
          scheme,
          code: typeof code === 'string' ? code : undefined,
          error: typeof message === 'string' ? message : String(e),
        },
        'password check failed with an error; counted as a failed login',
      );
      ok = false;
      replacement = undefined;
    } finally {
      this.observeKdf((performance.now() - started) / 1000);
    }
    // Only for a real login: a disabled user's foreign hash stays until it logs in.
    if (ok && replacement !== undefined && user !== null && user.enabled)
      await this.replaceForeignHash(user, replacement);
    return ok;
  }
}
