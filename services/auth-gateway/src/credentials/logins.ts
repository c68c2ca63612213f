import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { isUsername, setBounded, sha256Base64url } from '@cairn/domain';
import type { TokenStore } from '../tokens/store';
import type { UserDirectory, UserRecord } from './users';
import type { PasswordVerifier } from './verifier';

export type LoginResult =
  | { ok: true; user: UserRecord }
  | { ok: false; reason: 'invalid' }
  | { ok: false; reason: 'limited'; retryAfterSeconds: number; message: string };

export interface LoginLimits {
  /** Failed logins allowed per (client address, username) within `windowMs`: one guesser at one name. */
  limit: number;
  windowMs: number;
  /** Failed logins allowed per client address within `addressWindowMs` (any usernames). */
  addressLimit: number;
  addressWindowMs: number;
  /** Failed logins allowed per username within `userWindowMs` from addresses it has not logged in from. */
  userLimit: number;
  userWindowMs: number;
  /** How long an address the user logged in from stays exempt from `userLimit`. */
  knownAddressMs: number;
}

const PAIR_LIMITED = 'Too many failed logins for this user from this address; retry later.';
const ADDRESS_LIMITED = 'Too many failed logins from this address; retry later.';
const USER_LIMITED =
  'Too many failed logins for this user from many addresses; retry later, or from an address this user has logged in from before.';

/** A counter key of bounded size whatever the client sent. */
const hashed = (kind: string, value: string): string => `${kind}:${sha256Base64url(value)}`;

/** The failure counters of one name from one address unit, and the known-address flag's key. */
interface CounterKeys {
  userKey: string;
  pairKey?: string;
  addressKey?: string;
  /** Every counter an attempt with these keys is tracked under. */
  all: string[];
  /** As the store reads them in one go: the name's counters, then the address's. */
  groups: string[][];
  /** The known-address flag's key for the user row last seen under the name (knownKey). */
  known?: { id: string; key: string };
}

/**
 * A username's own counter and its counters with addresses share a Redis Cluster hash tag, the
 * name's hash, so that a login reads them in one MGET (tokens/redis-store.ts); an address's counter
 * is read beside them.
 */
function hashCounterKeys(username: string, unit: string | undefined): CounterKeys {
  const tag = `{${sha256Base64url(username)}}`;
  const userKey = `${tag}:user`;
  const pairKey = unit !== undefined ? `${tag}:${hashed('pair', `${unit}\0${username}`)}` : undefined;
  const addressKey = unit !== undefined ? hashed('addr', unit) : undefined;
  const byName = pairKey !== undefined ? [userKey, pairKey] : [userKey];
  return addressKey !== undefined
    ? { userKey, pairKey, addressKey, all: [...byName, addressKey], groups: [byName, [addressKey]] }
    : { userKey, all: byName, groups: [byName] };
}

/** Names longer than any valid one are not remembered: the memo's size stays bounded in bytes too. */
const MAX_REMEMBERED_NAME = 256;

/**
 * The unit an address limit counts: an IPv4 address (also when written IPv4-mapped, ::ffff:a.b.c.d)
 * or an IPv6 /64 — one client usually holds a whole /64 and could otherwise rotate through it.
 */
