import { mapConcurrent } from '../src';

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('mapConcurrent', () => {
  it('when 10 items run with concurrency 3, then at most 3 run at once and results keep input order', async () => {
    let running = 0;
    let max = 0;
    const results = await mapConcurrent([...Array(10).keys()], 3, async (n) => {
      running++;
      max = Math.max(max, running);
      await tick(10 - n); // later items finish sooner
      running--;
      return n * 2;
    });
    expect(results).toEqual([0, 2, 4, 6, 8, 10, 12, 14, 16, 18]);
    expect(max).toBe(3);
  });

  it('when concurrency exceeds the item count, then only as many workers as items start', async () => {
    let calls = 0;
    expect(await mapConcurrent(['a'], 8, async (s) => (calls++, s.toUpperCase()))).toEqual(['A']);
    expect(calls).toBe(1);
  });

  it('when fn throws, then the returned promise rejects with that error', async () => {
    await expect(
      mapConcurrent([1, 2], 1, async (n) => {
        if (n === 2) throw new Error('two');
        return n;
      }),
    ).rejects.toThrow('two');
  });

  it.each([0, -1, 1.5, Number.NaN])('when concurrency is %p, then it is refused', async (c) => {
    await expect(mapConcurrent([1], c, async (n) => n)).rejects.toThrow(RangeError);
  });
});
