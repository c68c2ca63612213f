import { errors } from './errors';
import { escapeHtml } from './escape';

/**
 * Raw disk capacity per ring set (design.md, "Capacity").
 *
 * A device belongs to the storage policies whose object rings list it; its ring set is that set of
 * policies, printed as the policy names sorted by policy index and joined with ','. Per device
 * `used` is bytes in use, `free` bytes available to unprivileged users, and `raw = used + free`
 * (root-reserved space is not raw capacity). Per ring set: byte totals in TB (10^12 bytes), the
 * used share of the totals, and statistics over the devices' own `used / raw × 100`.
 *
 * Decisions where the spec is silent:
 * - A device that reports no usage (`usedBytes` and `freeBytes` both null, e.g. unmounted) enters
 *   neither the totals nor the statistics; its ring set still gets an element (zero totals, empty
 *   statistics).
 * - A reporting device whose raw is 0 (used 0 and free 0) adds 0 to the totals but has no defined
 *   percentage, so it is left out of the statistics: `count` is the number of reporting devices
 *   with raw > 0.
 * - Only one of `usedBytes`/`freeBytes` null, or a byte count that is not a non-negative safe
 *   integer, is INVALID_INPUT, as is a policy index that is not in `policies`, and a policy list
 *   that repeats an index or a name (the ring set would be ill-defined).
 * - Byte totals are summed exactly in integer bytes (spilling into a bigint whenever a running sum
 *   would pass 2^53 − 1: 100,000 devices of 20 TB make 2·10^18 bytes, far above 2^53 ≈ 9·10^15),
 *   and turned into TB once at the end, correctly rounded.
 * - Policy names are printed as they are. Names containing ',' could make two ring sets print
 *   alike; elements are still one per distinct set of policies, ordered by the printed name and
 *   then by the policies' index order, so the output is deterministic either way.
 */

export interface CapacityPolicy {
  index: number;
  name: string;
}

export interface CapacityDevice {
  /** Policy indexes whose object rings list this device (any order, may repeat). */
  policyIndexes: readonly number[];
  /** Bytes in use and bytes free for unprivileged users; null when the device reports no usage. */
  usedBytes: number | null;
  freeBytes: number | null;
}

export interface PctUsedStats {
  count: number;
  min: number | null;
  max: number | null;
  avg: number | null;
  stddev: number | null;
  pct_95: number | null;
}

export interface CapacityElement {
  /** Policy names sorted by policy index, joined with ','. */
  ring_set: string;
  total_raw_tb: number;
  total_used_tb: number;
  total_free_tb: number;
  /** Null when the total raw is 0. */
  total_used_pct: number | null;
  /** Count 0 and nulls when no device of the set reports a usage with raw > 0. */
  pct_used_stats: PctUsedStats;
}

const BYTES_PER_TB = 1e12;
const BIG_BYTES_PER_TB = 1_000_000_000_000n;
const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/** The policies sorted by index, and each index's position in that order. */
interface PolicyTable {
  names: string[];
  positionOf: Map<number, number>;
}

function policyTable(policies: readonly CapacityPolicy[]): PolicyTable {
  const sorted = [...policies].sort((a, b) => a.index - b.index);
  const positionOf = new Map<number, number>();
  const seenNames = new Set<string>();
  const names: string[] = [];
  sorted.forEach((p, position) => {
    if (!Number.isSafeInteger(p.index) || p.index < 0) {
      throw errors.invalidInput(`Storage policy index ${String(p.index)} is not a non-negative integer.`, {
        policyIndex: p.index,
      });
    }
    if (positionOf.has(p.index))
      throw errors.invalidInput(`Storage policy index ${p.index} appears twice.`, { policyIndex: p.index });
    if (seenNames.has(p.name))
      throw errors.invalidInput(`Storage policy name '${escapeHtml(p.name)}' appears twice.`, { policyName: p.name });
    positionOf.set(p.index, position);
    seenNames.add(p.name);
    names.push(p.name);
  });
  return { names, positionOf };
}

function unknownPolicy(policyIndex: number, device?: number): never {
  const where = device === undefined ? '' : ` (devices[${device}])`;
  throw errors.invalidInput(
    `Policy index ${String(policyIndex)} is not a known storage policy${where}.`,
    device === undefined ? { policyIndex } : { policyIndex, device },
  );
}