export function addressUnit(address: string): string {
  // Node's isIP is the gate: ipaddr.js would also take IPv4 shorthands ("127.1") that no socket reports.
  if (isIP(address) !== 6) return address;
  const ip = ipaddr.IPv6.parse(address);
  if (ip.isIPv4MappedAddress()) return ip.toIPv4Address().toString();
  // The key's spelling (four hex groups without leading zeros, then "::/64") is what Redis holds
  // counts under: it must not change between versions.
  return `${ip.parts
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}

const retryAfter = (ms: number): number => Math.max(1, Math.ceil(ms / 1000));

/**
 * What a login presents and how it is checked: a password, or an application credential's secret.
 * Every kind goes through the same limits (LoginService.loginWith), so none is a way around them.
 */
export interface LoginCredential {
  /**
   * The name the failure counters are kept under, taken from the request alone (a username, or
   * an application credential's id), so that counting costs the same whether it names anything.
   */
  subject: string;
  /** The user it would log in, or null; one lookup that costs the same either way. */
  find(): Promise<UserRecord | null>;
  /** True when check() would pass from memory at once: verified moments ago, so not a guess. */
  remembers(user: UserRecord | null): boolean;
  /** True only for an enabled user and the right secret; costs the same when `user` is null. */
  check(user: UserRecord | null): Promise<boolean>;
}

/**
 * A username and password, checked by the verifier (one KDF run unless remembered). A class rather
 * than an object of closures: one is made for every login, and its methods are made once.
 */
export class PasswordCredential implements LoginCredential {
  /** The verifier's key (an HMAC) for the user last asked about: remembers() and check() both need it. */
  private keyed: { user: UserRecord | null; key: string } | undefined;

  constructor(
    private readonly users: UserDirectory,
    private readonly verifier: PasswordVerifier,
    readonly subject: string,
    private readonly password: string,
    /**
     * V1's `<account>:<username>` with another account: the user `<account>` when it was imported
     * from tempauth with `<username>` as its tempauth name (then it is that user logging in to its
     * own account, as with tempauth), else the user `<username>`. Both rows are asked in the same
     * tick whichever exists, so the answer and its cost tell nothing of which does.
     */
    private readonly tempauthAccount?: string,
    /**
     * The change feed's fence, sent when the login arrived (UserDirectory.startFence): it goes out
     * with the failure counters' read, and the row is looked up once both are back.
     */
    private readonly fenced?: Promise<boolean>,
  ) {}

  async find(): Promise<UserRecord | null> {
    const { subject: username, tempauthAccount } = this;
    if (tempauthAccount === undefined || tempauthAccount === username) return this.lookUp(username);
    const [named, account] = await Promise.all([this.lookUp(username), this.lookUp(tempauthAccount)]);
    return account !== null && account.tempauthUser === username ? account : named;
  }

  remembers(user: UserRecord | null): boolean {
    return this.verifier.remembers(this.subject, user, this.password, this.keyFor(user));
  }

  check(user: UserRecord | null): Promise<boolean> {
    return this.verifier.check(this.subject, user, this.password, this.keyFor(user));
  }

  /** A name that cannot exist is looked up nowhere, but still costs one password check. */
  private lookUp(name: string): Promise<UserRecord | null> {
    const usable = isUsername(name) && this.password.length <= 1024;
    return usable ? this.users.findForLogin(name, this.fenced) : Promise.resolve(null);
  }

  private keyFor(user: UserRecord | null): string {
    const keyed =
      this.keyed?.user === user
        ? this.keyed
        : (this.keyed = { user, key: this.verifier.key(this.subject, user, this.password) });
    return keyed.key;
  }
}

/**
 * A read of one name's and address's failure counts that has not been answered yet: the logins on
 * the same counters that arrive meanwhile share it (LoginService.readCounts).
 */
interface CountRead {
  counts: Promise<number[][]>;
  /** How many attempts on each of its keys ended since it was sent (see LoginService.readsUnderWay). */
  ended: Map<string, number>;
  /** The logins still deciding on its counts; `ended` is kept up to date until the last is done. */
  readers: number;
}

/** One login attempt past the limits that need no password check. */
interface Attempt {
  credential: LoginCredential;
  unit: string | undefined;
  user: UserRecord | null;
  /** Whether the user has logged in from this address (asked once, when it matters). */
  isKnown: () => Promise<boolean>;
  /** The pair's count when the attempt began: a success clears it only when there is one. */
  byPair: number;
  keys: CounterKeys;
}

/**
 * One login attempt, the same for V1, V2 and V3, and for passwords and application credentials
 * (LoginCredential; "username" below is its subject). Three failure counters, all in the token store
 * (so they hold across replicas), throttle the guesser rather than the user it guesses at:
 *
 * - per client address and username (`limit`): one address guessing one name. Past it that
 *   address gets 429 for that name, even with the right password (else the answer would tell a
 *   guesser that its guess was right); the owner elsewhere is not affected. A success from that
 *   address clears it.
 * - per client address (`addressLimit`): one address guessing many names, which no per-name
 *   count sees.
 * - per username (`userLimit`, higher, over a longer window): many addresses guessing one name. Failures from
 *   addresses the user has logged in from within `knownAddressMs` do not count, and past the
 *   limit those addresses still get their password checked; every other address gets 429. This
 *   bounds a distributed guess while the owner's usual clients keep working, and a success never
 *   clears it (the owner's clients log in all the time: they would reset a count an attacker is
 *   building up).
 *
 * A refused attempt is not counted: an address past its limit cannot add to the counts of the
 * users it keeps naming. Unknown names are counted and refused exactly as known ones, and the
 * "known address" question is asked for them too (of a key that cannot exist), so neither the
 * answers nor their timing tell whether a name exists. Counts are read before the check and
 * added to after it. Password checks this process is still running are in no count yet: when they
 * would take a count to its limit, a new attempt waits for them and reads the counts again, so
 * guesses sent to one gateway together cannot all pass a limit, and a client's own logins sent
 * together are delayed, not refused, because of each other. A password the verifier remembers as
 * right (a client logging in again) is never held back: it cannot be a guess. Checks in flight on
 * other replicas are not seen: with R replicas a limit can be passed by at most R - 1 times
 * itself, and only while checks run.
 *
 * Logins on the same counters (one name from one address unit) that arrive while a read of them is
 * out share its answer rather than each sending one: counts as they stood less than a round trip
 * before such a login arrived, as if it had arrived then, and what this process's own attempts
 * added since the read was sent is counted as still pending. A login that waited for checks in
 * flight reads again with a read of its own, sent after they ended.
 */
export class LoginService {
  /**
   * Known-address marks this process wrote recently (by key: expiry), so a busy user's logins do not each write one.
   */
  private readonly marked = new Map<string, number>();
  /** Counter keys by address unit and name: a client logging in again hashes nothing. */
  private readonly keysByName = new Map<string, CounterKeys>();
  /** The attempts this process is checking now, per counter key. */
  private readonly inFlight = new Map<string, Set<Promise<LoginResult>>>();
  /**
   * Reads of counts under way, each with how many attempts on its keys ended while it ran: such an
   * attempt may have added to its count after the read was answered, so it still counts as pending.
   */
  private readonly readsUnderWay = new Set<Map<string, number>>();
  /** The reads of counts not yet answered, by the (remembered) keys they read: logins arriving now join them. */
  private readonly unanswered = new Map<CounterKeys, CountRead>();

  constructor(
    private readonly users: UserDirectory,
    private readonly verifier: PasswordVerifier,
    private readonly store: TokenStore,
    private readonly limits: LoginLimits,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * A password login; `clientAddress`: the caller's address as the app determined it (undefined: not limited by
   * address, never a known address); `tempauthAccount`: V1's account (see passwordCredential).
   */
  login(username: string, password: string, clientAddress?: string, tempauthAccount?: string): Promise<LoginResult> {
    return this.loginWith(
      new PasswordCredential(this.users, this.verifier, username, password, tempauthAccount, this.users.startFence()),
      clientAddress,
    );
  }

  /** Any login, under the limits: counted under `credential.subject` and the address. */
  async loginWith(credential: LoginCredential, clientAddress?: string): Promise<LoginResult> {
    const unit = clientAddress ? addressUnit(clientAddress) : undefined;
    const keys = this.counterKeys(credential.subject, unit);
    const { userKey, pairKey, addressKey } = keys;
    for (let waited = false; ; waited = true) {
      const read = this.readCounts(keys, !waited);
      const { ended } = read;
      let busy: Array<Promise<LoginResult>>;
      try {
        const [[byUser = 0, byPair = 0] = [], [byAddress = 0] = []] = await read.counts;
        if (byAddress >= this.limits.addressLimit) return this.limited(addressKey!, ADDRESS_LIMITED);
        if (byPair >= this.limits.limit) return this.limited(pairKey!, PAIR_LIMITED);
        const user = await credential.find();
        // Asked only when the answer matters: past the per-user limit, or to decide whether a failure counts.
        let known: Promise<boolean> | undefined;
        const isKnown = () => (known ??= this.isKnownAddress(keys, user, unit));
        if (byUser >= this.limits.userLimit && !(await isKnown())) return this.limited(userKey, USER_LIMITED);
        const attempt: Attempt = { credential, unit, user, isKnown, byPair, keys };
        // A password verified moments ago cannot be a guess: it is neither held back nor tracked.
        if (credential.remembers(user)) return this.check(attempt);
        // From here to track() nothing awaits, so no other attempt runs in between.
        const pending = (key: string) => (this.inFlight.get(key)?.size ?? 0) + (ended.get(key) ?? 0);
        const counted: Array<[string | undefined, number, number]> = [
          [addressKey, byAddress, this.limits.addressLimit],
          [pairKey, byPair, this.limits.limit],
          [userKey, byUser, this.limits.userLimit],
        ];
        const reached = counted.filter(
          ([key, count, limit]) => key !== undefined && count < limit && count + pending(key) >= limit,
        );
        if (reached.length === 0) {
          const checked = this.check(attempt);
          this.track(keys.all, checked);
          return checked;
        }
        // Wait for the checks still running, if any (those that ended during the reads may be in
        // the counts by now), then read again.
        busy = reached.flatMap(([key]) => [...(this.inFlight.get(key!) ?? [])]);
      } finally {
        if (--read.readers === 0) this.readsUnderWay.delete(ended);
      }
      await Promise.allSettled(busy);
    }
  }

  /**
   * The failure counts of `keys`, in one read (the name's counters share a slot, the address's is
   * another: tokens/store.ts): the one still out for them when `mayJoin`, else a new one.
   */
  private readCounts(keys: CounterKeys, mayJoin: boolean): CountRead {
    const out = mayJoin ? this.unanswered.get(keys) : undefined;
    if (out) {
      out.readers++;
      return out;
    }
    const ended = new Map(keys.all.map((key) => [key, 0]));
    this.readsUnderWay.add(ended);
    const read: CountRead = { counts: this.store.failures(keys.groups), ended, readers: 1 };
    this.unanswered.set(keys, read);
    // Registered before any reader's await, so it runs first: no login arriving after the answer joins it.
    const answered = () => {
      if (this.unanswered.get(keys) === read) this.unanswered.delete(keys);
    };
    read.counts.then(answered, answered);
    return read;
  }

  /** The password check (one KDF run unless remembered), and what its outcome clears or counts. */
  private async check({ credential, unit, user, isKnown, byPair, keys }: Attempt): Promise<LoginResult> {
    const { userKey, pairKey, addressKey } = keys;
    if (await credential.check(user)) {
      // The address counter stays: a client holding one valid password must not be able to
      // reset its address's count by logging in between guesses (the pair count is per name).
      await Promise.all([
        pairKey && byPair > 0 ? this.store.clearFailures(pairKey) : undefined,
        this.markKnown(keys, user!, unit),
      ]);
      return { ok: true, user: user! };
    }
    const fromKnown = await isKnown();
    await Promise.all([
      fromKnown ? undefined : this.store.recordFailure(userKey, this.limits.userWindowMs),
      addressKey ? this.store.recordFailure(addressKey, this.limits.addressWindowMs) : undefined,
      pairKey ? this.store.recordFailure(pairKey, this.limits.windowMs) : undefined,
    ]);
    return { ok: false, reason: 'invalid' };
  }

  private track(keys: string[], attempt: Promise<LoginResult>): void {
    for (const key of keys) {
      const set = this.inFlight.get(key) ?? new Set();
      set.add(attempt);
      this.inFlight.set(key, set);
    }
    const done = () => {
      for (const key of keys) {
        const set = this.inFlight.get(key);
        set?.delete(attempt);
        if (set?.size === 0) this.inFlight.delete(key);
        for (const ended of this.readsUnderWay) if (ended.has(key)) ended.set(key, ended.get(key)! + 1);
      }
    };
    attempt.then(done, done);
  }

  /**
   * A refusal past the limit of counter `key`, retried when its window ends: the window is read
   * only here, so that logins under their limits read their counts and nothing more.
   */
  private async limited(key: string, message: string): Promise<LoginResult> {
    const left = await this.store.failureWindowLeft(key);
    return { ok: false, reason: 'limited', retryAfterSeconds: retryAfter(left), message };
  }

  /** The keys of `username`'s counters from `unit`, hashed once while the name keeps logging in. */
  private counterKeys(username: string, unit: string | undefined): CounterKeys {
    if (username.length > MAX_REMEMBERED_NAME) return hashCounterKeys(username, unit);
    // No unit is written '' (an address unit never is).
    const memo = `${unit ?? ''}\0${username}`;
    let keys = this.keysByName.get(memo);
    if (!keys) setBounded(this.keysByName, memo, (keys = hashCounterKeys(username, unit)), 10_000);
    return keys;
  }

  /** The flag's key: the user's row id (never reused: a re-created user starts with no known address). */
  private knownKey(keys: CounterKeys, user: UserRecord | null, unit: string): string {
    // No row: a key no user can have, asked all the same so that unknown names take as long.
    const id = user ? user.id : '-';
    if (keys.known?.id !== id) keys.known = { id, key: hashed('known', `${id}\0${unit}`) };
    return keys.known.key;
  }

  private async isKnownAddress(keys: CounterKeys, user: UserRecord | null, unit: string | undefined): Promise<boolean> {
    if (unit === undefined) return false;
    return this.store.hasFlag(this.knownKey(keys, user, unit));
  }

  /** Remembers that the user logged in from this address; written at most every 1/30 of its life per process. */
  private async markKnown(keys: CounterKeys, user: UserRecord, unit: string | undefined): Promise<void> {
    if (unit === undefined) return;
    const key = this.knownKey(keys, user, unit);
    const now = this.now();
    const until = this.marked.get(key);
    if (until !== undefined && until > now) return;
    await this.store.setFlag(key, this.limits.knownAddressMs);
    // Remembered only once written: a write that failed is tried again by the next login.
    setBounded(this.marked, key, now + this.limits.knownAddressMs / 30, 100_000);
  }
}

/** A project (Swift account owner name) a client may ask for: the same rule as usernames. */
export const isValidProjectName = (name: unknown): name is string => typeof name === 'string' && isUsername(name);
