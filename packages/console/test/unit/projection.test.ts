import { projectThreshold } from '../../src/lib/projection';

const DAY = 86_400_000;

describe('projection of when a ring set reaches 80 %', () => {
  it('when usage grows linearly, then the estimate is where the line crosses 80 % of raw', () => {
    // 100 TB raw, 50 TB used, growing 1 TB a day: 80 TB in 30 days.
    const samples = [0, 1, 2, 3].map((d) => ({ t: d * DAY, usedBytes: (47 + d) * 1e12, rawBytes: 100e12 }));
    const p = projectThreshold(samples);
    expect(p.kind).toBe('at');
    if (p.kind !== 'at') return;
    expect(p.t / DAY).toBeCloseTo(33, 6);
    expect(p.bytesPerDay).toBeCloseTo(1e12, 0);
  });

  it('when usage is flat or shrinking, then it never gets there', () => {
    expect(projectThreshold([0, 1].map((d) => ({ t: d * DAY, usedBytes: 10, rawBytes: 100 })))).toEqual({ kind: 'never' });
    expect(projectThreshold([0, 1].map((d) => ({ t: d * DAY, usedBytes: 10 - d, rawBytes: 100 })))).toEqual({ kind: 'never' });
  });

  it('when the latest sample is already past the threshold, then it says so', () => {
    expect(projectThreshold([{ t: 0, usedBytes: 85, rawBytes: 100 }])).toEqual({ kind: 'already', pct: 85 });
  });

  it('when there is one sample, or all at one time, then there is not enough to say', () => {
    expect(projectThreshold([])).toEqual({ kind: 'insufficient' });
    expect(projectThreshold([{ t: 0, usedBytes: 1, rawBytes: 100 }])).toEqual({ kind: 'insufficient' });
    expect(projectThreshold([{ t: 5, usedBytes: 1, rawBytes: 100 }, { t: 5, usedBytes: 2, rawBytes: 100 }])).toEqual({ kind: 'insufficient' });
  });
});