/** Sorted, distinct policy positions of `indexes`; throws INVALID_INPUT for an unknown index. */
function positionsOf(table: PolicyTable, indexes: readonly number[], device?: number): number[] {
  const positions: number[] = [];
  for (const index of indexes) {
    const position = table.positionOf.get(index);
    if (position === undefined) unknownPolicy(index, device);
    positions.push(position);
  }
  positions.sort((a, b) => a - b);
  return positions.filter((p, i) => i === 0 || p !== positions[i - 1]);
}

const nameOf = (table: PolicyTable, positions: readonly number[]): string =>
  positions.map((p) => table.names[p]).join(',');

/** The printed name of the ring set made of the policies `indexes` (any order, repeats allowed); '' for none. */
export function ringSetName(policies: readonly CapacityPolicy[], indexes: readonly number[]): string {
  const table = policyTable(policies);
  return nameOf(table, positionsOf(table, indexes));
}

/** Accumulates one ring set. Byte sums are exact: `small` stays a safe integer, overflow goes to `big`. */
interface Group {
  /** Bit p of word p >>> 5 is set for each policy position p in the set. */
  mask: Int32Array;
  positions: number[];
  usedSmall: number;
  usedBig: bigint;
  freeSmall: number;
  freeBig: bigint;
  pcts: number[];
}

/**
 * Finds a device's ring set without allocating per device. A set is a bit mask of policy positions:
 * one int32 word when there are at most 32 policies (the word is the Map key), else several words
 * hashed (FNV-1a) into buckets and compared word by word.
 */
class RingSets {
  readonly groups: Group[] = [];
  private readonly words: number;
  private readonly scratch: Int32Array;
  private readonly byWord = new Map<number, Group>();
  private readonly byHash = new Map<number, Group[]>();

  constructor(private readonly table: PolicyTable) {
    this.words = Math.max(1, Math.ceil(table.names.length / 32));
    this.scratch = new Int32Array(this.words);
  }

  /** The ring set of a device in at least one policy; throws INVALID_INPUT for an unknown index. */
  groupOf(indexes: readonly number[], device: number): Group {
    const positionOf = this.table.positionOf;
    if (this.words === 1) {
      let word = 0;
      for (let i = 0; i < indexes.length; i++) {
        const index = indexes[i] as number;
        const position = positionOf.get(index);
        if (position === undefined) unknownPolicy(index, device);
        word |= 1 << position;
      }
      let g = this.byWord.get(word);
      if (g === undefined) {
        g = this.add(Int32Array.of(word));
        this.byWord.set(word, g);
      }
      return g;
    }
    const mask = this.scratch;
    mask.fill(0);
    for (let i = 0; i < indexes.length; i++) {
      const index = indexes[i] as number;
      const position = positionOf.get(index);
      if (position === undefined) unknownPolicy(index, device);
      mask[position >>> 5] = (mask[position >>> 5] as number) | (1 << (position & 31));
    }
    let hash = 0x811c9dc5;
    for (let w = 0; w < mask.length; w++) hash = Math.imul(hash ^ (mask[w] as number), 0x01000193);
    const bucket = this.byHash.get(hash);
    if (bucket !== undefined) {
      for (const g of bucket) if (sameWords(g.mask, mask)) return g;
    }
    const g = this.add(mask.slice());
    if (bucket === undefined) this.byHash.set(hash, [g]);
    else bucket.push(g);
    return g;
  }

  private add(mask: Int32Array): Group {
    const positions: number[] = [];
    for (let p = 0; p < this.table.names.length; p++)
      if (((mask[p >>> 5] as number) & (1 << (p & 31))) !== 0) positions.push(p);
    const g: Group = { mask, positions, usedSmall: 0, usedBig: 0n, freeSmall: 0, freeBig: 0n, pcts: [] };
    this.groups.push(g);
    return g;
  }
}

function sameWords(a: Int32Array, b: Int32Array): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

const isByteCount = (n: unknown): n is number => Number.isSafeInteger(n) && (n as number) >= 0;

/** Bytes to TB, correctly rounded (one rounding of the exact quotient). */
function toTb(bytes: bigint): number {
  if (bytes <= BigInt(MAX_SAFE)) return Number(bytes) / BYTES_PER_TB; // both operands exact: IEEE division rounds once
  // Past 2^53 the byte count itself is not a double: parse the exact decimal quotient instead.
  const fraction = (bytes % BIG_BYTES_PER_TB).toString().padStart(12, '0');
  return Number(`${bytes / BIG_BYTES_PER_TB}.${fraction}`);
}

