import { devicePctUsed, formatAge, formatBytes, formatPct, formatTb, formatTime } from '../../src/lib/format';

describe('display formatting', () => {
  it('when bytes are shown, then decimal units with two decimals, as the capacity API counts TB', () => {
    expect(formatBytes(0)).toBe('0 B');
    expect(formatBytes(999)).toBe('999 B');
    expect(formatBytes(1500)).toBe('1.50 KB');
    expect(formatBytes(4e12)).toBe('4.00 TB');
    expect(formatBytes(1.234e15)).toBe('1.23 PB');
    expect(formatBytes(null)).toBe('—');
  });

  it('when TB figures are shown, then two decimals, and tiny ones in smaller units rather than 0.00 TB', () => {
    expect(formatTb(1.5)).toBe('1.50 TB');
    expect(formatTb(0)).toBe('0.00 TB');
    expect(formatTb(0.0005)).toBe('500.00 MB');
    expect(formatTb(Number.NaN)).toBe('—');
  });

  it('when percentages are shown, then one decimal', () => {
    expect(formatPct(62.5)).toBe('62.5 %');
    expect(formatPct(17.67766952966369)).toBe('17.7 %');
    expect(formatPct(undefined)).toBe('—');
  });

  it('when a time is shown, then local date and minutes with its age; none reads "never"', () => {
    const now = new Date('2026-11-22T12:00:00Z');
    expect(formatTime('2026-11-22T09:00:00Z', now)).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2} \(3 h ago\)$/);
    expect(formatTime(null, now)).toBe('never');
    expect(formatAge(30_000)).toBe('just now');
    expect(formatAge(5 * 60_000)).toBe('5 min ago');
    expect(formatAge(3 * 86_400_000)).toBe('3 days ago');
  });

  it('when a device reports usage, then its percent used is used/(used+avail); without usage, null', () => {
    expect(devicePctUsed(1e12, 3e12)).toBe(25);
    expect(devicePctUsed(null, 3e12)).toBeNull();
    expect(devicePctUsed(0, 0)).toBeNull();
  });
});
