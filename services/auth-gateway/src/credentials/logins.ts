import { createHash } from 'node:crypto';
import { usernameSchema } from '@cairn/domain';
import type { TokenStore } from '../tokens/store';
import type { UserDirectory, UserRecord } from './users';
import type { PasswordVerifier } from './verifier';

export type LoginResult =
  | { ok: true; user: UserRecord }
  | { ok: false; reason: 'invalid' }
  | { ok: false; reason: 'limited'; retryAfterSeconds: number };

/**
 * One login attempt, the same for V1, V2 and V3: refused at once past the failure limit for the
 * username (counted in the token store, so across replicas), otherwise a password check that costs
 * the same for unknown users, disabled users and wrong passwords.
 */
export class LoginService {
  constructor(
    private readonly users: UserDirectory,
    private readonly verifier: PasswordVerifier,
    private readonly store: TokenStore,
    private readonly limits: { limit: number; windowMs: number },
  ) {}

  async login(username: string, password: string): Promise<LoginResult> {
    // Hashed: a key of bounded size whatever the client sent as a name.
    const key = `user:${createHash('sha256').update(username, 'utf8').digest('base64url')}`;
    const before = await this.store.failures(key);
    if (before.count >= this.limits.limit) {
      return { ok: false, reason: 'limited', retryAfterSeconds: Math.max(1, Math.ceil(before.resetInMs / 1000)) };
    }
    // A name that cannot exist is looked up nowhere, but still costs one password check.
    const wellFormed = !usernameSchema.validate(username).error && password.length <= 1024;
    const user = wellFormed ? await this.users.find(username) : null;
    if (await this.verifier.check(username, user, password)) {
      if (before.count > 0) await this.store.clearFailures(key);
      return { ok: true, user: user! };
    }
    await this.store.recordFailure(key, this.limits.windowMs);
    return { ok: false, reason: 'invalid' };
  }
}

/** A project (Swift account owner name) a client may ask for: the same rule as usernames. */
export const isValidProjectName = (name: unknown): name is string => typeof name === 'string' && !usernameSchema.validate(name).error;
