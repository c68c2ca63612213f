/** Something that expires; `slot` is its place in an ExpiryHeap (-1 when in none). */
export interface Expiring {
  expiresAt: number;
  slot: number;
}

/**
 * A binary min-heap on `expiresAt` that knows where each item sits, so an item can be moved
 * (its expiry changed) or taken out in O(log n), and the next to expire is always at the top.
 * The in-process token store expires entries with it: each write costs O(log n) whatever the
 * number of entries, where a scan of every entry would cost O(n).
 */
export class ExpiryHeap<T extends Expiring> {
  private readonly items: T[] = [];

  get size(): number {
    return this.items.length;
  }

  /** The item that expires first. */
  peek(): T | undefined {
    return this.items[0];
  }

  push(item: T): void {
    item.slot = this.items.length;
    this.items.push(item);
    this.up(item.slot);
  }

  /** Puts `item` back in order after its `expiresAt` changed. */
  moved(item: T): void {
    this.down(this.up(item.slot));
  }

  remove(item: T): void {
    const at = item.slot;
    if (at < 0 || this.items[at] !== item) return;
    const last = this.items.pop()!;
    item.slot = -1;
    if (last === item) return;
    this.items[at] = last;
    last.slot = at;
    this.down(this.up(at));
  }

  private up(at: number): number {
    const item = this.items[at]!;
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (this.items[parent]!.expiresAt <= item.expiresAt) break;
      this.place(this.items[parent]!, at);
      at = parent;
    }
    this.place(item, at);
    return at;
  }

  private down(at: number): void {
    const item = this.items[at]!;
    const n = this.items.length;
    for (;;) {
      const left = 2 * at + 1;
      if (left >= n) break;
      const right = left + 1;
      const child = right < n && this.items[right]!.expiresAt < this.items[left]!.expiresAt ? right : left;
      if (this.items[child]!.expiresAt >= item.expiresAt) break;
      this.place(this.items[child]!, at);
      at = child;
    }
    this.place(item, at);
  }

  private place(item: T, at: number): void {
    this.items[at] = item;
    item.slot = at;
  }
}