/** Statistics over one ring set's percentages (all finite, in [0, 100]). */
function stats(values: number[]): PctUsedStats {
  const n = values.length;
  if (n === 0) return { count: 0, min: null, max: null, avg: null, stddev: null, pct_95: null };
  const sorted = Float64Array.from(values).sort(); // typed-array sort is numeric
  const min = sorted[0] as number;
  const max = sorted[n - 1] as number;
  // Nearest rank ⌈0.95·n⌉, in integer arithmetic (19n is exact for any realistic n).
  const pct95 = sorted[Math.ceil((19 * n) / 20) - 1] as number;
  // Shifted, corrected two-pass (Chan, Golub & LeVeque): subtracting the median first keeps the
  // deviations accurate (exact for values within a factor 2 of it) even when the values differ
  // only far below their magnitude, where Welford's running mean loses them; the residue term
  // removes the rounding of the mean; equal values give avg = that value and stddev exactly 0.
  const pivot = sorted[n >> 1] as number;
  let sum = 0;
  let carry = 0; // Neumaier-compensated sum of the deviations from the pivot
  for (let i = 0; i < n; i++) {
    const d = (sorted[i] as number) - pivot;
    const t = sum + d;
    carry += Math.abs(sum) >= Math.abs(d) ? sum - t + d : d - t + sum;
    sum = t;
  }
  const shift = (sum + carry) / n;
  let squares = 0;
  let residue = 0;
  for (let i = 0; i < n; i++) {
    const d = (sorted[i] as number) - pivot - shift;
    squares += d * d;
    residue += d;
  }
  const avg = Math.min(max, Math.max(min, pivot + shift)); // guard the last ulp: min ≤ avg ≤ max always
  const stddev = n === 1 ? 0 : Math.sqrt(Math.max(0, squares - (residue * residue) / n) / (n - 1));
  return { count: n, min, max, avg, stddev, pct_95: pct95 };
}

/**
 * One element per distinct non-empty ring set, sorted by `ring_set` (JS string order). Devices in
 * no policy are left out. A policy index not in `policies` is INVALID_INPUT.
 */
export function computeCapacity(
  policies: readonly CapacityPolicy[],
  devices: Iterable<CapacityDevice>,
): CapacityElement[] {
  const table = policyTable(policies);
  const ringSets = new RingSets(table);
  let deviceNo = -1;

  for (const d of devices) {
    deviceNo++;
    const used = d.usedBytes;
    const free = d.freeBytes;
    // `undefined` from an untyped caller counts as null.
    const reports = used != null || free != null;
    if (reports && !(isByteCount(used) && isByteCount(free))) {
      throw errors.invalidInput(
        `devices[${deviceNo}]: usedBytes and freeBytes must both be null or both be non-negative integers up to 2^53 - 1 (got ${escapeHtml(String(used))} and ${escapeHtml(String(free))}).`,
        { device: deviceNo },
      );
    }

    if (d.policyIndexes.length === 0) continue;
    const g = ringSets.groupOf(d.policyIndexes, deviceNo);
    if (!reports) continue;

    const u = used as number;
    const f = free as number;
    if (g.usedSmall > MAX_SAFE - u) {
      g.usedBig += BigInt(g.usedSmall);
      g.usedSmall = 0;
    }
    g.usedSmall += u;
    if (g.freeSmall > MAX_SAFE - f) {
      g.freeBig += BigInt(g.freeSmall);
      g.freeSmall = 0;
    }
    g.freeSmall += f;
    const raw = u + f;
    if (raw > 0) g.pcts.push((u / raw) * 100);
  }

  const elements: { element: CapacityElement; positions: number[] }[] = [];
  for (const g of ringSets.groups) {
    const usedTotal = g.usedBig + BigInt(g.usedSmall);
    const freeTotal = g.freeBig + BigInt(g.freeSmall);
    const rawTotal = usedTotal + freeTotal;
    elements.push({
      positions: g.positions,
      element: {
        ring_set: nameOf(table, g.positions),
        total_raw_tb: toTb(rawTotal),
        total_used_tb: toTb(usedTotal),
        total_free_tb: toTb(freeTotal),
        total_used_pct: rawTotal === 0n ? null : (Number(usedTotal) / Number(rawTotal)) * 100,
        pct_used_stats: stats(g.pcts),
      },
    });
  }
  elements.sort(
    (a, b) => compareStrings(a.element.ring_set, b.element.ring_set) || comparePositions(a.positions, b.positions),
  );
  return elements.map((e) => e.element);
}

const compareStrings = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function comparePositions(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const d = (a[i] as number) - (b[i] as number);
    if (d !== 0) return d;
  }
  return a.length - b.length;
}
