import { describeProjection, historySamples, projectThreshold } from '../../src/lib/projection';

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
    expect(projectThreshold([0, 1].map((d) => ({ t: d * DAY, usedBytes: 10, rawBytes: 100 })))).toEqual({
      kind: 'never',
    });
    expect(projectThreshold([0, 1].map((d) => ({ t: d * DAY, usedBytes: 10 - d, rawBytes: 100 })))).toEqual({
      kind: 'never',
    });
  });

  it('when the latest sample is already past the threshold, then it says so', () => {
    expect(projectThreshold([{ t: 0, usedBytes: 85, rawBytes: 100 }])).toEqual({ kind: 'already', pct: 85 });
  });

  it('when there is one sample, or all at one time, then there is not enough to say', () => {
    expect(projectThreshold([])).toEqual({ kind: 'insufficient' });
    expect(projectThreshold([{ t: 0, usedBytes: 1, rawBytes: 100 }])).toEqual({ kind: 'insufficient' });
    expect(
      projectThreshold([
        { t: 5, usedBytes: 1, rawBytes: 100 },
        { t: 5, usedBytes: 2, rawBytes: 100 },
      ]),
    ).toEqual({ kind: 'insufficient' });
  });
});

describe('what the capacity page says of a projection', () => {
  it('when the projection has a date, then the sentence says it is an estimate, the rate and the day', () => {
    const text = describeProjection({ kind: 'at', t: Date.parse('2027-03-14T10:00:00Z'), bytesPerDay: 2.5e12 });
    expect(text).toBe(
      "Estimate: at this period's rate (2.27 TiB a day, a straight line through the samples), it reaches 80 % around 2027-03-14.",
    );
  });

  it('when there is no growth, too little history or the set is past the line, then the sentence says so', () => {
    expect(describeProjection({ kind: 'never' })).toMatch(/^Estimate: not growing/);
    expect(describeProjection({ kind: 'insufficient' })).toMatch(/Too little history/);
    expect(describeProjection({ kind: 'already', pct: 83.25 })).toBe('Already 83.3 % used, past 80 %.');
  });

  it('when history samples in TB are converted, then bytes and epoch milliseconds come out, and a growing set gets a date', () => {
    const samples = historySamples([
      { time: '2026-11-01T00:00:00.000Z', total_used_tb: 10, total_raw_tb: 100 },
      { time: '2026-11-11T00:00:00.000Z', total_used_tb: 20, total_raw_tb: 100 },
    ]);
    expect(samples[0]).toEqual({ t: Date.parse('2026-11-01T00:00:00Z'), usedBytes: 10e12, rawBytes: 100e12 });
    const p = projectThreshold(samples);
    expect(p.kind).toBe('at');
    expect((p as { bytesPerDay: number }).bytesPerDay).toBeCloseTo(1e12, -3);
    // 60 TB more at 1 TB a day after 2026-11-11.
    expect(new Date((p as { t: number }).t).toISOString().slice(0, 10)).toBe('2027-01-10');
  });
});
