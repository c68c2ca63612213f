import { expiryFromLocalInput, formatExpiry, isExpired } from '../../src/lib/expiry';

describe('credential expiry display', () => {
  const now = new Date('2026-11-22T12:00:00Z');

  it('when a credential never expires, then it is not expired and reads "never"', () => {
    expect(isExpired(null, now)).toBe(false);
    expect(formatExpiry(null, now)).toBe('never');
  });

  it('when the expiry is ahead, then it is not expired and reads the time with how long is left', () => {
    expect(isExpired('2026-11-25T12:00:00Z', now)).toBe(false);
    expect(formatExpiry('2026-11-25T12:00:00Z', now)).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2} \(in 3 days\)$/);
    expect(formatExpiry('2026-11-22T15:00:00Z', now)).toMatch(/\(in 3 h\)$/);
    expect(formatExpiry('2026-11-22T12:00:30Z', now)).toMatch(/\(in under a minute\)$/);
  });

  it('when the expiry has passed or is now, then it is expired and reads how long ago', () => {
    expect(isExpired('2026-11-22T12:00:00Z', now)).toBe(true);
    expect(isExpired('2026-11-22T09:00:00Z', now)).toBe(true);
    expect(formatExpiry('2026-11-22T09:00:00Z', now)).toMatch(/\(3 h ago\)$/);
  });

  it('when a local date-time is entered, then it becomes ISO 8601 UTC; empty is null, anything else undefined', () => {
    const iso = expiryFromLocalInput('2027-01-31T10:00');
    expect(iso).toBe(new Date(2027, 0, 31, 10, 0).toISOString());
    expect(expiryFromLocalInput('')).toBeNull();
    expect(expiryFromLocalInput('tomorrow')).toBeUndefined();
    expect(expiryFromLocalInput('2027-13-45T99:99')).toBeUndefined();
  });
});
