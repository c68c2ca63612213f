/**
 * Sets `key` in `map` as its newest entry, first letting the oldest go when the map holds `max`:
 * a process's memo of what it saw (a remembered check, a parsed file) stays bounded whatever the
 * load. A Map iterates in insertion order, so its first key is the one set longest ago.
 */
export function setBounded<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  // Re-set, an entry counts as new: it is the one most recently used.
  map.delete(key);
  if (map.size >= max) map.delete(map.keys().next().value as K);
  map.set(key, value);
}
