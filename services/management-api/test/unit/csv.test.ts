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

describe('CSV fields that a spreadsheet would run as formulas', () => {
  it('when a text cell starts with =, +, -, @, a tab or a carriage return, then it is quoted behind a single quote', () => {
    const link = '=HYPERLINK(CONCAT("http",CHAR(58),"//evil.example"),"Open invoice")';
    expect(csvField(link)).toBe(`"'=HYPERLINK(CONCAT(""http"",CHAR(58),""//evil.example""),""Open invoice"")"`);
    expect(csvField('+1+2')).toBe(`"'+1+2"`);
    expect(csvField('-2+3')).toBe(`"'-2+3"`);
    expect(csvField('@SUM(A1)')).toBe(`"'@SUM(A1)"`);
    expect(csvField('\t=1')).toBe(`"'\t=1"`);
    expect(csvField('\r=1')).toBe(`"'\r=1"`);
    expect(csvLine(['=1', 'AUTH_=1'])).toBe(`"'=1",AUTH_=1\r\n`);
  });

  it('when a cell is a number, negative ones included, then it stays a bare number', () => {
    expect(csvLine([-5, -0.25, 7, 10n, -10n])).toBe('-5,-0.25,7,10,-10\r\n');
  });
});
