import { CairnError, formatUtc, parseTimeRange, parseUtc } from '../src';

const NOW = new Date('2026-11-24T22:17:00Z');
const range = (start?: string, end?: string) => parseTimeRange(start, end, NOW, 90);
const shown = (start?: string, end?: string) => {
  const r = range(start, end);
  return { start: formatUtc(r.start), end: formatUtc(r.end), hours: r.hours, firstHour: formatUtc(r.firstHour) };
};
const message = (f: () => unknown): string => {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(CairnError);
    return (e as CairnError).message;
  }
  throw new Error('no error');
};

describe('utilization time range', () => {
  it('when start is off the half hour, then it rounds down; end rounds up to whole hours after start', () => {
    expect(shown('2026-11-24T10:29:59Z', '2026-11-24T12:00:00Z')).toEqual({
      start: '2026-11-24 10:00:00Z',
      end: '2026-11-24 12:00:00Z',
      hours: 2,
      firstHour: '2026-11-24 10:00:00Z',
    });
    expect(shown('2026-11-24T10:31:00Z', '2026-11-24T11:31:00Z')).toEqual({
      start: '2026-11-24 10:30:00Z',
      end: '2026-11-24 12:30:00Z',
      hours: 2,
      firstHour: '2026-11-24 11:00:00Z',
    });
    expect(shown('2026-11-24 10:00', '2026-11-24T10:00:01Z').hours).toBe(1);
  });

  it('when end is absent, then it is now rounded up', () => {
    expect(shown('2026-11-24T20:00:00Z')).toMatchObject({ end: '2026-11-24 23:00:00Z', hours: 3 });
  });

  it('when zones are given, then times become UTC; without one they are UTC', () => {
    expect(formatUtc(parseUtc('2026-11-24T10:00:00+02:00')!)).toBe('2026-11-24 08:00:00Z');
    expect(formatUtc(parseUtc('2026-11-24T10:00:00-0130')!)).toBe('2026-11-24 11:30:00Z');
    expect(formatUtc(parseUtc('2026-11-24')!)).toBe('2026-11-24 00:00:00Z');
    expect(parseUtc('2026-11-31')).toBeNull();
    expect(parseUtc('2026-11-24T24:00:00Z')).toBeNull();
    expect(parseUtc('tomorrow')).toBeNull();
  });

  it('when input is bad, then the message says what to send', () => {
    expect(message(() => range(undefined))).toMatch(/'start' is required/);
    expect(message(() => range('2026-11-24T10:00:00Z', '2026-11-24T09:00:00Z'))).toMatch(/must be after 'start'/);
    expect(message(() => range('2026-01-01'))).toMatch(/kept 90 days, so the earliest start is 2026-08-26 22:00:00Z/);
    expect(message(() => range('2026-11-24T10:00:00Z', '2027-06-01'))).toMatch(/at most 2184 hours/);
    expect(message(() => range('2026-11-24<b>'))).toContain('&lt;b&gt;');
  });
});
