import type { Device } from '../api';

/** The sorting of the capacity page's device table. */

export interface DeviceRow extends Device {
  /** The capacity/list/ ring set the device belongs to. */
  ringSet: string;
  /** Used / (used + free) × 100; null when the device reports no usage or no space. */
  pct: number | null;
}

export type DeviceSortKey = 'node' | 'device' | 'ringSet' | 'size' | 'used_bytes' | 'avail_bytes' | 'pct';

/** Used + free, the device's raw capacity; null when it reports no usage. */
export const rawBytes = (d: DeviceRow): number | null =>
  d.used_bytes === null || d.avail_bytes === null ? null : d.used_bytes + d.avail_bytes;

/** Size column: the reported size, else the raw capacity. */
const value = (d: DeviceRow, k: DeviceSortKey): string | number | null =>
  k === 'size' ? (d.size_bytes ?? rawBytes(d)) : d[k];

/**
 * Compares for a sort: numbers as numbers, text in natural order (sdb2 before sdb10); devices that
 * report nothing for the column sort last in either direction, since they are never the answer to
 * "which is fullest" nor to "which is emptiest".
 */
export function compareDevices(a: DeviceRow, b: DeviceRow, key: DeviceSortKey, desc: boolean): number {
  const x = value(a, key);
  const y = value(b, key);
  if (x === null || y === null) return x === y ? 0 : x === null ? 1 : -1;
  const c =
    typeof x === 'number' && typeof y === 'number'
      ? x - y
      : String(x).localeCompare(String(y), undefined, { numeric: true });
  return desc ? -c : c;
}

/** A header click: the same column flips direction; a new one starts largest first for numbers, A–Z for text. */
export function nextSort(
  current: { key: DeviceSortKey; desc: boolean },
  key: DeviceSortKey,
  numeric: boolean,
): { key: DeviceSortKey; desc: boolean } {
  return { key, desc: current.key === key ? !current.desc : numeric };
}
