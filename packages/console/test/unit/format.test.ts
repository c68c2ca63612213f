import {
  bytesTitle,
  devicePctUsed,
  formatAge,
  formatBytes,
  formatDecimalBytes,
  formatPct,
  formatSecond,
  formatTb,
  formatTime,
  tbTitle,
} from '../../src/lib/format';

describe('display formatting', () => {
  it('when bytes are shown, then binary units everywhere (exact when whole, else two decimals), decimal in the tooltip', () => {
    expect(formatBytes(0)).toBe('0 bytes');
    expect(formatBytes(999)).toBe('999 bytes');
    expect(formatBytes(1536)).toBe('1.50 KiB');
    expect(formatBytes(2 ** 40)).toBe('1 TiB');
    expect(formatBytes(4e12)).toBe('3.64 TiB');
    expect(formatBytes('9223372036854775807')).toBe('8.00 EiB');
    // An average is a float: whole bytes, never a fraction of one.
    expect(formatBytes(1023.6)).toBe('1 KiB');
    expect(formatBytes(null)).toBe('—');
    expect(formatBytes(Number.NaN)).toBe('—');
    expect(formatDecimalBytes(1.5e9)).toBe('1.50 GB');
    expect(bytesTitle(1.5e9)).toBe('1,500,000,000 bytes (1.50 GB)');
    expect(bytesTitle(undefined)).toBeUndefined();
  });

  it('when TB figures of the capacity API are shown, then in the same binary units, the TB in the tooltip', () => {
    expect(formatTb(1.5)).toBe('1.36 TiB');
    expect(formatTb(0)).toBe('0 bytes');
    expect(formatTb(0.0005)).toBe('476.84 MiB');
    expect(formatTb(Number.NaN)).toBe('—');
    expect(tbTitle(1.5)).toBe('1.5 TB (1,500,000,000,000 bytes)');
  });

  it('when an audit time is shown, then to the second, with its age apart', () => {
    const t = formatSecond('2026-11-22T09:00:07Z', new Date('2026-11-22T12:00:08Z'));
    expect(t.when).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:07$/);
    expect(t.age).toBe('3 h ago');
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
