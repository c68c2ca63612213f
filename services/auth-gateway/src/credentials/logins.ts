import { createHash } from 'node:crypto';
import { isIP } from 'node:net';
import { usernameSchema } from '@cairn/domain';
import type { TokenStore } from '../tokens/store';
import type { UserDirectory, UserRecord } from './users';
import type { PasswordVerifier } from './verifier';

export type LoginResult =
  | { ok: true; user: UserRecord }
  | { ok: false; reason: 'invalid' }
  | { ok: false; reason: 'limited'; retryAfterSeconds: number; message: string };

export interface LoginLimits {
  /** Failed logins allowed per username within `windowMs`. */
  limit: number;
  windowMs: number;
  /** Failed logins allowed per client address within `addressWindowMs` (any usernames). */
  addressLimit: number;
  addressWindowMs: number;
}

const USER_LIMITED = 'Too many failed logins for this user; retry later.';
const ADDRESS_LIMITED = 'Too many failed logins from this address; retry later.';

/** A counter key of bounded size whatever the client sent. */
const hashed = (kind: string, value: string): string => `${kind}:${createHash('sha256').update(value, 'utf8').digest('base64url')}`;

/**
 * The unit an address limit counts: an IPv4 address (also when written IPv4-mapped, ::ffff:a.b.c.d)
 * or an IPv6 /64 — one client usually holds a whole /64 and could otherwise rotate through it.
 */
export function addressUnit(address: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (isIP(address) !== 6) return address;
  // Expand "::" so the first four groups are the /64 prefix.
  const [head = '', tail] = address.toLowerCase().split('%')[0]!.split('::') as [string, string | undefined];
  // An embedded IPv4 tail (64:ff9b::1.2.3.4) is two groups.
  const groupsOf = (part: string): string[] =>
    part.split(':').flatMap((g) => (g.includes('.') ? ['0', '0'] : [g]));
  const left = head ? groupsOf(head) : [];
  const right = tail ? groupsOf(tail) : [];
  const groups = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return `${groups.slice(0, 4).map((g) => g.replace(/^0+(?=.)/, '')).join(':')}::/64`;
}

const retryAfter = (ms: number): number => Math.max(1, Math.ceil(ms / 1000));

/**
 * One login attempt, the same for V1, V2 and V3: refused at once past the failure limit for the
 * username or for the client's address (both counted in the token store, so across replicas),
 * otherwise a password check that costs the same for unknown users, disabled users and wrong
 * passwords.
 *
 * The two limits protect different things: the username limit slows guessing one user's password
 * from many addresses; the address limit slows one address guessing many users' passwords (which
 * the username limit cannot see). A refused attempt is not counted, so an address past its limit
 * adds nothing to the counters of the users it keeps trying: it cannot lock a user out from other
 * addresses beyond what the username limit itself allows.
 */
export class LoginService {
  constructor(
    private readonly users: UserDirectory,
    private readonly verifier: PasswordVerifier,
    private readonly store: TokenStore,
    private readonly limits: LoginLimits,
  ) {}

  /** `clientAddress`: the caller's address as the app determined it (undefined: not limited by address). */
  async login(username: string, password: string, clientAddress?: string): Promise<LoginResult> {
    const userKey = hashed('user', username);
    const addressKey = clientAddress ? hashed('addr', addressUnit(clientAddress)) : undefined;
    // Both reads in the same tick: one Redis round trip with auto-pipelining.
    const [byUser, byAddress] = await Promise.all([
      this.store.failures(userKey),
      addressKey ? this.store.failures(addressKey) : Promise.resolve({ count: 0, resetInMs: 0 }),
    ]);
    if (byAddress.count >= this.limits.addressLimit) {
      return { ok: false, reason: 'limited', retryAfterSeconds: retryAfter(byAddress.resetInMs), message: ADDRESS_LIMITED };
    }
    if (byUser.count >= this.limits.limit) {
      return { ok: false, reason: 'limited', retryAfterSeconds: retryAfter(byUser.resetInMs), message: USER_LIMITED };
    }
    // A name that cannot exist is looked up nowhere, but still costs one password check.
    const wellFormed = !usernameSchema.validate(username).error && password.length <= 1024;
    const user = wellFormed ? await this.users.findForLogin(username) : null;
    if (await this.verifier.check(username, user, password)) {
      // The address counter stays: a client holding one valid password must not be able to
      // reset its address's count by logging in between guesses.
      if (byUser.count > 0) await this.store.clearFailures(userKey);
      return { ok: true, user: user! };
    }
    await Promise.all([
      this.store.recordFailure(userKey, this.limits.windowMs),
      addressKey ? this.store.recordFailure(addressKey, this.limits.addressWindowMs) : undefined,
    ]);
    return { ok: false, reason: 'invalid' };
  }
}

/** A project (Swift account owner name) a client may ask for: the same rule as usernames. */
export const isValidProjectName = (name: unknown): name is string => typeof name === 'string' && !usernameSchema.validate(name).error;
