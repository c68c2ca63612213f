import { axisTimes, byteIncrements, chartTime, samplesOf } from '../../src/lib/chart-axes';

describe('time chart axes', () => {
  it('when times are labelled, then 24-hour UTC as in the tables, the date only where the day changes', () => {
    const h = Date.parse('2026-11-24T22:00:00Z') / 1000;
    expect(chartTime(h)).toBe('2026-11-24 22:00');
    expect(axisTimes([h, h + 3600, h + 7200, h + 10800])).toEqual([
      '2026-11-24 22:00',
      '23:00',
      '2026-11-25 00:00',
      '01:00',
    ]);
    const day = Date.parse('2026-11-24T00:00:00Z') / 1000;
    expect(axisTimes([day, day + 86_400])).toEqual(['2026-11-24', '2026-11-25']);
  });

  it('when the value axis picks a step, then only whole numbers are offered', () => {
    const steps = byteIncrements();
    expect(steps.every((s) => Number.isInteger(s) && s >= 1)).toBe(true);
    expect(steps).toEqual([...steps].sort((a, b) => a - b));
    expect(steps).toContain(2 ** 30);
    expect(steps).toContain(5e9);
  });

  it('when series are mostly gaps, then the samples are the times with any value', () => {
    expect(samplesOf([1, 2, 3], [{ values: [null, 5, null] }, { values: [null, null, null] }])).toEqual([
      { t: 2, values: [5, null] },
    ]);
  });
});
