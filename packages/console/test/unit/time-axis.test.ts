import { timeAxisRange } from '../../src/lib/time-axis';

describe('timeAxisRange', () => {
  it('when there is a single sample, then the axis spans the day around it, not years', () => {
    const t = Date.parse('2026-11-27T12:00:00Z') / 1000;
    expect(timeAxisRange([t])).toEqual([t - 43_200, t + 43_200]);
    expect(timeAxisRange([t, t, t])).toEqual([t - 43_200, t + 43_200]);
  });

  it('when the samples span a range, then the axis is exactly that range, whatever their order', () => {
    expect(timeAxisRange([90_000, 1000, 5000])).toEqual([1000, 90_000]);
  });

  it('when there is nothing to show, then the axis is the day around now', () => {
    const [from, to] = timeAxisRange([]);
    expect(to - from).toBe(86_400);
    expect(Math.abs((from + to) / 2 - Date.now() / 1000)).toBeLessThan(5);
  });
});
