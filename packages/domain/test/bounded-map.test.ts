import { setBounded } from '../src/bounded-map';

describe('setBounded', () => {
  it('when the map is full, then the entry set longest ago goes and the new one stays', () => {
    const map = new Map<string, number>();
    for (const [i, key] of ['a', 'b', 'c'].entries()) setBounded(map, key, i, 3);
    setBounded(map, 'd', 3, 3);
    expect([...map.keys()]).toEqual(['b', 'c', 'd']);
  });

  it('when a key is set again, then it counts as the newest and nothing else goes', () => {
    const map = new Map<string, number>();
    for (const [i, key] of ['a', 'b', 'c'].entries()) setBounded(map, key, i, 3);
    setBounded(map, 'a', 9, 3);
    expect([...map.entries()]).toEqual([
      ['b', 1],
      ['c', 2],
      ['a', 9],
    ]);
    setBounded(map, 'd', 3, 3);
    expect([...map.keys()]).toEqual(['c', 'a', 'd']);
  });
});
