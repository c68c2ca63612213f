import { randomText } from '../src/tokens/random';

describe('pooled randomness', () => {
  it('when many ids are drawn across several refills of the pool, then every one has the asked size and none repeats', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 5000; i++) {
      const id = randomText(16, 'base64url');
      expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/);
      seen.add(id);
    }
    expect(seen.size).toBe(5000);
  });

  it('when odd sizes are drawn past the end of the pool, then each draw is whole (hex of 11 bytes is 22 digits)', () => {
    for (let i = 0; i < 1000; i++) expect(randomText(11, 'hex')).toMatch(/^[0-9a-f]{22}$/);
  });

  it('when the bytes drawn are counted, then their values are spread as a uniform source would spread them', () => {
    const counts = new Array<number>(256).fill(0);
    for (let i = 0; i < 4096; i++) for (const byte of Buffer.from(randomText(16, 'hex'), 'hex')) counts[byte]!++;
    // 65,536 bytes: 256 expected per value; a chi-square over 255 degrees of freedom above 400 has p < 1e-8.
    const chi = counts.reduce((sum, c) => sum + (c - 256) ** 2 / 256, 0);
    expect(chi).toBeLessThan(400);
  });

  it('when more than the pool holds is asked for at once, then it is refused', () => {
    expect(() => randomText(5000, 'hex')).toThrow(RangeError);
  });
});
