import { ringSetMatcher } from '../../src/lib/ring-sets';

describe('a device matched to its ring set', () => {
  const ringSetOf = ringSetMatcher(['gold', 'gold,silver', 'bronze,gold,silver', 'silver']);

  it('when a device lists its policies out of policy-index order, then it joins the ring set the API names in index order', () => {
    expect(ringSetOf(['silver', 'gold'])).toBe('gold,silver');
    expect(ringSetOf(['silver', 'gold', 'bronze'])).toBe('bronze,gold,silver');
    expect(ringSetOf(['gold', 'bronze', 'silver'])).toBe('bronze,gold,silver');
  });

  it('when a device lists its policies in index order or repeats one, then it joins the same ring set', () => {
    expect(ringSetOf(['gold', 'silver'])).toBe('gold,silver');
    expect(ringSetOf(['silver', 'gold', 'silver'])).toBe('gold,silver');
    expect(ringSetOf(['gold'])).toBe('gold');
  });

  it('when no ring set has exactly those policies, then the device belongs to none of them', () => {
    expect(ringSetOf(['gold', 'bronze'])).toBe('gold,bronze');
    expect(['gold', 'gold,silver', 'bronze,gold,silver', 'silver']).not.toContain(ringSetOf(['gold', 'bronze']));
    expect(ringSetMatcher([])(['gold'])).toBe('gold');
  });
});
