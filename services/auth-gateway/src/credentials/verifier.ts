import { createHmac, randomBytes } from 'node:crypto';
import { hashPassword, verifyPassword } from '@cairn/domain';
import type { UserRecord } from './users';

/**
 * Password checks. scrypt on every request is too slow for Swift clients that re-authenticate
 * constantly, so a successful check is remembered in memory for a short time under an HMAC of
 * (user, generation, password) keyed by a per-process secret: the password itself is never kept,
 * and a changed password or state (new generation) misses the cache.
 *
 * Unknown users, disabled users and wrong passwords all cost one full scrypt run, so they cannot
 * be told apart by timing.
 */
export class PasswordVerifier {
  private readonly secret = randomBytes(32);
  private readonly remembered = new Map<string, number>();
  private dummyHash: Promise<string> | undefined;

  constructor(
    private readonly ttlSeconds: number,
    private readonly now: () => number = Date.now,
  ) {}

  private key(user: UserRecord, password: string): string {
    return createHmac('sha256', this.secret).update(`${user.username}\0${user.generation}\0${password}`, 'utf8').digest('base64');
  }

  /** A hash of a random password with the default parameters, verified against for unknown users. */
  private dummy(): Promise<string> {
    this.dummyHash ??= hashPassword(randomBytes(24).toString('base64'));
    return this.dummyHash;
  }

  async warmUp(): Promise<void> {
    await this.dummy();
  }

  /** True only for an enabled user with the right password. */
  async check(user: UserRecord | null, password: string): Promise<boolean> {
    if (!user || !user.enabled) {
      await verifyPassword(password, user?.passwordHash ?? (await this.dummy()));
      return false;
    }
    const key = this.ttlSeconds > 0 ? this.key(user, password) : '';
    const until = key ? this.remembered.get(key) : undefined;
    if (until !== undefined && until > this.now()) return true;
    const ok = await verifyPassword(password, user.passwordHash);
    if (ok && key) {
      if (this.remembered.size >= 100_000) this.remembered.delete(this.remembered.keys().next().value as string);
      this.remembered.set(key, this.now() + this.ttlSeconds * 1000);
    }
    return ok;
  }
}
