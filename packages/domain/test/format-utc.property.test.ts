import fc from 'fast-check';
import { formatUtc } from '../src';

const byIso = (d: Date) => `${d.toISOString().slice(0, 19).replace('T', ' ')}Z`;

describe('formatUtc', () => {
  it('when given any instant, then it writes what toISOString says, to the second', () => {
    fc.assert(
      fc.property(fc.date({ min: new Date(-1e14), max: new Date(8.64e15), noInvalidDate: true }), (d) =>
        expect(formatUtc(d)).toBe(byIso(d)),
      ),
      { numRuns: 5000 },
    );
  });

  it('when given whole minutes, hours and days in any order, then each is written as toISOString says', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 4_102_444_800_000 / 60_000 }), { maxLength: 50 }), (minutes) => {
        for (const m of minutes) expect(formatUtc(new Date(m * 60_000))).toBe(byIso(new Date(m * 60_000)));
      }),
    );
    expect(formatUtc(new Date(Date.UTC(2026, 10, 24, 22)))).toBe('2026-11-24 22:00:00Z');
    expect(formatUtc(new Date(Date.UTC(2026, 10, 24, 23, 30)))).toBe('2026-11-24 23:30:00Z');
    expect(formatUtc(new Date(Date.UTC(2026, 10, 25)))).toBe('2026-11-25 00:00:00Z');
  });
});
