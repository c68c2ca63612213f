import { setBounded } from '@cairn/domain';

/** At most this many answers are remembered; the oldest goes first. */
const MAX_ENTRIES = 50_000;

/**
 * Answers read from Postgres (a user row, an S3 credential; also "none"), each remembered for at
 * most `maxAgeMs` counted from before its query, and dropped as soon as a change notice names it.
 * The user directory and the S3 credential directory extend it with their queries, so the rules
 * that make a remembered row safe to use live here once, and the change feed tells both alike
 * (follow, forget, forgetAll):
 *
 * - An answer's age counts from before its query: a change committed while the query ran may be
 *   missing from it, so the `maxAgeMs` bound holds only when measured from there.
 * - An answer read while a notice made this cache forget anything is not kept: it may predate the
 *   change the notice announced.
 * - `readCurrent` (what a login or a signature check uses) takes a remembered answer only behind the
 *   change feed's fence, which resolves true once every change committed before the call has been
 *   heard and applied; without a feed it reads afresh every time. `readRecent` (what token validation
 *   uses) takes any answer younger than `maxAgeMs`.
 */
export class FencedCache<V> {
  private readonly remembered = new Map<string, { at: number; value: V }>();
  /** While change notices are heard: resolves true once every change committed before the call has been applied. */
  private fence?: () => Promise<boolean>;
  /** Counts forgets: an answer read while one happened may predate the change, so it is not kept. */
  private forgets = 0;
  /**
   * Reads under way for `readRecent`, by key, with the forget count when each began: requests for
   * one key that miss together (32 logins of one user when its answer ages out) share one query,
   * unless something was forgotten since it began (then it may predate a change the caller must see).
   */
  private readonly reading = new Map<string, { forgets: number; value: Promise<V> }>();

  constructor(
    private readonly maxAgeMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Reads afresh with `query`, and remembers the answer unless something was forgotten meanwhile. */
  protected async readFresh(key: string, query: () => Promise<V>): Promise<V> {
    const readAt = this.now();
    const forgetsBefore = this.forgets;
    const value = await query();
    if (this.forgets === forgetsBefore) this.remember(key, value, readAt);
    return value;
  }

  /** A remembered answer no older than `maxAgeMs`, or a fresh read (shared by those that arrive while it runs). */
  protected async readRecent(key: string, query: () => Promise<V>): Promise<V> {
    const hit = this.remembered.get(key);
    if (hit && this.now() - hit.at <= this.maxAgeMs) return hit.value;
    if (this.maxAgeMs <= 0) return this.readFresh(key, query);
    const shared = this.reading.get(key);
    if (shared && shared.forgets === this.forgets) return shared.value;
    const entry = { forgets: this.forgets, value: this.readFresh(key, query) };
    this.reading.set(key, entry);
    const done = () => {
      if (this.reading.get(key) === entry) this.reading.delete(key);
    };
    entry.value.then(done, done);
    return entry.value;
  }

  /**
   * A remembered answer only once the fence has passed (then it reflects every earlier change), else a
   * fresh read. `fenced`: a fence the caller sent earlier (startFence), else one is sent now.
   */
  protected async readCurrent(key: string, query: () => Promise<V>, fenced = this.startFence()): Promise<V> {
    if (fenced && (await fenced)) return this.readRecent(key, query);
    return this.readFresh(key, query);
  }

  /**
   * A fence sent now, for a read to be made later: it covers every change committed before this
   * call, so a caller with other waiting to do first (a login reading its failure counters) waits
   * for both at once instead of one after the other. Undefined while no feed is followed.
   */
  startFence(): Promise<boolean> | undefined {
    return this.fence?.();
  }

  get isFollowing(): boolean {
    return this.fence !== undefined;
  }

  /**
   * Told by the change feed when it starts hearing changes (with its fence) or stops (without);
   * either way what was remembered may have changed unheard, so it is forgotten.
   */
  follow(fence?: () => Promise<boolean>): void {
    this.fence = fence;
    this.forgetAll();
  }

  forget(key: string): void {
    this.forgets++;
    this.remembered.delete(key);
  }

  /** Forgets every answer `matches` picks (a notice named something the answers carry, not their key). */
  forgetWhere(matches: (value: V) => boolean): void {
    this.forgets++;
    for (const [key, entry] of this.remembered) if (matches(entry.value)) this.remembered.delete(key);
  }

  forgetAll(): void {
    this.forgets++;
    this.remembered.clear();
  }

  private remember(key: string, value: V, at: number): void {
    if (this.maxAgeMs <= 0) return;
    setBounded(this.remembered, key, { at, value }, MAX_ENTRIES);
  }
}
