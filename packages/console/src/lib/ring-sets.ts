/**
 * Which ring set of capacity/list/ a device belongs to. The API names a ring set by its policy
 * names in policy-index order joined with ','; a device lists its policies in whatever order its
 * report gave (and may repeat one). The console has no policy indexes of its own, but every ring
 * set name already carries that order, so a device is matched to the ring set made of the same
 * names, whatever their order.
 */

/** The same key for the same set of names, in any order and with repeats. */
const setKey = (names: readonly string[]): string => [...new Set(names)].sort().join('\u0000');

/**
 * A function from a device's policy names to the `ring_set` of `ringSets` holding exactly those
 * policies. A set no name splits into (a newer report, or a policy name containing ',') falls back
 * to the names joined in the device's order: still the API's name when that order is index order.
 */
export function ringSetMatcher(ringSets: readonly string[]): (policies: readonly string[]) => string {
  const byKey = new Map<string, string>();
  for (const name of ringSets) byKey.set(setKey(name.split(',')), name);
  return (policies) => byKey.get(setKey(policies)) ?? policies.join(',');
}
