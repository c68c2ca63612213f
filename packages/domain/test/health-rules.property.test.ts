import fc from 'fast-check';
import { growingSince, projectDaysToFull } from '../src';

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 10, 1);

describe('health rule properties', () => {
  it('when used bytes grow linearly, then the projection is free / slope whatever the noise-free line', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.01, max: 100, noNaN: true }),
        fc.double({ min: 0, max: 10_000, noNaN: true }),
        fc.integer({ min: 25, max: 24 * 7 }),
        (perDay, free, hours) => {
          const s = Array.from({ length: hours }, (_, h) => ({
            ringSet: 'x',
            hour: new Date(T0 + h * 3_600_000),
            usedTb: 5 + (perDay * h) / 24,
            freeTb: free + (perDay * (hours - 1 - h)) / 24,
          }));
          const days = projectDaysToFull(s)!;
          expect(days).toBeCloseTo(free / perDay, 6);
        },
      ),
    );
  });

  it('when samples are shuffled, then the projection and the growth start do not change', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 7 * 24 }), fc.double({ min: 0, max: 1e6, noNaN: true })), {
          minLength: 3,
          maxLength: 60,
        }),
        (raw) => {
          const byHour = new Map(raw.map(([h, v]) => [h, v]));
          const s = [...byHour].map(([h, v]) => ({
            ringSet: 'x',
            hour: new Date(T0 + h * 3_600_000),
            usedTb: v,
            freeTb: 10,
            at: new Date(T0 + h * 3_600_000),
            count: Math.round(v),
          }));
          const reversed = [...s].reverse();
          expect(projectDaysToFull(reversed)).toEqual(projectDaysToFull(s));
          const at = new Date(T0 + 8 * DAY);
          expect(growingSince(reversed, DAY, at)).toEqual(growingSince(s, DAY, at));
        },
      ),
    );
  });

  it('when a series ever falls after its start, then it is not growing', () => {
    fc.assert(
      fc.property(fc.array(fc.nat({ max: 1000 }), { minLength: 2, maxLength: 30 }), (counts) => {
        const s = counts.map((count, i) => ({ at: new Date(T0 + i * 600_000), count }));
        const at = new Date(T0 + counts.length * 600_000);
        const since = growingSince(s, 600_000, at);
        if (since === null) return;
        const window = s.filter((x) => x.at.getTime() >= since.getTime());
        for (let i = 1; i < window.length; i++) expect(window[i]!.count).toBeGreaterThanOrEqual(window[i - 1]!.count);
        expect(window[window.length - 1]!.count).toBeGreaterThan(window[0]!.count);
      }),
    );
  });
});
