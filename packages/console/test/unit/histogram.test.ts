import { binPercentages, summarize } from '../../src/lib/histogram';

describe('histogram of device percent used', () => {
  it('when values are binned, then each lands in [from, to) and 100 in the last bin', () => {
    const bins = binPercentages([0, 4.99, 5, 62.5, 79.9, 80, 100, 100], 5);
    expect(bins).toHaveLength(20);
    expect(bins[0]).toEqual({ from: 0, to: 5, count: 2 });
    expect(bins[1]!.count).toBe(1);
    expect(bins[12]!.count).toBe(1);
    expect(bins[15]!.count).toBe(1);
    expect(bins[16]!.count).toBe(1);
    expect(bins[19]!.count).toBe(2);
    expect(bins.reduce((a, b) => a + b.count, 0)).toBe(8);
  });

  it('when a value is out of range or not a number, then it is clamped or skipped', () => {
    const bins = binPercentages([-1, 101, Number.NaN], 10);
    expect(bins[0]!.count).toBe(1);
    expect(bins[9]!.count).toBe(1);
    expect(bins.reduce((a, b) => a + b.count, 0)).toBe(2);
  });

  it('when the width does not divide 100, then it is refused', () => {
    expect(() => binPercentages([], 7)).toThrow(/divide 100/);
  });

  it('when devices are summarised, then the statistics match the capacity API (p95 by nearest rank)', () => {
    expect(summarize([50, 75])).toEqual({ count: 2, min: 50, max: 75, avg: 62.5, p95: 75 });
    const twenty = Array.from({ length: 20 }, (_, i) => i + 1);
    expect(summarize(twenty)!.p95).toBe(19);
    expect(summarize([])).toBeNull();
  });
});
