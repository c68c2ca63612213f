import { ExpiryHeap, type Expiring } from '../src/tokens/expiry-heap';

interface Item extends Expiring {
  name: number;
}

/** A small seeded generator, so a failure replays. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe('the expiry heap', () => {
  it.each([1, 2, 3, 42, 1234])(
    'when items are pushed, moved and removed at random (seed %i), then the top is always the earliest expiry, as a sorted list says',
    (seed) => {
      const next = random(seed);
      const heap = new ExpiryHeap<Item>();
      const held: Item[] = [];
      for (let step = 0; step < 5000; step++) {
        const roll = next();
        if (roll < 0.5 || held.length === 0) {
          const item = { name: step, expiresAt: Math.floor(next() * 1000), slot: -1 };
          heap.push(item);
          held.push(item);
        } else if (roll < 0.75) {
          const item = held[Math.floor(next() * held.length)]!;
          item.expiresAt = Math.floor(next() * 1000);
          heap.moved(item);
        } else {
          const [item] = held.splice(Math.floor(next() * held.length), 1);
          heap.remove(item!);
          expect(item!.slot).toBe(-1);
          heap.remove(item!); // a second removal changes nothing
        }
        expect(heap.size).toBe(held.length);
        expect(heap.peek()?.expiresAt).toBe(held.length ? Math.min(...held.map((i) => i.expiresAt)) : undefined);
      }
      // Taking the top until empty yields every item, in order of expiry.
      const order: number[] = [];
      for (let top = heap.peek(); top; top = heap.peek()) {
        order.push(top.expiresAt);
        heap.remove(top);
      }
      expect(order).toEqual(held.map((i) => i.expiresAt).sort((a, b) => a - b));
    },
  );
});
