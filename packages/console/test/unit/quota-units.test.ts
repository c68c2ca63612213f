import fc from 'fast-check';
import { QUOTA_MAX, exactCount, parseBytes, parseCount, pctOfQuota, quotaBody, ratio } from '../../src/lib/quota-units';
import { formatBytes } from '../../src/lib/format';

describe('quota units', () => {
  it('when a size is typed with a binary or decimal unit, then it is the exact byte count', () => {
    expect(parseBytes('10 GiB')).toEqual({ ok: true, value: '10737418240' });
    expect(parseBytes('500gb')).toEqual({ ok: true, value: '500000000000' });
    expect(parseBytes('1.5 TiB')).toEqual({ ok: true, value: '1649267441664' });
    expect(parseBytes('1,073,741,824')).toEqual({ ok: true, value: '1073741824' });
    expect(parseBytes('2048 bytes')).toEqual({ ok: true, value: '2048' });
    expect(parseBytes('0')).toEqual({ ok: true, value: '0' });
    // The picker's unit applies when the text names none; a unit typed wins.
    expect(parseBytes('3', 'MiB')).toEqual({ ok: true, value: '3145728' });
    expect(parseBytes('3 KB', 'MiB')).toEqual({ ok: true, value: '3000' });
    // 8 EiB is past 2^63 − 1 by one byte; 8 EiB − 1 byte is exactly the largest quota.
    expect(parseBytes('9223372036854775807')).toEqual({ ok: true, value: QUOTA_MAX.toString() });
  });

  it('when a size is not one, then a sentence says why', () => {
    expect(parseBytes('ten GiB')).toMatchObject({ ok: false, error: expect.stringMatching(/is not a size/) });
    expect(parseBytes('10 GiBs')).toMatchObject({ ok: false, error: expect.stringMatching(/not a unit of size/) });
    expect(parseBytes('0.5 bytes')).toMatchObject({ ok: false, error: '0.5 bytes is not a whole number of bytes.' });
    expect(parseBytes('8 EiB')).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^A quota must be from 0 to 9,223,372,036,854,775,807/),
    });
    expect(parseBytes('-1 GiB').ok).toBe(false);
    expect(parseCount('1.5').ok).toBe(false);
    expect(parseCount('1,000')).toEqual({ ok: true, value: '1000' });
  });

  it('when any byte count is formatted and typed back in bytes, then it is the same number', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: QUOTA_MAX }), (n) => {
        expect(parseBytes(exactCount(n.toString()))).toEqual({ ok: true, value: n.toString() });
        // An exact binary unit reads back exactly too.
        const shown = formatBytes(n.toString());
        if (!shown.includes('.')) expect(parseBytes(shown)).toEqual({ ok: true, value: n.toString() });
      }),
    );
  });

  it('when quotas are shown, then in the largest binary unit that divides them, else to two decimals', () => {
    expect(formatBytes(10737418240)).toBe('10 GiB');
    expect(formatBytes('1610612736')).toBe('1.50 GiB');
    expect(formatBytes(1)).toBe('1 byte');
    expect(formatBytes(1000)).toBe('1000 bytes');
    expect(formatBytes('9223372036854775807')).toBe('8.00 EiB');
  });

  it('when a value is sent, then a number while it is exact, the decimal string beyond 2^53', () => {
    expect(quotaBody('10737418240')).toBe(10737418240);
    expect(quotaBody('9007199254740993')).toBe('9007199254740993');
  });

  it('when usage is read against a quota, then the percentage, over 100 past it, and none without a quota', () => {
    expect(pctOfQuota(2500, 10000)).toBe(25);
    expect(pctOfQuota(3, 2)).toBe(150);
    expect(pctOfQuota(5, null)).toBeNull();
    expect(pctOfQuota(0, 0)).toBeNull();
    expect(pctOfQuota(1, 0)).toBe(Infinity);
    expect(pctOfQuota('9223372036854775807', '9223372036854775807')).toBe(100);
    expect(ratio('14000000000000', 1e13)).toBeCloseTo(1.4);
    expect(ratio(1, 0)).toBeNull();
  });
});
