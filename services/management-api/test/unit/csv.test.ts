import { csvField, csvLine } from '../../src/http/csv';

describe('CSV fields (RFC 4180)', () => {
  it('when a field holds a comma, a quote or a line break, then it is quoted with quotes doubled', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvField('cr\rhere')).toBe('"cr\rhere"');
  });

  it('when values are numbers, null or absent, then they are written bare or empty', () => {
    expect(csvLine([1, 2.5, null, undefined, 'x'])).toBe('1,2.5,,,x\r\n');
  });
});
