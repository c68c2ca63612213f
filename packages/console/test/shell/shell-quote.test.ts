import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { connectionLines, shellQuote } from '../../src/lib/connect';

/**
 * What a real POSIX shell makes of `printf '%s\0' <word> <word> …`: each word's value, as the shell
 * read it. Words are read in batches, so that a few shells read the hundreds of random words.
 */
const shellValues = (words: string[]): string[] =>
  execFileSync('/bin/sh', ['-c', `printf '%s\\0' ${words.join(' ')}`], { encoding: 'utf8' })
    .split('\0')
    .slice(0, -1);

/** The console's command lines as a real /bin/sh reads them (Node here, for child_process). */
describe('shell quoting through a real /bin/sh', () => {
  it('when /bin/sh reads a quoted random string, then it gets back exactly that string, shell metacharacters, newlines and any unicode included', () => {
    // NUL is left out: no shell word, and no Postgres text, can hold it.
    const nasty = fc.constantFrom(
      "'",
      '"',
      '\\',
      '$',
      '`',
      '(',
      ')',
      ';',
      '&',
      '|',
      '<',
      '>',
      '*',
      '?',
      '[',
      ']',
      '{',
      '}',
      '~',
      '#',
      '!',
      ' ',
      '\t',
      '\n',
      '\r',
      '%',
      '-',
    );
    const text = fc
      .array(fc.oneof(nasty, fc.string({ unit: 'grapheme', maxLength: 3 })), { maxLength: 24 })
      .map((parts) => parts.join(''))
      .filter((s) => !s.includes('\0'));
    // 300 strings, 30 to a shell; in a failing batch, shrinking empties the strings that pass.
    fc.assert(
      fc.property(fc.array(text, { minLength: 30, maxLength: 30 }), (strings) => {
        expect(shellValues(strings.map(shellQuote))).toEqual(strings);
      }),
      { numRuns: 10 },
    );
    const fixed = ['$(id)', '`id`', "'; id; '", "a'b'c", '\\', '\n$(id)\n', '-n', ''];
    expect(shellValues(fixed.map(shellQuote))).toEqual(fixed);
  });

  it("when a cluster's auth URL holds shell syntax, then the swift lines carry it as plain text and the shell runs nothing", () => {
    const l = connectionLines('https://auth.example.com/auth$(id)', "o'brien");
    expect(l.swiftV1).toBe(`swift -A 'https://auth.example.com/auth$(id)/v1.0' -U 'o'\\''brien' -K '<password>' stat`);
    // The words the shell hands to swift, read back through a real shell.
    const words = (line: string) =>
      execFileSync('/bin/sh', ['-c', `printf '%s\\n' ${line.replace(/^swift /, '')}`], { encoding: 'utf8' })
        .split('\n')
        .slice(0, -1);
    expect(words(l.swiftV1)).toEqual([
      '-A',
      'https://auth.example.com/auth$(id)/v1.0',
      '-U',
      "o'brien",
      '-K',
      '<password>',
      'stat',
    ]);
    expect(words(l.swiftV3)).toContain('https://auth.example.com/auth$(id)/v3');
  });
});
