import fc from 'fast-check';
import { prefixSuccessor } from '../../src/repositories/list-planner';

/**
 * A name prefix is sent to Postgres as the range [prefix, prefixSuccessor(prefix)) of a column that
 * compares byte by byte (COLLATE "C"), so the range must hold exactly the names that start with
 * the prefix, compared as Postgres compares them: by their UTF-8 bytes.
 */
const bytewise = (a: string, b: string): number => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
const inRange = (name: string, prefix: string, next: string | null): boolean =>
  bytewise(name, prefix) >= 0 && (next === null || bytewise(name, next) < 0);

// Around the edges of the code point space, where the successor carries or skips the surrogates.
const edgy = fc.constantFrom(
  'a',
  'z',
  '~',
  '\u007f',
  '\u00ff',
  '\ud7ff',
  '\ue000',
  '\uffff',
  '\u{10000}',
  '\u{10ffff}',
);
const text = fc
  .array(fc.oneof(fc.string({ unit: 'grapheme', maxLength: 2 }), edgy), { maxLength: 4 })
  .map((parts) => parts.join(''));

describe('prefixSuccessor', () => {
  it('when the prefix ends below the last code point, then its last code point goes up by one, past the surrogates', () => {
    expect(prefixSuccessor('user0')).toBe('user1');
    expect(prefixSuccessor('al~')).toBe('al\u007f');
    expect(prefixSuccessor('x\ud7ff')).toBe('x\ue000');
    expect(prefixSuccessor('x\u{1f600}')).toBe('x\u{1f601}');
  });

  it('when the prefix ends in U+10FFFF, then that is dropped and the one before goes up; a prefix of nothing else has none', () => {
    expect(prefixSuccessor('a\u{10ffff}\u{10ffff}')).toBe('b');
    expect(prefixSuccessor('\u{10ffff}')).toBeNull();
  });

  it('when names and prefixes are random, then a name lies in the range exactly when it starts with the prefix', () => {
    fc.assert(
      fc.property(
        text.filter((p) => p.length > 0),
        text,
        text,
        (prefix, before, after) => {
          const next = prefixSuccessor(prefix);
          for (const name of [prefix + after, before, before + after, prefix.slice(0, -1) + after])
            expect({ name, in: inRange(name, prefix, next) }).toEqual({ name, in: name.startsWith(prefix) });
        },
      ),
      { numRuns: 2000 },
    );
  });
});
