import { endianness } from 'node:os';
import { RingProblem } from './ring-header';
import type { Ring } from './ring-types';

const HOST_ORDER = endianness() === 'LE' ? 'little' : 'big';

export interface Assignments {
  rows: Uint16Array[];
  replicas: number;
}

/**
 * Reads the `replica2part2dev` rows that follow the JSON header: `replicaCount` rows of 2^partPower
 * unsigned 16-bit device ids in the ring's byte order, the last row shorter when the replica count is
 * fractional. The byte count must fit exactly, and every id must name a device of the ring.
 * Problems are thrown as `RingProblem` reasons (the caller adds the file name).
 */
export function readAssignments(rowBytes: Buffer, ring: Ring, slots: number): Assignments {
  const parts = 2 ** ring.partPower;
  const fullRow = 2 * parts;
  const rowCount = ring.replicaCount;
  const size = rowBytes.length;
  if (rowCount === 0) {
    if (size !== 0) throw new RingProblem(`${size} bytes of assignments, but replica_count is 0`);
    return { rows: [], replicas: 0 };
  }
  const minSize = (rowCount - 1) * fullRow + 2;
  const maxSize = rowCount * fullRow;
  if (size < minSize) {
    throw new RingProblem(
      `assignments truncated: replica_count ${rowCount} with ${parts} partitions needs ${minSize}..${maxSize} bytes, found ${size}`,
    );
  }
  if (size > maxSize) {
    throw new RingProblem(
      `${size - maxSize} unexpected bytes after the last assignment row (expected at most ${maxSize})`,
    );
  }
  if (size % 2 !== 0) throw new RingProblem(`assignments truncated: ${size} bytes ends inside a 16-bit device id`);

  // Copy into an aligned buffer (the rows start at an arbitrary offset), fix the byte order, then
  // hand out one view per row.
  const bytes = new Uint8Array(size);
  bytes.set(rowBytes);
  if (ring.byteorder !== HOST_ORDER) Buffer.from(bytes.buffer, 0, size).swap16();
  const all = new Uint16Array(bytes.buffer, 0, size / 2);

  const known = new Uint8Array(0x10000);
  for (const dev of ring.devices) known[dev.id] = 1;
  for (let i = 0; i < all.length; i++) {
    if (known[all[i] as number] === 0) {
      const id = all[i] as number;
      const what = id < slots ? 'a removed device (a hole in devs)' : `beyond devs (${slots} entries)`;
      throw new RingProblem(
        `assignment row ${Math.floor(i / parts)}, partition ${i % parts} refers to device id ${id}, ${what}`,
      );
    }
  }

  const rows: Uint16Array[] = [];
  for (let start = 0; start < all.length; start += parts)
    rows.push(all.subarray(start, Math.min(start + parts, all.length)));
  const last = rows[rows.length - 1] as Uint16Array;
  return { rows, replicas: rowCount - 1 + last.length / parts };
}
